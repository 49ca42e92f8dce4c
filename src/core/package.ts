import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/** The project root: src/core and dist/core both sit two levels below it. */
export const packageRoot = join(dirname(fileURLToPath(import.meta.url)), "..", "..");

export const eqakitVersion: string = (() => {
  const manifest: unknown = JSON.parse(readFileSync(join(packageRoot, "package.json"), "utf8"));
  if (typeof manifest === "object" && manifest !== null && "version" in manifest && typeof manifest.version === "string") {
    return manifest.version;
  }
  return "unknown";
})();
