import { resolve } from "node:path";
import { buildTagDataset, checkEnglishSet, loadTrajectorySource, rewriteQuestions, writeTagDataset, type SkippedTrajectory, type TagDataset } from "../generate/index.js";
import { RUN_KIND, openRun, type RunDirectory } from "../store/index.js";
import { ledgerCost, readCallLedger, type ModelSpec } from "../models/index.js";
import { formatRunCost } from "../report/index.js";
import { nonNegativeInteger, outputDirectory, positiveInteger } from "./options.js";
import { type ModelCallFlags } from "./model-options.js";
import { defineRunCommand, wroteLine, type RunSession } from "./lifecycle.js";

interface GenerateTagFlags extends ModelCallFlags {
  source: string;
  out: string;
  perTrajectory: number;
  seed: number;
  renderer: string;
  rendererBaseUrl?: string;
}

/** `eqa generate tag`: a TAG-EQA dataset from trajectory logs. */
export function generateTagCommand() {
  return defineRunCommand<GenerateTagFlags, ModelSpec | undefined>({
    name: "tag",
    path: "generate tag",
    description: "generate a TAG-EQA dataset (temporal, ambiguous, grounded questions with structured answers) from trajectory logs",
    roles: [{ role: "renderer", value: "template|provider/model", default: "template", help: "template (offline, deterministic) or a model that rewrites the texts", baseUrlHelp: "the renderer model's endpoint" }],
    out: "own",
    options: (command, place) => {
      command
        .requiredOption("--source <alfred:DIR|sim:DIR>", "ALFRED trajectories (alfred:DIR) or simulator recordings (sim:DIR: every trajectory.json below DIR)")
        .requiredOption("--out <dir>", "the dataset directory: questions.json, stats.json, skipped.json", outputDirectory)
        .option("--per-trajectory <n>", "questions per trajectory (fewer when a trajectory does not allow as many)", positiveInteger, 10)
        .option("--seed <n>", "seed of sampling and splits (the same seed gives the same dataset)", nonNegativeInteger, 0);
      place.role("renderer");
    },
    // the renderer's model, checked before anything is written (none: the templates' texts stay)
    prepare: async (session) => (session.flags.renderer === "template" ? undefined : session.role("renderer")),
    run: (renderer, session) => generateTag(session, renderer),
  });
}

async function generateTag(session: RunSession<GenerateTagFlags>, renderer: ModelSpec | undefined): Promise<number> {
  const { flags } = session;
  // kind generate-tag: the source, questions per trajectory, seed and renderer decide the dataset; a rerun with them resumes the rewrites
  const source = /^(\w+):(.*)$/.exec(flags.source);
  const run = await openRun({
    dir: flags.out,
    kind: RUN_KIND["generate-tag"],
    settings: { source: source ? `${source[1]}:${resolve(source[2]!)}` : flags.source, perTrajectory: flags.perTrajectory, seed: flags.seed, renderer: flags.renderer },
    inputs: source ? [{ name: "source", path: source[2]! }] : [],
  });
  const { inputs, skipped } = await loadTrajectorySource(flags.source, run.path);
  for (const s of skipped) process.stderr.write(`eqa: skipped ${s.file}${s.step !== undefined ? ` (step ${s.step})` : ""}: ${s.error}\n`);
  const dataset = buildTagDataset(inputs, { perTrajectory: flags.perTrajectory, seed: flags.seed }, skipped);
  await writeTagDataset(run, dataset, skipped);
  const failedRewrites = renderer ? await rewriteTexts(session, renderer, run, dataset, skipped) : 0;
  const s = dataset.stats;
  console.log(`${s.questions} questions from ${s.trajectories} trajectories (${s.skipped} skipped), ${s.grounded} with a grounded form`);
  console.log(`splits: train ${s.splits.train}, validation ${s.splits.validation}, test ${s.splits.test} (unseen environments: ${s.unseenQuestions.validation} validation, ${s.unseenQuestions.test} test)`);
  const dropped = Object.entries(s.funnel.filtered).filter(([, n]) => n > 0);
  console.log(`programs: ${s.funnel.made} made, ${s.funnel.kept} kept; filtered: ${dropped.length > 0 ? dropped.map(([rule, n]) => `${rule} ${n}`).join(", ") : "none"}`);
  console.log(`English check of ${s.english.texts} texts: ${Object.entries(s.english.counts).map(([k, n]) => `${k} ${n}`).join(", ")}`);
  console.log(`seen check of ${s.seen.objects} objects the questions refer to: ${s.seen.neverSeen} never seen${s.seen.unrecorded > 0 ? `, ${s.seen.unrecorded} questions without a record` : ""}`);
  if (s.withoutObservations > 0) console.log(`${s.withoutObservations} of ${s.questions} questions have no observations (episode_history null): they are for judges only (eqa score-tag), and eqa answer refuses them`);
  console.log(wroteLine(run.path, ["questions.json", "stats.json", "skipped.json"]));
  // skipped trajectory files and failed rewrites are failed items: listed, the others done
  return skipped.length > 0 || failedRewrites > 0 ? 1 : 0;
}

/** The renderer's rewrites of the dataset's texts, written over the templates' (a rerun resumes them); returns how many failed. */
async function rewriteTexts(session: RunSession<GenerateTagFlags>, renderer: ModelSpec, run: RunDirectory, dataset: TagDataset, skipped: readonly SkippedTrajectory[]): Promise<number> {
  const opened = await session.runtime();
  opened.runtime.usage.attach(run.path);
  const progress = session.progress("rewriting");
  const summary = await rewriteQuestions(dataset.questions, {
    model: opened.runtime.model(renderer, { role: "rewriter" }),
    spec: renderer,
    run,
    concurrency: session.flags.concurrency,
    onProgress: (done, total) => progress.update(done, total, ""),
  });
  progress.stop();
  dataset.stats.renderer = { name: renderer.name, rewritten: summary.rewritten, keptTemplate: summary.keptTemplate, failed: summary.failed, prompts: summary.prompts };
  dataset.stats.english = checkEnglishSet(dataset.questions);
  await writeTagDataset(run, dataset, skipped);
  console.log(`${summary.rewritten} texts rewritten by ${renderer.name}, ${summary.keptTemplate} kept their template text${summary.reused > 0 ? ` (${summary.reused} from an earlier run)` : ""}`);
  if (summary.failed > 0) {
    for (const f of summary.failures) process.stderr.write(`eqa: rewriting ${f.id} failed: ${f.error}\n`);
    console.log(`${summary.failed} rewrites failed (their template text stays): run the same command again to retry them`);
  }
  console.log(`${formatRunCost(ledgerCost(readCallLedger(run.path)))}\n`);
  return summary.failed;
}
