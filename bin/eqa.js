#!/usr/bin/env node
// The `eqa` command: runs the compiled CLI (npm install builds it).
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";

const entry = new URL("../dist/cli/main.js", import.meta.url);
if (!existsSync(fileURLToPath(entry))) {
  console.error("eqa: eqakit is not built yet: run `npm run build` in its folder (npm install does it).");
  process.exit(2);
}
await import(entry.href);
