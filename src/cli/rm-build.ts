import { resolve } from "node:path";
import { Command } from "commander";
import { UserError, writeFileAtomically, type Question } from "../core/index.js";
import { defaultOpenEqaBenchmarkPath, loadQuestionSelection, loadRewardInstances, writeRewardInstances } from "../data/index.js";
import { ledgerCost, readCallLedger, type ModelSpec } from "../models/index.js";
import { formatRunCost } from "../report/index.js";
import { applyReview, buildRewardBench, REVIEWED_FILE, reviewCsv, splitByEpisode, writeSplit } from "../reward/index.js";
import { RUN_KIND, openRun } from "../store/index.js";
import { finiteNumber, nonNegativeInteger, outputDirectory, positiveInteger } from "./options.js";
import { type ModelCallFlags, addFrameOptions, type FrameFlags } from "./model-options.js";
import { defineRunCommand, wroteLine } from "./lifecycle.js";

interface BuildFlags extends ModelCallFlags, FrameFlags {
  benchmark?: string;
  subset?: string;
  limit?: number;
  responder?: string;
  responderBaseUrl?: string;
  scorer?: string;
  scorerBaseUrl?: string;
  responses: number;
  keyframes: number;
  finetuneFraction: number;
  seed: number;
  out?: string;
}

/** The questions `eqa rm build` asks, the frames of their episodes and the roles' models. */
interface RmBuildRun {
  questions: Question[];
  framesRoot: string;
  responder: ModelSpec;
  scorer: ModelSpec;
}

export function rmBuildCommand() {
  return defineRunCommand<BuildFlags, RmBuildRun>({
    name: "build",
    path: "rm build",
    description: "build an EQARewardBench-style set: a VLM answers OpenEQA questions with reasoning traces, a stronger model scores them with the ground truth (resumable)",
    roles: [
      { role: "responder", help: "step 1: the VLM that answers (the paper: Gemini-2.0-Flash)", baseUrlHelp: "the responder's endpoint" },
      { role: "scorer", help: "step 2: the stronger model that scores with the ground truth (the paper: Gemini-2.5-Pro)", baseUrlHelp: "the scorer's endpoint" },
    ],
    options: (command, place) => {
      command
        .option("--benchmark <file>", "the OpenEQA benchmark file (default: the one `eqa data fetch openeqa` wrote)")
        .option("--subset <file>", "a JSON list of question ids")
        .option("--limit <n>", "only the first n questions", positiveInteger);
      place.role("responder");
      place.role("scorer");
      command
        .option("--responses <n>", "responses asked per question", positiveInteger, 2)
        .option("--keyframes <n>", "keyframes per episode (N)", positiveInteger, 5)
        .option("--finetune-fraction <f>", "share of the non-HM3D episodes set aside for fine-tuning (all HM3D goes to the benchmark)", finiteNumber, 0.5)
        .option("--seed <n>", "seed of the episode split", nonNegativeInteger, 0);
      place.out();
      addFrameOptions(command);
    },
    prepare: async (session) => {
      const { flags } = session;
      if (!flags.frames) throw new UserError("the responder and the scorer need the episodes' frames", { field: "--frames" }, "pass --frames DIR (one folder or video per episode_history)");
      const responder = session.role("responder");
      const scorer = session.role("scorer");
      const { questions } = await loadQuestionSelection({ ...flags, defaultBenchmark: defaultOpenEqaBenchmarkPath() });
      return { questions: flags.limit !== undefined ? questions.slice(0, flags.limit) : questions, framesRoot: flags.frames, responder, scorer };
    },
    run: async ({ questions, framesRoot, responder, scorer }, session) => {
      const { flags, outDir } = session;
      const opened = await session.runtime();
      const progress = session.progress("building");
      // the responder's and the scorer's calls go to the run folder's ledger of model calls
      opened.runtime.usage.attach(outDir);
      const result = await buildRewardBench({
        questions,
        framesRoot,
        responder: opened.runtime.model(responder, { role: "responder" }),
        scorer: opened.runtime.model(scorer, { role: "scorer" }),
        responsesPerQuestion: flags.responses,
        keyframes: flags.keyframes,
        image: { maxSide: flags.imageSize, format: flags.imageFormat },
        outDir,
        concurrency: flags.concurrency,
        finetuneFraction: flags.finetuneFraction,
        seed: flags.seed,
        onProgress: (stage, done, total) => progress.update(done, total, stage),
      });
      progress.stop();
      const s = result.split;
      console.log(`${result.instances.length} instances (${result.failedResponses} responses unusable, ${result.failedScores} without a ground-truth score)`);
      console.log(`benchmark: ${s.benchmark.length} instances from ${s.benchmarkEpisodes} episodes; fine-tuning: ${s.finetune.length} from ${s.finetuneEpisodes} episodes (no episode in both)`);
      console.log(`\n${formatRunCost(ledgerCost(readCallLedger(outDir)))}`);
      console.log(wroteLine(resolve(outDir), ["responses.jsonl", "ground-truth-scores.jsonl", "instances.jsonl", "review.csv", "benchmark.jsonl", "finetune.jsonl"], { blank: true }));
      console.log("review: fill decision (accept/reject) or corrected_score in review.csv, then `eqa rm review --instances instances.jsonl --import review.csv --out DIR`");
    },
  });
}

interface ReviewFlags {
  instances: string;
  export?: string;
  import?: string;
  out?: string;
  finetuneFraction: number;
  seed: number;
}

export function rmReviewCommand(): Command {
  return new Command("review")
    .description("the human check: export instances as a CSV sheet, or import the reviewed sheet and split again")
    .requiredOption("--instances <file>", "reward-model instances (JSONL)")
    .option("--export <csv>", "write the review sheet")
    .option("--import <csv>", "read a filled sheet: reject drops an instance, corrected_score replaces its score")
    .option("--out <dir>", "with --import: where reviewed.jsonl, benchmark.jsonl and finetune.jsonl go", outputDirectory)
    .option("--finetune-fraction <f>", "share of the non-HM3D episodes set aside for fine-tuning", finiteNumber, 0.5)
    .option("--seed <n>", "seed of the episode split", nonNegativeInteger, 0)
    .action(async (flags: ReviewFlags) => {
      if ((flags.export === undefined) === (flags.import === undefined)) throw new UserError("give exactly one of --export and --import", { field: "--export" });
      const file = await loadRewardInstances(flags.instances);
      if (flags.export !== undefined) {
        await writeFileAtomically(flags.export, reviewCsv(file.instances));
        console.log(`wrote ${flags.export}: ${file.instances.length} rows; fill decision (accept/reject) or corrected_score`);
        return;
      }
      if (!flags.out) throw new UserError("--import needs --out DIR", { field: "--out" });
      const outcome = await applyReview(file.instances, flags.import!);
      const run = await openRun({ dir: flags.out, kind: RUN_KIND["rm-review"], settings: { finetuneFraction: flags.finetuneFraction, seed: flags.seed }, inputs: [{ name: "instances", path: flags.instances, copy: true }, { name: "review", path: flags.import!, copy: true }] });
      await writeRewardInstances(run.file(REVIEWED_FILE), outcome.instances);
      const split = splitByEpisode(outcome.instances, { finetuneFraction: flags.finetuneFraction, seed: flags.seed });
      await writeSplit(run, split);
      console.log(`${outcome.accepted} accepted, ${outcome.corrected} corrected, ${outcome.rejected} rejected, ${outcome.unreviewed} not in the sheet (kept)`);
      console.log(`benchmark: ${split.benchmark.length} instances (${split.benchmarkEpisodes} episodes); fine-tuning: ${split.finetune.length} (${split.finetuneEpisodes} episodes)`);
      console.log(`wrote ${run.path}/{reviewed.jsonl,benchmark.jsonl,finetune.jsonl}`);
    });
}
