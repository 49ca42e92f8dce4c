export * from "./json.js";
export * from "./validate.js";
export * from "./openeqa.js";
export * from "./fetch.js";
export * from "./eqa-rm.js";
