import { InvalidArgumentError } from "commander";
import { buildMixedSet, checkEnglishSet, rewriteMixedEpisodes, writeMixedSet, type MixedSetBuild, type MixedSetStats } from "../generate/index.js";
import { ledgerCost, readCallLedger, type ModelSpec } from "../models/index.js";
import { formatRunCost } from "../report/index.js";
import { openRun, RUN_KIND, type RunDirectory } from "../store/index.js";
import { nonNegativeInteger, nonNegativeIntegerRanges, outputDirectory, positiveInteger } from "./options.js";
import { type ModelCallFlags } from "./model-options.js";
import { defineRunCommand, wroteLine, type RunSession } from "./lifecycle.js";

interface GenerateMixedFlags extends ModelCallFlags {
  seeds: number[];
  out: string;
  days: number;
  changes: number;
  tasksPerDay: number;
  perCategory: number;
  seed: number;
  rewrite?: string;
  rewriteBaseUrl?: string;
}

/** Days of history a home may have: as many as "seven days ago" says. */
function dayCount(value: string): number {
  const n = positiveInteger(value);
  if (n > 7) throw new InvalidArgumentError("at most 7 days");
  return n;
}

/** `eqa generate mixed`: a Mixed EQA set from the built-in simulator. */
export function generateMixedCommand() {
  return defineRunCommand<GenerateMixedFlags, ModelSpec | undefined>({
    name: "mixed",
    path: "generate mixed",
    description: "generate a Mixed EQA set in the built-in simulator: days of household tasks, changes while the agent was away, questions about the past, the present and both, with exact answers",
    roles: [{ role: "rewrite", help: "a model that rewrites the template texts into varied English (as --renderer of eqa generate tag)", baseUrlHelp: "the rewriting model's endpoint" }],
    out: "own",
    options: (command, place) => {
      command
        .requiredOption("--seeds <list>", "the homes' seeds: numbers and ranges, e.g. 0-9 or 1,3,5-7", nonNegativeIntegerRanges)
        .requiredOption("--out <dir>", "the set's directory: episodes.json, stats.json, homes/", outputDirectory)
        .option("--days <n>", "days of household tasks recorded per home (1-7; multi_past questions need 2)", dayCount, 3)
        .option("--changes <n>", "changes per home while the agent was away (objects moved, taken away, brought in; things opened, closed, switched)", nonNegativeInteger, 6)
        .option("--tasks-per-day <n>", "household tasks recorded per day", positiveInteger, 2)
        .option("--per-category <n>", "questions per category per home, at most", positiveInteger, 8)
        .option("--seed <n>", "seed of the tasks, changes, start poses, questions and splits (the same seed gives the same set)", nonNegativeInteger, 0);
      place.role("rewrite");
    },
    // the rewriting model, checked before anything is written (none: the templates' texts stay)
    prepare: async (session) => session.optionalRole("rewrite"),
    run: (rewriter, session) => generateMixed(session, rewriter),
  });
}

async function generateMixed(session: RunSession<GenerateMixedFlags>, spec: ModelSpec | undefined): Promise<number> {
  const { flags } = session;
  const options = { seeds: flags.seeds, days: flags.days, changes: flags.changes, tasksPerDay: flags.tasksPerDay, perCategory: flags.perCategory, seed: flags.seed };
  // kind generate-mixed: these settings decide the set; a rerun with them reads back the recorded days and resumes the rewrites
  const run = await openRun({ dir: flags.out, kind: RUN_KIND["generate-mixed"], settings: { ...options, rewrite: flags.rewrite ?? "template" } });
  const build = await buildMixedSet(run.path, { ...options, onProgress: (message) => process.stderr.write(`${message}\n`) });
  await writeMixedSet(run, build);
  const failedRewrites = spec ? await rewriteSet(session, spec, run, build) : 0;
  for (const line of formatMixedStats(build.stats)) console.log(line);
  console.log(`${wroteLine(run.path, ["episodes.json", "stats.json"])} and ${run.path}/homes/ (each day's recording and end.json, changes.json, present.json)`);
  return failedRewrites > 0 ? 1 : 0;
}

/** The rewriting model's texts written over the templates' (a rerun resumes them); returns how many failed. */
async function rewriteSet(session: RunSession<GenerateMixedFlags>, spec: ModelSpec, run: RunDirectory, build: MixedSetBuild): Promise<number> {
  const opened = await session.runtime();
  opened.runtime.usage.attach(run.path);
  const progress = session.progress("rewriting");
  const summary = await rewriteMixedEpisodes(build.set.episodes, { model: opened.runtime.model(spec, { role: "rewriter" }), spec, run, concurrency: session.flags.concurrency, onProgress: (done, total) => progress.update(done, total, "") });
  progress.stop();
  build.stats.renderer = { name: spec.name, rewritten: summary.rewritten, keptTemplate: summary.keptTemplate, failed: summary.failed, prompts: summary.prompts };
  build.stats.english = checkEnglishSet(build.set.episodes.map((e) => ({ question: e.question, answer: e.answer, grounded: null })));
  await writeMixedSet(run, build);
  console.log(`${summary.rewritten} texts rewritten by ${spec.name}, ${summary.keptTemplate} kept their template text${summary.reused > 0 ? ` (${summary.reused} from an earlier run)` : ""}`);
  for (const f of summary.failures) process.stderr.write(`eqa: rewriting ${f.id} failed: ${f.error}\n`);
  if (summary.failed > 0) console.log(`${summary.failed} rewrites failed (their template text stays): run the same command again to retry them`);
  console.log(`${formatRunCost(ledgerCost(readCallLedger(run.path)))}\n`);
  return summary.failed;
}

function formatMixedStats(s: MixedSetStats): string[] {
  const categories = Object.entries(s.categories).map(([c, n]) => `${c} ${n}`).join(", ");
  const funnel = Object.entries(s.funnel).map(([c, f]) => {
    const dropped = Object.entries(f.filtered).filter(([, n]) => n > 0).map(([rule, n]) => `${rule} ${n}`);
    return `${c}: ${f.made} made, ${f.kept} kept, ${f.chosen} chosen${dropped.length > 0 ? ` (dropped: ${dropped.join(", ")})` : ""}`;
  });
  return [
    `${s.questions} questions on ${s.homes} homes (${s.days} days each): ${categories}`,
    `splits: train ${s.splits.train}, validation ${s.splits.validation}, test ${s.splits.test} (by home)`,
    `changes while away: ${Object.entries(s.changes).map(([k, n]) => `${k} ${n}`).join(", ") || "none"}`,
    ...funnel.map((line) => `candidates ${line}`),
    `English check of ${s.english.texts} texts: ${Object.entries(s.english.counts).map(([k, n]) => `${k} ${n}`).join(", ")}`,
  ];
}
