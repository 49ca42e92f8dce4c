import { mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { Command, Option } from "commander";
import { builtinSceneBounds, loadActiveEpisodes, resolveExplorer, sceneOpener, type ActiveEpisode } from "../agents/index.js";
import { UserError } from "../core/index.js";
import { defaultOpenEqaBenchmarkPath, loadQuestionSelection, loadRewardInstances, loadTagQuestions } from "../data/index.js";
import { exploreAndJudge, planExploreWorkflow, readExpressOriginalPrompts, type ExploreWorkflowOptions, type ExploreWorkflowResult, type LlmMatchMode } from "../eval/index.js";
import { JUDGE_ROLE, REWARD_MODEL_ROLE, checkBatchSupport, checkPriceFile, type BatchCollector, type ModelRuntime, type ModelSpec } from "../models/index.js";
import { formatCallPlan, formatExploreRun, formatRunCost } from "../report/index.js";
import {
  EQA_RM_K,
  EQA_RM_TABLES,
  EXPRESS_ROW_DIR,
  EXPRESS_TABLES,
  HM_EQA_SOURCE,
  expressNeedsJudge,
  expressQuestionSetDifference,
  expressRow,
  habitatProblems,
  writeExpressTable,
  type ExpressRowSetup,
  type ExpressTableId,
  OPENEQA_EM_TABLES,
  answerOpenEqaRows,
  planRewardTable,
  reproduceRewardTable,
  OPENEQA_FAMILIES,
  REPRODUCED_TABLE_FORMAT,
  TABLE_FILES,
  formatTableMarkdown,
  writeTableFormats,
  planOpenEqaTable,
  publishedTable,
  publishedTableIds,
  reproduceOpenEqaTable,
  openOpenEqaRun,
  OPENEQA_A_EQA_TABLES,
  A_EQA_BLIND_STEPS,
  aEqaNotes,
  aEqaRow,
  aEqaRowDir,
  aEqaRowSetup,
  aEqaWithoutGuessDir,
  aEqaQuestionSet,
  scoreAEqaWithoutGuess,
  withoutGuessCells,
  aEqaRun,
  aEqaRunId,
  aEqaSettings,
  planAEqaRows,
  writeAEqaTable,
  type AEqaMeasures,
  type AEqaSetup,
  type ReproduceOpenEqaOptions,
  type UserRow,
  type OpenEqaFamily,
  type PublishedTable,
  type ReproducedTable,
  TAG_TABLES,
  answerTagRows,
  planTagTable,
  reproduceTagTable,
} from "../reproduce/index.js";
import { TAG_BASELINE_NAMES, tagSetEpisodes, type TagBaselineName } from "../generate/index.js";
import { builtinSceneProblem } from "../sim/index.js";
import { RUN_KIND, defaultRunPath, openRun } from "../store/index.js";
import { addImageOptions, positiveInteger, choiceList, framesPath, modelCallSettings, addModelCallOptions, oneOf, openModelRuntime, outputDirectory, powerOfTwo, resolveRoleModel, type ImageFlags, type ModelCallFlags } from "./options.js";
import { addDryRunOption, openCallPlan, type DryRunFlags } from "./dry-run.js";
import { createProgress, createStageProgress, failureDetail } from "./progress.js";
import { addBatchOptions, runBatch, type BatchFlags } from "./batch.js";

interface ReproduceFlags extends ModelCallFlags, DryRunFlags, BatchFlags, ImageFlags {
  instances?: string;
  maxK: number;
  model?: string;
  modelBaseUrl?: string;
  captioner?: string;
  captionerBaseUrl?: string;
  judge?: string;
  judgeBaseUrl?: string;
  benchmark?: string;
  subset?: string;
  frames?: string;
  rows?: OpenEqaFamily[];
  mode: LlmMatchMode;
  published?: boolean;
  out?: string;
  episodes?: string;
  env: "builtin" | "habitat";
  scenes?: string;
  bridgePython: string;
  prompts: string;
  maxSteps?: number;
  width?: number;
  height?: number;
  questions?: string;
  baselines?: TagBaselineName[];
}

function tableArgument(value: string): PublishedTable {
  return publishedTable(value);
}

/**
 * `eqa reproduce`. The express tables' row and OpenEQA's A-EQA rows are explore runs, made by
 * the library's `exploreAndJudge` as `eqa explore` makes them. The argument is not used: the
 * program that assembles the commands still passes the explore command.
 */
export function reproduceCommand(): Command {
  const command = new Command("reproduce")
    .description(`put your model in a seed paper's table beside the published rows (resumable): runs ${[...OPENEQA_EM_TABLES, ...OPENEQA_A_EQA_TABLES, ...EQA_RM_TABLES, ...EXPRESS_TABLES, ...TAG_TABLES].join(", ")}; prints any of the ten with --published`)
    .argument("<table>", `the table: ${publishedTableIds().join(", ")}`, tableArgument)
    .addOption(new Option("--model <provider/model>", "the model every row runs with, e.g. openai/gpt-4o").env("EQA_MODEL"))
    .option("--model-base-url <url>", "the model's endpoint")
    .option("--captioner <provider/model>", "the socratic row's captioner and the scene-graph rows' (default: --model for socratic; the episodes' instance labels for the scene graphs); tag-eqa-table-2: the baselines' captioning VLM (the paper's was CogVLM 2; default --model)")
    .option("--captioner-base-url <url>", "the captioner's endpoint")
    .addOption(new Option("--judge <provider/model>", "the LLM-Match judge (the paper's was GPT-4), e.g. openai/gpt-4o; tag-eqa-table-2: the model that reads the answers' structure for eqa score-tag").env("EQA_JUDGE"))
    .option("--judge-base-url <url>", "the judge's endpoint")
    .option("--benchmark <file>", "the OpenEQA benchmark file (default: the one `eqa data fetch openeqa` wrote)")
    .option("--subset <file>", "a JSON list of question ids to run (the row is then not comparable with the published ones)")
    .option("--frames <dir>", "OpenEQA's episode histories (frames/<episode_history> folders or videos); every row but blind needs them", framesPath)
    .option("--rows <list>", `the rows to run, comma-separated (default all: ${OPENEQA_FAMILIES.join(",")})`, choiceList("row", OPENEQA_FAMILIES))
    .addOption(new Option("--mode <mode>", "LLM-Match mode: compat (the reference's scoring, as the paper) or robust").argParser(oneOf(["robust", "compat"] as const)).default("compat"))
    .option("--instances <file>", "eqa-rm tables: EQARewardBench-style instances with ground-truth scores (JSONL, as eqa rm bench reads them)")
    .option("--max-k <k>", `eqa-rm tables: test-time scaling's K, a power of two (the paper's ${EQA_RM_K})`, powerOfTwo, EQA_RM_K)
    .option("--episodes <file>", "express tables: the episodes Fine-EQA explores, as eqa explore reads them (table 1: A-EQA's from eqa data convert a-eqa; table 2: HM-EQA's questions.csv; table 3: express-bench.json; scenes home-<seed> for the built-in homes); openeqa-table-5, and openeqa-table-2/3's A-EQA columns: the A-EQA episodes each family's row explores (eqa data convert a-eqa)")
    .addOption(new Option("--env <env>", "express tables and A-EQA rows: builtin (the built-in simulator's homes; the row is then not comparable) or habitat (HM3D through the Habitat bridge, as the paper)").argParser(oneOf(["builtin", "habitat"] as const)).default("builtin"))
    .option("--scenes <dir>", "express tables and A-EQA rows, --env habitat: your HM3D folder (holding train/, val/ …)")
    .option("--bridge-python <path>", "express tables and A-EQA rows, --env habitat: the Python that has habitat-sim", "python3")
    .option("--prompts <set>", "express tables: Fine-EQA's and the EAC judge's prompts: eqakit (its own; the row is then not comparable) or original (EXPRESS-Bench's, from eqa data fetch express-bench) or the folder that command wrote them to", "eqakit")
    .option("--max-steps <n>", "express tables: Fine-EQA's step budget instead of 3·√area (the row is then not comparable); A-EQA rows: the frontier explorer's most actions (500)", positiveInteger)
    .option("--width <pixels>", "express tables: observation width (the reference's 512 unless given); A-EQA rows: eqa explore's 640 unless given", positiveInteger)
    .option("--height <pixels>", "express tables: observation height (the reference's 512 unless given); A-EQA rows: eqa explore's 480 unless given", positiveInteger)
    .option("--questions <file>", "tag-eqa-table-2: a TAG-EQA set with observations (the questions.json of eqa generate tag --source sim:DIR, its recordings where it found them)")
    .option("--baselines <list>", `tag-eqa-table-2: the baselines to run, comma-separated (default: all eqakit has of ${TAG_BASELINE_NAMES.join(",")})`, choiceList("baseline", TAG_BASELINE_NAMES))
    .option("--published", "print (and with --out write) the published table alone; call no model")
    .option("--out <dir>", "run directory (default: runs/reproduce-DATE); an existing one resumes", outputDirectory);
  addImageOptions(command, "keyframes (eqa-rm tables)");
  addModelCallOptions(command);
  addDryRunOption(command);
  addBatchOptions(command);
  return command.action(async (table: PublishedTable, flags: ReproduceFlags) => {
    if (flags.published) {
      await printPublished(table, flags.out);
      return;
    }
    if ((EQA_RM_TABLES as readonly string[]).includes(table.id)) {
      process.exitCode = await reproduceRewardCommand(table, flags);
      return;
    }
    if ((TAG_TABLES as readonly string[]).includes(table.id)) {
      process.exitCode = await reproduceTagCommand(table, flags);
      return;
    }
    if ((EXPRESS_TABLES as readonly string[]).includes(table.id)) {
      await reproduceExpressCommand(table, flags);
      return;
    }
    if ((OPENEQA_A_EQA_TABLES as readonly string[]).includes(table.id)) {
      process.exitCode = await reproduceAEqaCommand(table, flags);
      return;
    }
    if (!(OPENEQA_EM_TABLES as readonly string[]).includes(table.id)) throw new Error(`eqa reproduce has no runner for ${table.id}`);
    const model = resolveRoleModel(flags, "model");
    const captioner = flags.captioner ? resolveRoleModel(flags, "captioner") : undefined;
    const judgeSpec = resolveRoleModel(flags, "judge");
    const selection = await loadQuestionSelection({ ...flags, defaultBenchmark: defaultOpenEqaBenchmarkPath() });
    const outDir = flags.out ?? defaultRunPath("reproduce");
    // --episodes: the A-EQA columns (Tables II and III) run too, each family's row an explore run in rows/a-eqa-<family>
    const families = flags.rows ?? OPENEQA_FAMILIES;
    const active = flags.episodes ? await loadAEqaSetup(table, flags, model, captioner, judgeSpec) : undefined;
    const options: ReproduceOpenEqaOptions = {
      ...(active ? { aEqa: { settings: aEqaSettings(active, aEqaExploreSettings(flags)), parts: families.flatMap((f) => [aEqaRowDir(f), ...(table.id === "openeqa-table-3" && f !== "blind" ? [aEqaWithoutGuessDir(f)] : [])]) } } : {}),
      table,
      selection,
      ...(flags.frames ? { framesRoot: flags.frames } : {}),
      ...(flags.rows ? { families: flags.rows } : {}),
      model,
      ...(captioner ? { captioner } : {}),
      judgeSpec,
      mode: flags.mode,
      outDir,
      concurrency: flags.concurrency,
    };
    if (flags.dryRun) {
      // only the judge's calls would go through a batch: the table is priced live, the note says what --batch saves
      const plan = await openCallPlan({ ...flags, batch: false });
      try {
        const notes = [...(await planOpenEqaTable(options, plan.plan)), ...(active ? await planAEqaRows(active, families, { ...aEqaPlanOptions(flags, outDir), withoutGuess: table.id === "openeqa-table-3" }, plan.plan) : [])];
        const batchNote = flags.batch ? ["with --batch the judge's calls go through the batch API at the batch price (half the listed price at OpenAI and Anthropic); the agents' calls stay live"] : [];
        console.log(formatCallPlan(plan.plan.roles(), [`${table.id}: ${(flags.rows ?? OPENEQA_FAMILIES).length} row(s) in ${outDir}`, ...notes, ...batchNote], plan.plan.rows()));
      } finally {
        plan.close();
      }
      return;
    }
    checkPriceFile();
    let aEqaCode = 0;
    if (active && options.aEqa) {
      // the run folder is opened (and a folder of other settings refused) before the A-EQA rows write into it
      await openOpenEqaRun(options);
      const explored = await runAEqaRows(flags, active, families, table.id, outDir, flags.batch === true);
      aEqaCode = explored.code;
      if (table.id === "openeqa-table-3") {
        // Table III's A-EQA (w/o guess): each row's own answers where force-a-guess replaced them, judged as the EM-EQA ones are
        const opened = await openModelRuntime(flags);
        const judging = createProgress("judging w/o guess");
        try {
          const judge = opened.runtime.model(judgeSpec, { role: JUDGE_ROLE });
          for (const r of explored.rows) {
            if (r.family === "blind") continue;
            const scored = await scoreAEqaWithoutGuess(active, join(outDir, aEqaRowDir(r.family)), judge, opened.runtime, { concurrency: flags.concurrency, callSettings: modelCallSettings(flags, opened.cachePath), onProgress: (done, total, failed) => judging.update(done, total, `a-eqa-${r.family}${failed > 0 ? ` (${failed} failed)` : ""}`) });
            r.row = withoutGuessCells(r.row, scored);
          }
        } finally {
          judging.stop();
          opened.close();
        }
      }
      options.aEqa = { ...options.aEqa, rows: explored.rows.map((r) => r.row), notes: aEqaNotes(table.id, explored.rows.map((r) => r.measures), aEqaQuestionSet(active.episodes)), runs: Object.fromEntries(explored.rows.map((r) => [aEqaRunId(r.family), aEqaRun(r)])) };
    }
    const result = await runTableRows(
      flags,
      judgeSpec,
      outDir,
      (callSettings, runtime, reporting) => answerOpenEqaRows({ ...options, callSettings, ...reporting }, runtime),
      (callSettings, runtime, reporting) => reproduceOpenEqaTable({ ...options, callSettings, ...reporting }, runtime),
    );
    console.log(result.markdown);
    console.log(`${formatRunCost(result.summary.cost)}\n`);
    console.log(`wrote ${result.runDir}/{${Object.values(TABLE_FILES).join(",")},summary.json} and each row's run in ${join(result.runDir, "rows")}`);
    process.exitCode = aEqaCode !== 0 || result.table.rows.some((r) => r.failed > 0) ? 1 : 0;
  });
}

/** A table's progress on one line: the row, then its stage ("row 2/5 socratic answering"). */
interface RowReporting {
  onRow: (row: string, index: number, total: number) => void;
  onProgress: (stage: string, done: number, total: number, failed: number) => void;
}

/**
 * Runs a table's rows with `reproduce`. With --batch, `answer` first answers every row live and
 * collects the judge's requests of all rows; they go in one batch through the provider's batch
 * API, and `reproduce` then reads the judgements from the cache.
 */
async function runTableRows<Result>(
  flags: ReproduceFlags,
  judgeSpec: ModelSpec,
  outDir: string,
  answer: (callSettings: ReturnType<typeof modelCallSettings>, runtime: ModelRuntime, reporting: RowReporting) => Promise<(collector: BatchCollector) => Promise<unknown>>,
  reproduce: (callSettings: ReturnType<typeof modelCallSettings>, runtime: ModelRuntime, reporting: RowReporting) => Promise<Result>,
): Promise<Result> {
  let progress = createProgress(flags.batch ? "answering" : "reproducing");
  let row = "";
  const reporting: RowReporting = {
    onRow: (name, index, total) => (row = `row ${index + 1}/${total} ${name}`),
    onProgress: (stage, done, total, failed) => progress.update(done, total, `${row} ${stage}${failed > 0 ? ` (${failed} failed)` : ""}`),
  };
  let batched: Awaited<ReturnType<typeof runBatch>> | undefined;
  if (flags.batch) {
    checkBatchSupport(judgeSpec);
    const live = await openModelRuntime(flags);
    let collect: (collector: BatchCollector) => Promise<unknown>;
    try {
      collect = await answer(modelCallSettings(flags, live.cachePath), live.runtime, reporting);
    } finally {
      progress.stop();
      live.close();
    }
    batched = await runBatch(flags, judgeSpec, JUDGE_ROLE, outDir, collect);
    progress = createProgress("reproducing");
  }
  const opened = batched?.opened ?? (await openModelRuntime(flags));
  try {
    return await reproduce(modelCallSettings(flags, opened.cachePath), opened.runtime, reporting);
  } finally {
    progress.stop();
    opened.close();
  }
}

/** What the A-EQA rows' `--episodes` is, and where to get it. */
const A_EQA_EPISODES_HINT = 'OpenEQA\'s A-EQA episodes: eqa data fetch openeqa, then eqa data convert a-eqa --states DIR --gt-path-length FILE --out a-eqa.json and --env habitat --scenes DIR (docs/active-eqa.md); on the built-in homes (--env builtin, not comparable), a JSON list of {"question_id", "question", "answer", "category", "scene": "home-3", "gt_path_length"?, "gt_path_steps"?}';

/**
 * The A-EQA rows' setup from `--episodes`, `--env` (and `--scenes`, `--bridge-python` for HM3D):
 * what is missing (episodes with answers, the HM3D scenes, habitat-sim) is refused before any call.
 */
async function loadAEqaSetup(table: PublishedTable, flags: ReproduceFlags, model: ModelSpec, captioner: ModelSpec | undefined, judgeSpec: ModelSpec): Promise<AEqaSetup> {
  if (!flags.episodes) throw new UserError(`${table.id} needs the A-EQA episodes the rows explore`, { field: "--episodes" }, A_EQA_EPISODES_HINT);
  const episodes = await loadExploredEpisodes(flags.episodes, flags.env);
  if (!episodes.some((e) => e.answer !== undefined)) throw new UserError(`${table.id} scores answers against the episodes' answers: none of these has one`, { file: flags.episodes, field: "answer" }, A_EQA_EPISODES_HINT);
  await checkHabitatSetup(`${table.id}'s A-EQA rows`, flags, episodes);
  return { episodesFile: flags.episodes, episodes, env: flags.env, model, ...(captioner ? { captioner } : {}), judgeSpec, mode: flags.mode };
}

/** The explore settings that decide the A-EQA rows' numbers (the manifest holds them). */
function aEqaExploreSettings(flags: ReproduceFlags): Record<string, unknown> {
  return { maxSteps: flags.maxSteps ?? null, width: flags.width ?? null, height: flags.height ?? null, imageSize: flags.imageSize, imageFormat: flags.imageFormat };
}

function aEqaPlanOptions(flags: ReproduceFlags, outDir: string) {
  return {
    outDir,
    ...(flags.maxSteps !== undefined ? { maxSteps: flags.maxSteps } : {}),
    // eqa explore observes 640×480 unless given
    observation: { width: flags.width ?? 640, height: flags.height ?? 480 },
    image: { maxSide: flags.imageSize, format: flags.imageFormat },
  };
}

/**
 * Each family's A-EQA row: an explore run as `eqa explore --agent frontier --em-agent <family>
 * --judge J --no-eac` makes it, in rows/a-eqa-<family> (resumable as every explore run), at the
 * paper's A-EQA settings (the VLM's K = 75; the blind row one step), then the row read back from
 * its run; `code` is 1 when a row's run had failures.
 */
async function runAEqaRows(flags: ReproduceFlags, setup: AEqaSetup, families: readonly OpenEqaFamily[], tableId: string, outDir: string, batch = false): Promise<{ rows: { family: OpenEqaFamily; row: UserRow; measures: AEqaMeasures }[]; code: number }> {
  const rows: { family: OpenEqaFamily; row: UserRow; measures: AEqaMeasures }[] = [];
  let code = 0;
  for (const family of families) {
    const rowDir = join(outDir, aEqaRowDir(family));
    const agentSetup = aEqaRowSetup(family, setup.model, setup.captioner);
    const maxSteps = family === "blind" ? A_EQA_BLIND_STEPS : flags.maxSteps;
    console.log(`${tableId}: A-EQA row ${family} (frontier exploration, then the ${family} agent) in ${rowDir}`);
    const run = await exploreRow(
      flags,
      {
        episodes: setup.episodes,
        episodesFile: setup.episodesFile,
        explorer: "frontier",
        model: setup.model,
        answerer: { agent: family, model: setup.model, image: imageOf(flags), forceGuess: true, ...(agentSetup.captioner ? { captioner: agentSetup.captioner } : {}), ...(agentSetup.numFrames !== undefined ? { numFrames: agentSetup.numFrames } : {}) },
        judge: { spec: setup.judgeSpec, mode: setup.mode, eac: false },
        ...(maxSteps !== undefined ? { maxSteps } : {}),
        // eqa explore observes 640×480 unless given
        observation: { width: flags.width ?? 640, height: flags.height ?? 480 },
        outDir: rowDir,
        promptSet: "eqakit",
      },
      batch,
    );
    if (run.exitCode !== 0) code = run.exitCode;
    rows.push({ family, ...aEqaRow(tableId, family, rowDir, setup) });
  }
  return { rows, code };
}

/** The episodes an explore row runs; on the built-in homes, a scene that is not one is refused here. */
function loadExploredEpisodes(file: string, env: ReproduceFlags["env"]): Promise<ActiveEpisode[]> {
  const builtinScene = (scene: string): string | undefined => {
    const problem = builtinSceneProblem(scene);
    return problem && `${problem}; HM3D scenes run with --env habitat --scenes DIR`;
  };
  return loadActiveEpisodes(file, env === "builtin" ? { sceneProblem: builtinScene } : {});
}

/** With --env habitat, what HM3D rows lack (the scenes, habitat-sim) is refused before any call. */
async function checkHabitatSetup(rows: string, flags: ReproduceFlags, episodes: readonly ActiveEpisode[]): Promise<void> {
  if (flags.env !== "habitat") return;
  const problems = await habitatProblems({ scenes: flags.scenes, bridgePython: flags.bridgePython, episodes });
  if (problems.length === 0) return;
  throw new UserError(`${rows} on HM3D cannot start: ${problems.map((p) => p.problem).join("; ")}`, { field: problems[0]!.problem.startsWith("--env habitat needs --scenes") ? "--scenes" : "--env" }, `${problems.map((p) => p.hint).join("; ")}; then eqa env check --env habitat --scenes DIR --scene SCENE --bridge-python PATH checks the set-up; or --env builtin to run on the built-in homes (not comparable)`);
}

/** How a row's images are prepared for its models (`--image-size`, `--image-format`). */
function imageOf(flags: ReproduceFlags): { maxSide: number; format: "png" | "jpeg" } {
  return { maxSide: flags.imageSize, format: flags.imageFormat };
}

/** What a row's explore run is: the table's choices for it; the rest comes from the command line. */
type ExploreRow = Omit<ExploreWorkflowOptions, "openScene" | "env" | "image" | "concurrency" | "callSettings" | "onProgress" | "batchJudge">;

/**
 * A row's explore run, with the options it takes from the table's command line (environment,
 * images, calls and cache, and `--batch` with its limits: the row's judge calls go through the
 * batch API once it has explored), printed as `eqa explore` prints its run.
 */
async function exploreRow(flags: ReproduceFlags, row: ExploreRow, batch: boolean): Promise<ExploreWorkflowResult> {
  const judge = row.judge;
  if (batch && judge) checkBatchSupport(judge.spec);
  const opened = await openModelRuntime(flags);
  const progress = createStageProgress();
  let batched: Awaited<ReturnType<typeof runBatch>> | undefined;
  try {
    const run = await exploreAndJudge(
      {
        ...row,
        openScene: sceneOpener({ env: flags.env, ...row.observation, timeoutMs: EXPLORE_ENV_TIMEOUT_MS, scenes: flags.scenes, bridgePython: flags.bridgePython }),
        env: flags.env,
        image: imageOf(flags),
        concurrency: flags.concurrency,
        callSettings: modelCallSettings(flags, opened.cachePath),
        onProgress: (stage, done, total, failed, unreadable) => progress.update(stage, done, total, failureDetail(failed, unreadable)),
        ...(batch && judge
          ? {
              batchJudge: async (runDir: string, collect: (collector: BatchCollector) => Promise<unknown>) => {
                progress.stop();
                batched = await runBatch(flags, judge.spec, JUDGE_ROLE, runDir, collect);
                return batched.opened.runtime;
              },
            }
          : {}),
      },
      opened.runtime,
    );
    progress.stop();
    console.log(formatExploreRun(run, resolveExplorer(row.explorer).name, flags.env));
    return run;
  } finally {
    progress.stop();
    opened.close();
    batched?.opened.close();
  }
}

/** Most time for one request to an environment process (habitat), as `eqa explore --env-timeout` gives by default. */
const EXPLORE_ENV_TIMEOUT_MS = 120_000;

/**
 * openeqa-table-5 (A-EQA by category): each family's A-EQA row (`runAEqaRows`), then the table
 * beside the paper's rows. `--dry-run` prices the rows as `eqa explore --dry-run` does.
 */
async function reproduceAEqaCommand(table: PublishedTable, flags: ReproduceFlags): Promise<number> {
  if (!flags.episodes) throw new UserError(`${table.id} needs the A-EQA episodes the rows explore`, { field: "--episodes" }, A_EQA_EPISODES_HINT);
  const model = resolveRoleModel(flags, "model");
  const captioner = flags.captioner ? resolveRoleModel(flags, "captioner") : undefined;
  const judgeSpec = resolveRoleModel(flags, "judge");
  const setup = await loadAEqaSetup(table, flags, model, captioner, judgeSpec);
  const families = flags.rows ?? OPENEQA_FAMILIES;
  const outDir = flags.out ?? defaultRunPath("reproduce");
  const settings = { table: table.id, model: model.name, captioner: captioner?.name ?? null, judge: judgeSpec.name, mode: flags.mode, aEqa: aEqaSettings(setup, aEqaExploreSettings(flags)) };
  if (flags.dryRun) {
    const plan = await openCallPlan({ ...flags, batch: false });
    try {
      const notes = await planAEqaRows(setup, families, aEqaPlanOptions(flags, outDir), plan.plan);
      const batchNote = flags.batch ? ["with --batch each row's judge calls go through the batch API at the batch price (half the listed price at OpenAI and Anthropic) once it has explored; the explorer's and agents' calls stay live"] : [];
      console.log(formatCallPlan(plan.plan.roles(), [`${table.id}: ${families.length} A-EQA row(s) on ${setup.episodes.length} episode(s) (${flags.env === "builtin" ? "the built-in homes" : "HM3D"}) in ${outDir}`, ...notes, ...batchNote], plan.plan.rows()));
    } finally {
      plan.close();
    }
    return 0;
  }
  checkPriceFile();
  const run = await openRun({ dir: outDir, kind: RUN_KIND.reproduce, settings, parts: families.map(aEqaRowDir) });
  const explored = await runAEqaRows(flags, setup, families, table.id, run.path, flags.batch === true);
  const written = await writeAEqaTable(table, run, explored.rows, setup, settings);
  console.log(`\n${written.markdown}`);
  console.log(`${formatRunCost(written.summary.cost)}\n`);
  console.log(`wrote ${run.path}/{${Object.values(TABLE_FILES).join(",")},summary.json} and each row's explore run in ${join(run.path, "rows")}`);
  return explored.code !== 0 || explored.rows.some((r) => r.row.failed > 0) ? 1 : 0;
}

/**
 * tag-eqa-table-2: each TAG-EQA baseline answers the set (an answer-tag run in
 * rows/<name>/answers) and eqa score-tag scores it (rows/<name>/score), then the table.
 */
async function reproduceTagCommand(table: PublishedTable, flags: ReproduceFlags): Promise<number> {
  if (!flags.questions) throw new UserError(`${table.id} needs a TAG-EQA set with observations`, { field: "--questions" }, "make one from simulator recordings (eqa sim record, then eqa generate tag --source sim:DIR) and pass its questions.json with --questions (the paper's set is not published)");
  const model = resolveRoleModel(flags, "model");
  const captioner = flags.captioner ? resolveRoleModel(flags, "captioner") : model;
  const judgeSpec = resolveRoleModel(flags, "judge");
  const questions = await loadTagQuestions(flags.questions);
  const episodes = await tagSetEpisodes(questions, flags.questions);
  const outDir = flags.out ?? defaultRunPath("reproduce");
  const options = { table, questions, questionsPath: flags.questions, episodes, ...(flags.baselines ? { baselines: flags.baselines } : {}), model, captioner, judgeSpec, outDir, concurrency: flags.concurrency };
  if (flags.dryRun) {
    const plan = await openCallPlan({ ...flags, batch: false });
    try {
      const notes = await planTagTable(options, plan.plan);
      const batchNote = flags.batch ? ["with --batch the judge's calls go through the batch API at the batch price (half the listed price at OpenAI and Anthropic); the baselines' calls stay live"] : [];
      console.log(formatCallPlan(plan.plan.roles(), [`${table.id}: ${notes.length - 1} row(s) in ${outDir}`, ...notes, ...batchNote], plan.plan.rows()));
    } finally {
      plan.close();
    }
    return 0;
  }
  checkPriceFile();
  const result = await runTableRows(
    flags,
    judgeSpec,
    outDir,
    (callSettings, runtime, reporting) => answerTagRows({ ...options, callSettings, ...reporting }, runtime),
    (callSettings, runtime, reporting) => reproduceTagTable({ ...options, callSettings, ...reporting }, runtime),
  );
  console.log(result.markdown);
  console.log(`${formatRunCost(result.summary.cost)}\n`);
  console.log(`wrote ${result.runDir}/{${Object.values(TABLE_FILES).join(",")},summary.json} and each row's answer-tag and score-tag runs in ${join(result.runDir, "rows")}`);
  return result.table.rows.some((r) => r.failed > 0) ? 1 : 0;
}

/** `--published`: the paper's table alone, printed, and written to `out` in the three formats when given. */
async function printPublished(table: PublishedTable, out: string | undefined): Promise<void> {
  const empty: ReproducedTable = { format: REPRODUCED_TABLE_FORMAT, table: table.id, rows: [] };
  if (out === undefined) {
    console.log(formatTableMarkdown(table, empty));
    return;
  }
  mkdirSync(out, { recursive: true });
  console.log(await writeTableFormats(out, table, empty));
  console.log(`wrote ${out}/{${TABLE_FILES.markdown},${TABLE_FILES.csv},${TABLE_FILES.latex}}`);
}

/** The eqa-rm tables: one `eqa rm bench` run with the user's model as the reward model. */
async function reproduceRewardCommand(table: PublishedTable, flags: ReproduceFlags): Promise<number> {
  if (!flags.instances) throw new UserError(`${table.id} needs EQARewardBench-style instances with ground-truth scores`, { field: "--instances" }, "EQARewardBench is not published: build a set with eqa rm build (docs/reward-models.md), then pass it with --instances FILE");
  const spec = resolveRoleModel(flags, "model");
  const file = await loadRewardInstances(flags.instances);
  const sampling = { table, file, spec, ...(flags.frames ? { framesRoot: flags.frames } : {}), image: { maxSide: flags.imageSize, format: flags.imageFormat }, maxK: flags.maxK, outDir: flags.out ?? defaultRunPath("reproduce") };
  if (flags.dryRun) {
    const plan = await openCallPlan({ ...flags, batch: false });
    try {
      const notes = await planRewardTable(sampling, plan.plan);
      const batchNote = flags.batch ? ["with --batch the reward model's samples go through the batch API at the batch price (half the listed price at OpenAI and Anthropic)"] : [];
      console.log(formatCallPlan(plan.plan.roles(), [...notes, ...batchNote], plan.plan.rows()));
    } finally {
      plan.close();
    }
    return 0;
  }
  checkPriceFile();
  // --batch: the reward model's samples of the whole table through the batch API first, read from the cache by the benchmark run
  const batched = flags.batch ? await runBatch(flags, spec, REWARD_MODEL_ROLE, sampling.outDir, (collector) => planRewardTable(sampling, collector)) : undefined;
  const opened = batched?.opened ?? (await openModelRuntime(flags));
  const progress = createProgress("sampling");
  try {
    const result = await reproduceRewardTable(
      {
        ...sampling,
        concurrency: flags.concurrency,
        callSettings: modelCallSettings(flags, opened.cachePath),
        onProgress: (done, total, failed) => progress.update(done, total, failed > 0 ? `(${failed} failed)` : ""),
      },
      opened.runtime,
    );
    progress.stop();
    console.log(result.markdown);
    console.log(`${formatRunCost(result.summary.cost)}\n`);
    console.log(`wrote ${result.runDir}/{${Object.values(TABLE_FILES).join(",")},summary.json} and the benchmark run in ${join(result.runDir, "rows", "bench")}`);
    return result.table.rows.some((r) => r.failed > 0) ? 1 : 0;
  } finally {
    progress.stop();
    opened.close();
  }
}

/**
 * The express tables: one `eqa explore --agent fine-eqa:reference` run (judged for tables 1 and
 * 3) in `rows/fine-eqa-reference/`, which resumes as every explore run does, then the table from
 * its summary. What the run needs and is not here (the episodes, multiple-choice episodes for
 * table 2, the HM3D scenes, habitat-sim, EXPRESS-Bench's prompts) is refused before any call.
 */
async function reproduceExpressCommand(table: PublishedTable, flags: ReproduceFlags): Promise<void> {
  const id = table.id as ExpressTableId;
  if (!flags.episodes) throw new UserError(`${id} needs the episodes Fine-EQA explores`, { field: "--episodes" }, EPISODES_HINT[id]);
  const model = resolveRoleModel(flags, "model");
  const judge = expressNeedsJudge(id) ? resolveRoleModel(flags, "judge") : undefined;
  if (flags.batch && !judge) throw new UserError(`${id} has no judge calls to send as a batch: accuracy is the choice letter read from each reply`, { field: "--batch" }, `drop --batch; Fine-EQA's own calls depend on each other's replies and go live`);
  if (!judge && flags.judge) console.error(`note: ${id} needs no judge (accuracy is the choice letter read from each reply): --judge (or EQA_JUDGE) is not used`);
  const episodes = await loadExploredEpisodes(flags.episodes, flags.env);
  if (id === "express-table-2" && !episodes.some((e) => e.choices && e.choices.length > 0 && e.answer !== undefined)) {
    throw new UserError("express-table-2 needs multiple-choice episodes with answers: none of these has choices and an answer letter", { file: flags.episodes, field: "--episodes" }, `give HM-EQA's questions.csv with scene_init_poses.csv beside it (${HM_EQA_SOURCE}), or episodes with "choices" and a letter as "answer"`);
  }
  if (id !== "express-table-2" && !episodes.some((e) => e.answer !== undefined)) {
    throw new UserError(`${id} scores answers against the episodes' answers: none of these has one`, { file: flags.episodes, field: "answer" }, EPISODES_HINT[id]);
  }
  const withoutGt = episodes.filter((e) => e.gtPathLengthM === undefined).length;
  if (id === "express-table-1" && withoutGt > 0) {
    console.error(`note: ${withoutGt} of ${episodes.length} episode(s) have no gt_path_length, so E′ leaves them out: eqa data convert a-eqa --gt-path-length FILE (the 3D-Mem authors' gt_path_length.json, metres) gives every A-EQA question one`);
  }
  await checkHabitatSetup(id, flags, episodes);
  // the original prompts are checked here too, so that a missing file stops the run before its folder is made
  const prompts = flags.prompts === "eqakit" ? [] : readExpressOriginalPrompts(flags.prompts === "original" ? undefined : flags.prompts);
  const outDir = flags.out ?? defaultRunPath("reproduce");
  const rowDir = join(outDir, EXPRESS_ROW_DIR);
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
    outDir: rowDir,
    promptSet: flags.prompts,
    prompts,
  };
  if (flags.dryRun) {
    console.log(`${id}: 1 row (Fine-EQA reference mode on ${flags.env === "builtin" ? "the built-in homes" : "HM3D"}) in ${rowDir}`);
    // only the judge's calls would go through a batch: the row is priced live, a note says what --batch saves
    const plan = await openCallPlan({ ...flags, batch: false });
    try {
      const notes = await plan.plan.forRow("fine-eqa-reference", () => planExploreWorkflow({ ...exploreOptions, image: imageOf(flags), ...(flags.env === "builtin" ? { sceneBounds: builtinSceneBounds(observation) } : {}) }, plan.plan));
      if (flags.batch) notes.push("with --batch the judge's calls go through the batch API at the batch price (half the listed price at OpenAI and Anthropic); the explorer's and agents' calls stay live");
      console.log(formatCallPlan(plan.plan.roles(), notes, plan.plan.rows()));
    } finally {
      plan.close();
    }
    return;
  }
  const run = await openRun({ dir: outDir, kind: RUN_KIND.reproduce, settings, parts: [EXPRESS_ROW_DIR] });
  const explored = await exploreRow(flags, exploreOptions, flags.batch === true);
  const exploreCode = explored.exitCode;
  const row = expressRow(rowDir, setup, episodes);
  const written = await writeExpressTable(table, row, setup, run.path, rowDir, settings);
  console.log(`\n${written.markdown}`);
  console.log(`${formatRunCost(written.summary.cost)}\n`);
  console.log(`wrote ${run.path}/{${Object.values(TABLE_FILES).join(",")},summary.json} and the row's explore run in ${rowDir}`);
  process.exitCode = exploreCode !== 0 || row.failed > 0 ? 1 : 0;
}

/** What each express table's `--episodes` is, and where to get it. */
const EPISODES_HINT: Record<ExpressTableId, string> = {
  "express-table-1": 'A-EQA\'s episodes: eqa data fetch openeqa, then eqa data convert a-eqa --full --states DIR --gt-path-length FILE --out a-eqa.json (docs/active-eqa.md; --full: all 557 questions, as the paper); on the built-in homes, a JSON list of {"question_id", "question", "answer", "scene": "home-3", "gt_path_length"}',
  "express-table-2": `HM-EQA's questions.csv with scene_init_poses.csv beside it (${HM_EQA_SOURCE}); on the built-in homes, a JSON list of {"question_id", "question", "choices", "answer": "B", "scene": "home-3"}`,
  "express-table-3": 'EXPRESS-Bench\'s records: eqa data fetch express-bench writes express-bench.json; on the built-in homes, a JSON list of {"question_id", "question", "answer", "scene": "home-3", "goal_position"?, "gt_path_length"?} (docs/active-eqa.md#episodes)',
};
