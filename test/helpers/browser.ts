import { accessSync, constants } from "node:fs";
import { delimiter, join } from "node:path";
import { chromium, type Browser } from "playwright-core";

/** Headless, offline flags: no GPU, no sandbox (CI runs as root), no background traffic. */
const CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run"];
const SYSTEM_NAMES = ["chromium", "chromium-browser", "google-chrome", "google-chrome-stable"];

/** A system Chromium on PATH, when there is one. */
function systemChromium(): string | undefined {
  for (const dir of (process.env.PATH ?? "").split(delimiter)) {
    for (const name of SYSTEM_NAMES) {
      const candidate = join(dir, name);
      try {
        accessSync(candidate, constants.X_OK);
        return candidate;
      } catch {
        // not here
      }
    }
  }
  return undefined;
}

/**
 * The browser the report and viewer tests drive: a system Chromium when there is one, else the
 * headless Chromium that the dev dependency `@sparticuz/chromium` ships in its npm tarball
 * (unpacked into the temporary folder on first use; nothing is downloaded).
 */
export async function launchBrowser(): Promise<Browser> {
  let executablePath = systemChromium();
  if (executablePath === undefined) {
    const packaged = await import("@sparticuz/chromium");
    executablePath = await packaged.default.executablePath();
  }
  return chromium.launch({ executablePath, args: CHROMIUM_ARGS });
}
