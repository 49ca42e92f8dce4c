import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { accessSync, constants, existsSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { pathToFileURL } from "node:url";
import { promisify } from "node:util";
import { chromium, type Browser, type Page } from "playwright-core";
import { runCli } from "./cli.js";
import { madeOnce } from "./once.js";
import { projectRoot } from "./paths.js";

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
 * (unpacked once per machine by `packagedChromium`; nothing is downloaded).
 */
export async function launchBrowser(): Promise<Browser> {
  const executablePath = systemChromium() ?? (await packagedChromium());
  return chromium.launch({ executablePath, args: CHROMIUM_ARGS });
}

const PACKAGE = "@sparticuz/chromium";

/**
 * The packaged Chromium's binary, unpacked into `$TMPDIR/eqakit-chromium-<version>/`. The package
 * itself unpacks into `$TMPDIR` in place, so two test files that start it at once (as `npm test`
 * runs them) see each other's half-written binary and fail with ETXTBSY. Here it is unpacked once
 * per machine under a lock into a folder of its own, renamed into place (`madeOnce`); the other
 * processes wait for the binary.
 */
export async function packagedChromium(): Promise<string> {
  const version = (JSON.parse(readFileSync(join(projectRoot, "node_modules", PACKAGE, "package.json"), "utf8")) as { version: string }).version;
  const home = join(tmpdir(), `eqakit-chromium-${version}`);
  await madeOnce(home, unpackInto, (dir) => existsSync(join(dir, "chromium")));
  return join(home, "chromium");
}

/** Unpacks the package's Chromium, fonts and SwiftShader into `staging` (a child process whose TMPDIR is that folder: the package unpacks into its TMPDIR). */
async function unpackInto(staging: string): Promise<void> {
  const script = `const { default: chromium } = await import(${JSON.stringify(import.meta.resolve(PACKAGE))}); await chromium.executablePath();`;
  await promisify(execFile)(process.execPath, ["--input-type=module", "-e", script], { cwd: projectRoot, env: { ...process.env, TMPDIR: staging } });
}

/** The page's own sideways overflow, cells narrower than their words, and chart text smaller than 11 px, with every panel open. */
export async function layoutProblems(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    document.querySelectorAll("details").forEach((d) => (d.open = true));
    const problems: string[] = [];
    const root = document.documentElement;
    if (root.scrollWidth > root.clientWidth) problems.push(`the page is ${root.scrollWidth} px wide in a ${root.clientWidth} px window`);
    for (const cell of document.querySelectorAll<HTMLElement>("td, th")) {
      if (cell.offsetParent === null) continue;
      if (cell.scrollWidth > cell.clientWidth + 1) problems.push(`a cell overflows (${cell.scrollWidth} > ${cell.clientWidth}): ${(cell.textContent ?? "").slice(0, 60)}`);
    }
    for (const text of document.querySelectorAll<SVGTextElement>("svg text")) {
      const height = text.getBoundingClientRect().height;
      const size = parseFloat(getComputedStyle(text).fontSize);
      if (text.getBoundingClientRect().width > 0 && (size < 11 || height < 11)) problems.push(`chart text "${text.textContent}" is ${size} px (${height.toFixed(1)} px high)`);
    }
    return problems.slice(0, 8);
  });
}

/** Waits until the viewer has shown the page its address names. */
export async function shown(page: Page): Promise<void> {
  await page.waitForFunction(() => {
    const app = document.getElementById("app")!;
    return app.getAttribute("aria-busy") === "false" && app.getAttribute("data-shown") === location.hash;
  });
}

/**
 * `page.screenshot`, asked again once when Chromium could not capture the frame
 * (`Page.captureScreenshot: Unable to capture screenshot`, seen on a loaded machine): the
 * picture is of the page as it stands, so a second capture shows the same.
 */
export async function screenshot(page: Page, options: Parameters<Page["screenshot"]>[0]): Promise<void> {
  try {
    await page.screenshot(options);
  } catch (error) {
    if (!/Unable to capture screenshot/.test(String(error))) throw error;
    await page.screenshot(options);
  }
}

/**
 * `eqa report RUNS --out OUT` run in `cwd` (runs named from there, as a user in another folder
 * names them), checked to have read every file and found every input, and opened at `width` px.
 */
export async function openReport(browser: Browser, runs: string[], options: { out: string; cwd: string; env: NodeJS.ProcessEnv; width: number }): Promise<Page> {
  const cli = await runCli(["report", ...runs, "--out", options.out], options.env, options.cwd);
  assert.equal(cli.code, 0, cli.stderr);
  assert.doesNotMatch(cli.stdout, /unreadable|could not be read|not there any more/, "every file read, every input found");
  const page = await browser.newPage({ viewport: { width: options.width, height: 900 } });
  await page.goto(pathToFileURL(options.out).href);
  return page;
}
