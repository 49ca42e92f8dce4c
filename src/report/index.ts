export * from "./text.js";
