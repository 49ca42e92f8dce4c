import { dirname, resolve } from "node:path";
import { Command } from "commander";
import { writeFileAtomically } from "../core/index.js";
import { buildHtmlReport, loadRuns, reportDefaults } from "../report/index.js";
import { nonNegativeInteger, outputDirectory, outputFile } from "./options.js";

interface ReportFlags {
  out: string;
  title?: string;
  thumbnails: number;
  framesDir?: string;
}

export function reportCommand(): Command {
  return new Command("report")
    .description("one self-contained HTML report of one or more runs, side by side (charts, intervals, cost, failures, every question)")
    .argument("<run-dirs...>", "run folders of any eqa command that writes one (score, answer, run, explore, score-tag, answer-tag, rm score, rm bench, memory build, generate tag), or a folder holding run folders (eqa demo's)")
    .option("--out <file>", "the HTML file to write (missing folders are made)", outputFile, "report.html")
    .option("--title <text>", "the report's title")
    .option("--thumbnails <n>", "thumbnails of the frames used, per question and run (0 for none)", nonNegativeInteger, 4)
    .option("--frames-dir <dir>", "write the thumbnails as files into this folder (beside the report, kept with it) instead of embedding them; each frame is stored once either way", outputDirectory)
    .action(async (dirs: string[], flags: ReportFlags) => {
      const runs = await loadRuns(dirs);
      // an eqa demo folder reports as the demo's own report does: its title and recordings
      const { title, recordings } = reportDefaults(dirs);
      const { html, notes } = await buildHtmlReport(runs, { ...(flags.title ?? title ? { title: flags.title ?? title } : {}), thumbnails: flags.thumbnails, reportDir: dirname(resolve(flags.out)), ...(flags.framesDir ? { framesDir: resolve(flags.framesDir) } : {}), ...(recordings ? { recordings } : {}) });
      await writeFileAtomically(flags.out, html);
      for (const run of runs) for (const note of run.notes) console.log(`${run.label}: ${note}`);
      for (const note of notes) console.log(note);
      console.log(`wrote ${resolve(flags.out)} (${runs.length} run(s), ${(Buffer.byteLength(html) / 1024).toFixed(0)} KiB)`);
    });
}
