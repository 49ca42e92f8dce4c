/**
 * Exploring and judging an episode set, as `eqa explore` does it and `eqa reproduce` runs its
 * explore rows (the express tables, OpenEQA's A-EQA rows): explore every episode
 * (`runExploration`: episodes.jsonl, trajectories/, frames/, predictions.json, summary.json,
 * calls.jsonl), then with a judge score the answers (`scoreExploration`: judgements.jsonl, with
 * `--batch` first the judge's requests through a batch API), then write the reliability figures
 * and the judged figures into summary.json, the cost from the run's ledger. A resumed run reuses
 * the episodes and judgements its folder holds, as each stage does. An episode or a judgement
 * that fails is counted and the others go on; what the user can fix stops the run (UserError).
 */
import { FRONTIER_MAX_STEPS, STAND_IN_ANSWERERS, createAgent, planExploration, resolveExplorer, runExploration, type ActiveEpisode, type AgentSetup, type Explorer, type ExploreRecord, type ExploreSummary, type ExplorerName, type ExternalActiveAgent, type SceneEnvironment } from "../../agents/index.js";
import { withPromptFiles, type PromptFile, type Shard } from "../../core/index.js";
import type { ImageOptions } from "../../episodes/index.js";
import { JUDGE_ROLE, describeModel, type BatchCollector, type CallPlan, type ModelRuntime, type ModelSpec, type RunCost } from "../../models/index.js";
import type { SceneBounds } from "../../sim/index.js";
import type { LlmMatchMode } from "../openeqa/index.js";
import { planExploreScore, scoreExploration, writeExploreReliability, writeExploreScores, type ExploreReliability, type ExploreScores } from "./explore-score.js";

/** An explore run: what it explores, with what, how it is judged, and where it writes. */
export interface ExploreWorkflowOptions<Episode extends ActiveEpisode = ActiveEpisode> {
  episodes: Episode[];
  /** The episodes' file (`--episodes`), recorded in the run's settings. */
  episodesFile: string;
  /** The explorer, by name (`EXPLORERS`) or as itself. */
  explorer: ExplorerName | Explorer<Episode>;
  /** Opens each episode's scene (`sceneOpener`). */
  openScene: (scene: string) => Promise<SceneEnvironment>;
  /** The environment kind and the observations' size in pixels (`--env`, `--width`, `--height`), recorded in the run's settings. */
  env: string;
  observation: { width: number; height: number };
  /** The VLM of an explorer that answers with one (Fine-EQA), or the model the user's own agent may call (`--model`). */
  model?: ModelSpec;
  /** frontier: the EM-EQA agent answering from the collected frames (`--em-agent`). */
  answerer?: AgentSetup;
  /** external: the user's own active agent, made on the run's runtime; the caller closes it. */
  activeAgent?: ExternalActiveAgent;
  /** external: each episode's wall-time budget, milliseconds (`--episode-time`). */
  episodeTimeMs?: number;
  /** `--judge`: LLM-Match in `mode`, and EXPRESS-Bench's EAC on the last frame unless `eac` is false (`--no-eac`). */
  judge?: { spec: ModelSpec; mode: LlmMatchMode; eac: boolean };
  /** frontier: most actions; fine-eqa: a fixed step budget instead of the area rule (`--max-steps`). */
  maxSteps?: number;
  /** How images are prepared for the models (`--image-size`, `--image-format`). */
  image: ImageOptions;
  shard?: Shard;
  /** Episodes (of an external agent) and judgements in flight (`--concurrency`). */
  concurrency: number;
  outDir: string;
  /** Fine-EQA's and the EAC judge's prompt set (`--prompts`), recorded in the run's settings. */
  promptSet: string;
  /** The prompts sent in place of eqakit's for this run alone (EXPRESS-Bench's originals, `readExpressOriginalPrompts`). */
  prompts?: readonly PromptFile[];
  /** Model-call settings recorded in the run's settings (retries, timeout, cache). */
  callSettings: Record<string, unknown>;
  /** Progress of each stage: "exploring" (done, total, failed episodes), then "judging" (with the replies the judge's parser could not read). */
  onProgress?: (stage: "exploring" | "judging", done: number, total: number, failed: number, unreadable: number) => void;
  /**
   * `--batch`: answers the judge's requests (`collect` plans them on the collector) through a
   * provider's batch API into the model-call cache of the runtime it returns, which the judging
   * then reads; the caller closes that runtime.
   */
  batchJudge?: (runDir: string, collect: (collector: BatchCollector) => Promise<unknown>) => Promise<ModelRuntime>;
}

/** What an explore run gives back: its folder, summary (with the reliability figures), records, judged figures and cost. */
export interface ExploreWorkflowResult {
  runDir: string;
  summary: ExploreSummary & { reliability: ExploreReliability };
  records: ExploreRecord[];
  scores?: ExploreScores;
  /** From the run's ledger: the exploration's calls and the judge's. */
  cost: RunCost;
  /** 1 when an episode or a judgement failed, or the judge could not read too many replies; else 0. */
  exitCode: 0 | 1;
}

/** Explores every episode, judges the answers when a judge is given, and writes the run's figures (see the file's comment). */
export function exploreAndJudge<Episode extends ActiveEpisode>(options: ExploreWorkflowOptions<Episode>, runtime: ModelRuntime): Promise<ExploreWorkflowResult> {
  return withPromptFiles(options.prompts ?? [], () => exploreAndJudgeWithPrompts(options, runtime));
}

async function exploreAndJudgeWithPrompts<Episode extends ActiveEpisode>(options: ExploreWorkflowOptions<Episode>, runtime: ModelRuntime): Promise<ExploreWorkflowResult> {
  const { model, answerer, activeAgent } = options;
  const explorer = resolveExplorer(options.explorer);
  const agent = answerer ? createAgent(answerer, runtime) : undefined;
  const result = await runExploration({
    episodes: options.episodes,
    explorer,
    openScene: options.openScene,
    outDir: options.outDir,
    ...(model && explorer.answersWithVlm ? { vlm: { model: runtime.model(model, { role: explorer.roles[0]! }), spec: model } } : {}),
    ...(activeAgent ? { activeAgent, concurrency: options.concurrency, ...(options.episodeTimeMs !== undefined ? { episodeTimeMs: options.episodeTimeMs } : {}) } : {}),
    ...(agent ? { answerer: agent } : {}),
    ...(options.maxSteps !== undefined ? { maxSteps: options.maxSteps } : {}),
    image: options.image,
    ...(options.shard ? { shard: options.shard } : {}),
    usage: runtime.usage,
    settings: { episodes: options.episodesFile, promptSet: options.promptSet, env: options.env, width: options.observation.width, height: options.observation.height, model: model ? describeModel(model) : null, ...options.callSettings },
    onProgress: (done, total, failed) => options.onProgress?.("exploring", done, total, failed, 0),
  });
  const judge = options.judge;
  const scoring = judge ? { runDir: result.runDir, episodes: options.episodes, records: result.records, judge: { spec: judge.spec }, mode: judge.mode, eac: judge.eac, image: options.image } : undefined;
  // --batch: the judge's requests of every explored episode answered through the batch API, then read from the cache
  const judgeRuntime = options.batchJudge && scoring ? await options.batchJudge(result.runDir, (collector) => planExploreScore(scoring, collector)) : runtime;
  const scores = scoring
    ? await scoreExploration({ ...scoring, judge: judgeRuntime.model(scoring.judge.spec, { role: JUDGE_ROLE }), onProgress: (done, total, failed, unreadable) => options.onProgress?.("judging", done, total, failed, unreadable) })
    : undefined;
  const summary = await writeExploreReliability(result.runDir, result.summary, result.records);
  const cost = scores ? (await writeExploreScores(result.runDir, summary, scores)).cost : result.summary.cost;
  const failed = result.summary.counts.failed + (scores?.failed ?? 0);
  return { runDir: result.runDir, summary, records: result.records, ...(scores ? { scores } : {}), cost, exitCode: failed > 0 || scores?.judgeUnreadable.overLimit === true ? 1 : 0 };
}

/** What `planExploreWorkflow` plans: an explore run's options without what only a real run needs. */
export type ExploreWorkflowPlanOptions<Episode extends ActiveEpisode = ActiveEpisode> = Pick<ExploreWorkflowOptions<Episode>, "episodes" | "explorer" | "model" | "answerer" | "episodeTimeMs" | "judge" | "maxSteps" | "image" | "observation" | "shard" | "outDir" | "prompts"> & {
  /** external: the user's own agent's configuration (part of each episode's key). */
  activeAgent?: { configuration: Record<string, unknown> };
  /** A scene's bounds when known without starting an environment (the built-in homes'). */
  sceneBounds?: (scene: string) => Promise<SceneBounds | undefined>;
};

/**
 * `--dry-run` of an explore run: the explorer's, the answering agent's and the judge's calls on
 * `plan`, as a most, without starting an environment; returns the notes printed under them.
 */
export function planExploreWorkflow<Episode extends ActiveEpisode>(options: ExploreWorkflowPlanOptions<Episode>, plan: CallPlan): Promise<string[]> {
  return withPromptFiles(options.prompts ?? [], () => planExploreWorkflowWithPrompts(options, plan));
}

async function planExploreWorkflowWithPrompts<Episode extends ActiveEpisode>(options: ExploreWorkflowPlanOptions<Episode>, plan: CallPlan): Promise<string[]> {
  const { model, answerer: setup, judge, observation } = options;
  const explorer = resolveExplorer(options.explorer);
  const build = (agentSetup: AgentSetup) => createAgent(agentSetup, plan.runtime((_spec, nth) => ({ role: nth === 0 ? "agent" : "captioner" })));
  const answerer = setup ? { ...build(setup), fresh: () => build(setup).agent } : undefined;
  const planned = await planExploration(
    {
      episodes: options.episodes,
      explorer,
      outDir: options.outDir,
      ...(model && explorer.answersWithVlm ? { vlm: model } : {}),
      ...(options.activeAgent ? { activeAgent: options.activeAgent, ...(options.episodeTimeMs !== undefined ? { episodeTimeMs: options.episodeTimeMs } : {}) } : {}),
      ...(answerer ? { answerer } : {}),
      ...(judge ? { judge: judge.spec, eac: judge.eac } : {}),
      ...(options.maxSteps !== undefined ? { maxSteps: options.maxSteps } : {}),
      image: options.image,
      observation,
      ...(options.shard ? { shard: options.shard } : {}),
      ...(options.sceneBounds ? { sceneBounds: options.sceneBounds } : {}),
    },
    plan,
  );
  const notes = [`${planned.episodes} episode(s): ${planned.reused} already explored in ${options.outDir}, ${planned.pending} to explore`];
  notes.push(...explorer.planNotes(planned.steps));
  if (answerer) notes.push(STAND_IN_ANSWERERS.has(answerer.agent.name) ? `the ${answerer.agent.name} agent answers once per episode from the frames the exploration collects: its calls, tokens and dollars are estimated on a stand-in recording of ${(options.maxSteps ?? FRONTIER_MAX_STEPS) + 1} blank ${observation.width}×${observation.height} frames (one per step of the budget), of which it samples its frames` : `the ${answerer.agent.name} agent answers once per episode from the frames the exploration collects: its calls are counted, its tokens are not estimated`);
  if (judge) notes.push(judge.eac ? "the judge makes an LLM-Match and an EAC call per episode: counted, not estimated" : "the judge makes an LLM-Match call per episode: counted, not estimated");
  return notes;
}
