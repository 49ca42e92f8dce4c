export * from "./json.js";
export * from "./validate.js";
export * from "./openeqa.js";
export * from "./fetch.js";
export * from "./eqa-rm.js";
export * from "./express-bench.js";
export * from "./hm-eqa.js";
