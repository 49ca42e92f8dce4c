import { readFileSync } from "node:fs";
import { join } from "node:path";
import { builtinSceneBounds, loadActiveEpisodes, resolveExplorer, sceneOpener, type ActiveEpisode } from "../agents/index.js";
import { UserError } from "../core/index.js";
import { exploreAndJudge, planExploreWorkflow, readExpressOriginalPrompts, type ExploreWorkflowOptions, type ExploreWorkflowResult } from "../eval/index.js";
import { JUDGE_ROLE, checkBatchSupport, type BatchCollector } from "../models/index.js";
import { formatExploreRun, formatRunCost } from "../report/index.js";
import { EXPRESS_ROW_DIR, EXPRESS_TABLES, HM_EQA_SOURCE, expressNeedsJudge, expressQuestionSetDifference, expressRow, habitatProblems, writeExpressTable, type ExpressRowSetup, type ExpressTableId, TABLE_FILES, type PublishedTable } from "../reproduce/index.js";
import { builtinSceneProblem } from "../sim/index.js";
import { RUN_KIND, openRun } from "../store/index.js";
import { failureDetail } from "./progress.js";
import { printTable, tableRunner, type ReproduceFlags } from "./reproduce-flags.js";
import type { BatchedRuntime, RunSession } from "./run-session.js";

/** The episodes an explore row runs; on the built-in homes, a scene that is not one is refused here. */
export function loadExploredEpisodes(file: string, env: ReproduceFlags["env"]): Promise<ActiveEpisode[]> {
  const builtinScene = (scene: string): string | undefined => {
    const problem = builtinSceneProblem(scene);
    return problem && `${problem}; HM3D scenes run with --env habitat --scenes DIR`;
  };
  return loadActiveEpisodes(file, env === "builtin" ? { sceneProblem: builtinScene } : {});
}

/** With --env habitat, what HM3D rows lack (the scenes, habitat-sim) is refused before any call. */
export async function checkHabitatSetup(rows: string, flags: ReproduceFlags, episodes: readonly ActiveEpisode[]): Promise<void> {
  if (flags.env !== "habitat") return;
  const problems = await habitatProblems({ scenes: flags.scenes, bridgePython: flags.bridgePython, episodes });
  if (problems.length === 0) return;
  throw new UserError(`${rows} on HM3D cannot start: ${problems.map((p) => p.problem).join("; ")}`, { field: problems[0]!.problem.startsWith("--env habitat needs --scenes") ? "--scenes" : "--env" }, `${problems.map((p) => p.hint).join("; ")}; then eqa env check --env habitat --scenes DIR --scene SCENE --bridge-python PATH checks the set-up; or --env builtin to run on the built-in homes (not comparable)`);
}

/** How a row's images are prepared for its models (`--image-size`, `--image-format`). */
export function imageOf(flags: ReproduceFlags): { maxSide: number; format: "png" | "jpeg" } {
  return { maxSide: flags.imageSize, format: flags.imageFormat };
}

/** What a row's explore run is: the table's choices for it; the rest comes from the command line. */
export type ExploreRow = Omit<ExploreWorkflowOptions, "openScene" | "env" | "image" | "concurrency" | "callSettings" | "onProgress" | "batchJudge">;

/**
 * A row's explore run, with the options it takes from the table's command line (environment,
 * images, calls and cache, and `--batch` with its limits: the row's judge calls go through the
 * batch API once it has explored), printed as `eqa explore` prints its run.
 */
export async function exploreRow(session: RunSession<ReproduceFlags>, row: ExploreRow, batch: boolean): Promise<ExploreWorkflowResult> {
  const { flags } = session;
  const judge = row.judge;
  if (batch && judge) checkBatchSupport(judge.spec);
  const opened = await session.runtime();
  const progress = session.stageProgress();
  let batched: BatchedRuntime | undefined;
  const run = await exploreAndJudge(
    {
      ...row,
      openScene: sceneOpener({ env: flags.env, ...row.observation, timeoutMs: EXPLORE_ENV_TIMEOUT_MS, scenes: flags.scenes, bridgePython: flags.bridgePython }),
      env: flags.env,
      image: imageOf(flags),
      concurrency: flags.concurrency,
      callSettings: session.callSettings(opened),
      onProgress: (stage, done, total, failed, unreadable) => progress.update(stage, done, total, failureDetail(failed, unreadable)),
      ...(batch && judge
        ? {
            batchJudge: async (runDir: string, collect: (collector: BatchCollector) => Promise<unknown>) => {
              progress.stop();
              batched = await session.batch(judge.spec, JUDGE_ROLE, runDir, collect);
              return batched.runtime;
            },
          }
        : {}),
    },
    opened.runtime,
  );
  // each row's runtimes close when it is done; on a failure the lifecycle closes them
  await session.release(progress);
  await session.release(opened);
  if (batched) await session.release(batched);
  console.log(formatExploreRun(run, resolveExplorer(row.explorer).name, flags.env));
  return run;
}

/** Most time for one request to an environment process (habitat), as `eqa explore --env-timeout` gives by default. */
export const EXPLORE_ENV_TIMEOUT_MS = 120_000;

interface ExpressPrepared {
  table: PublishedTable;
  episodes: ActiveEpisode[];
  setup: ExpressRowSetup;
  settings: Record<string, unknown>;
  exploreOptions: ExploreRow;
}

/**
 * The express tables: one `eqa explore --agent fine-eqa:reference` run (judged for tables 1 and
 * 3) in `rows/fine-eqa-reference/`, which resumes as every explore run does, then the table from
 * its summary. What the run needs and is not here (the episodes, multiple-choice episodes for
 * table 2, the HM3D scenes, habitat-sim, EXPRESS-Bench's prompts) is refused before any call.
 */
export const expressRunner = tableRunner<ExpressPrepared>({
  tables: EXPRESS_TABLES,
  async prepare(table, session) {
    const { flags } = session;
    const id = table.id as ExpressTableId;
    if (!flags.episodes) throw new UserError(`${id} needs the episodes Fine-EQA explores`, { field: "--episodes" }, EPISODES_HINT[id]);
    const model = session.role("model");
    const judge = expressNeedsJudge(id) ? session.role("judge") : undefined;
    if (flags.batch && !judge) throw new UserError(`${id} has no judge calls to send as a batch: accuracy is the choice letter read from each reply`, { field: "--batch" }, `drop --batch; Fine-EQA's own calls depend on each other's replies and go live`);
    if (!judge && flags.judge) console.error(`note: ${id} needs no judge (accuracy is the choice letter read from each reply): --judge (or EQA_JUDGE) is not used`);
    const episodes = await loadExpressEpisodes(id, flags.episodes, flags.env);
    await checkHabitatSetup(id, flags, episodes);
    // the original prompts are checked here too, so that a missing file stops the run before its folder is made
    const prompts = flags.prompts === "eqakit" ? [] : readExpressOriginalPrompts(flags.prompts === "original" ? undefined : flags.prompts);
    const observation = { width: flags.width ?? 512, height: flags.height ?? 512 };
    const setup: ExpressRowSetup = {
      table: id,
      model: model.name,
      judge: judge?.name ?? null,
      env: flags.env,
      questionSet: expressQuestionSetDifference(id, flags.episodes, readFileSync(flags.episodes), episodes),
      promptSet: flags.prompts,
      mode: flags.mode,
      maxSteps: flags.maxSteps ?? null,
      observation,
    };
    const settings = { table: id, model: model.name, judge: judge?.name ?? null, env: flags.env, episodes: flags.episodes, scenes: flags.scenes ?? null, prompts: flags.prompts, mode: flags.mode, maxSteps: flags.maxSteps ?? null, width: flags.width ?? null, height: flags.height ?? null, imageSize: flags.imageSize };
    const exploreOptions: ExploreRow = {
      episodes,
      episodesFile: flags.episodes,
      explorer: "fine-eqa:reference",
      model,
      // C′ and E′ are LLM-Match's alone: no EAC call on the last frame, so a judge that reads no images (gpt-4-0613) serves
      ...(judge ? { judge: { spec: judge, mode: flags.mode, eac: id !== "express-table-1" } } : {}),
      ...(flags.maxSteps !== undefined ? { maxSteps: flags.maxSteps } : {}),
      observation,
      outDir: join(session.outDir, EXPRESS_ROW_DIR),
      promptSet: flags.prompts,
      prompts,
    };
    return { table, episodes, setup, settings, exploreOptions };
  },
  async plan({ table, exploreOptions }, plan, session) {
    const { flags } = session;
    console.log(`${table.id}: 1 row (Fine-EQA reference mode on ${flags.env === "builtin" ? "the built-in homes" : "HM3D"}) in ${exploreOptions.outDir}`);
    // only the judge's calls would go through a batch: the row is priced live, a note says what --batch saves
    const notes = await plan.forRow("fine-eqa-reference", () => planExploreWorkflow({ ...exploreOptions, image: imageOf(flags), ...(flags.env === "builtin" ? { sceneBounds: builtinSceneBounds(exploreOptions.observation) } : {}) }, plan));
    if (flags.batch) notes.push("with --batch the judge's calls go through the batch API at the batch price (half the listed price at OpenAI and Anthropic); the explorer's and agents' calls stay live");
    return notes;
  },
  async run({ table, episodes, setup, settings, exploreOptions }, session) {
    const rowDir = exploreOptions.outDir;
    const run = await openRun({ dir: session.outDir, kind: RUN_KIND.reproduce, settings, parts: [EXPRESS_ROW_DIR] });
    const explored = await exploreRow(session, exploreOptions, session.flags.batch === true);
    const row = expressRow(rowDir, setup, episodes);
    const written = await writeExpressTable(table, row, setup, run.path, rowDir, settings);
    printTable(written.markdown, written.summary.cost, run.path, `the row's explore run in ${rowDir}`, true);
    return explored.exitCode !== 0 || row.failed > 0 ? 1 : 0;
  },
});

/** The episodes an express table's row explores, refused when they lack what the table scores (choices and letters, answers). */
async function loadExpressEpisodes(id: ExpressTableId, file: string, env: ReproduceFlags["env"]): Promise<ActiveEpisode[]> {
  const episodes = await loadExploredEpisodes(file, env);
  if (id === "express-table-2" && !episodes.some((e) => e.choices && e.choices.length > 0 && e.answer !== undefined)) {
    throw new UserError("express-table-2 needs multiple-choice episodes with answers: none of these has choices and an answer letter", { file, field: "--episodes" }, `give HM-EQA's questions.csv with scene_init_poses.csv beside it (${HM_EQA_SOURCE}), or episodes with "choices" and a letter as "answer"`);
  }
  if (id !== "express-table-2" && !episodes.some((e) => e.answer !== undefined)) {
    throw new UserError(`${id} scores answers against the episodes' answers: none of these has one`, { file, field: "answer" }, EPISODES_HINT[id]);
  }
  const withoutGt = episodes.filter((e) => e.gtPathLengthM === undefined).length;
  if (id === "express-table-1" && withoutGt > 0) {
    console.error(`note: ${withoutGt} of ${episodes.length} episode(s) have no gt_path_length, so E′ leaves them out: eqa data convert a-eqa --gt-path-length FILE (the 3D-Mem authors' gt_path_length.json, metres) gives every A-EQA question one`);
  }
  return episodes;
}

/** What each express table's `--episodes` is, and where to get it. */
export const EPISODES_HINT: Record<ExpressTableId, string> = {
  "express-table-1": 'A-EQA\'s episodes: eqa data fetch openeqa, then eqa data convert a-eqa --full --states DIR --gt-path-length FILE --out a-eqa.json (docs/active-eqa.md; --full: all 557 questions, as the paper); on the built-in homes, a JSON list of {"question_id", "question", "answer", "scene": "home-3", "gt_path_length"}',
  "express-table-2": `HM-EQA's questions.csv with scene_init_poses.csv beside it (${HM_EQA_SOURCE}); on the built-in homes, a JSON list of {"question_id", "question", "choices", "answer": "B", "scene": "home-3"}`,
  "express-table-3": 'EXPRESS-Bench\'s records: eqa data fetch express-bench writes express-bench.json; on the built-in homes, a JSON list of {"question_id", "question", "answer", "scene": "home-3", "goal_position"?, "gt_path_length"?} (docs/active-eqa.md#episodes)',
};

