/**
 * Scoring an `eqa explore` run with a judge: per finished episode that has a reference answer,
 * LLM-Match (σ, 1-5) and the EAC judgement of EXPRESS-Bench (grounding δ and accuracy on the
 * episode's last frame); then
 * - OpenEQA's efficiency E (and C) over the episodes with a ground-truth path length, once in
 *   metres (`gt_path_length`) and once in steps (`gt_path_steps`), each with its unit;
 * - EXPRESS-Bench's C and C* over every judged episode; E_path over those with a ground-truth
 *   path length lᵢ in metres (the episode's `gt_path_length` or EXPRESS-Bench's
 *   `geodesic_distance`, else the start-to-goal geodesic distance the run measured); d_T over
 *   those with a goal. `express.leftOut` names the episodes a figure leaves out and why.
 *
 * Judgements are appended to `judgements.jsonl` as they finish and reused on resume when their
 * inputs (judge, mode, answer, exploration) are unchanged. A judge reply that cannot be read is
 * the judge's failure, not the answer's: an unreadable EAC reply leaves the episode out of C, C*,
 * E_path (counted as unjudged), an unreadable LLM-Match reply leaves it out of LLM-Match C and E;
 * both are counted and named in `judgeUnreadable` (over a tenth of the episodes, `eqa explore`
 * exits 1) and asked again on the next run. A model call refused for one episode fails that
 * episode's scores alone; an unusable judge stops the run.
 */
import { z } from "zod";
import { canonicalJson, judgeUnreadable, loadPromptFile, sha256Hex, type JudgeUnreadable, type Question, type UnreadableReply } from "../../core/index.js";
import { lastFramePath, type ActiveEpisode, type ExploreRecord } from "../../agents/index.js";
import { prepareImage, type ImageOptions } from "../../episodes/index.js";
import { JUDGE_ROLE, ledgerCost, ledgerUsage, readCallLedger, runModelBatch, type CallPlan, type ChatModel, type ModelRef, type RunCost, type UsageTotals, sumUsage, usageTotalsSchema, withCallContext, type ModelSpec } from "../../models/index.js";
import { reopenRun, resumeItems, type ResumeRule, RUN_KIND } from "../../store/index.js";
import { EAC_PROMPT, judgeEac, type EacJudgement } from "./eac.js";
import { expressMetrics, reliabilityMetrics, type ExpressMetrics, type ReliabilityItem, type ReliabilityMetrics } from "./express-metrics.js";
import { judgeLlmMatch, llmMatchPoints, openEqaEfficiency, prepareLlmMatchTask, type EfficiencySummary, type LlmMatchMode } from "../openeqa/index.js";

export const EXPLORE_JUDGEMENTS_FILE = "judgements.jsonl";

export interface ExploreJudgement {
  questionId: string;
  inputKey: string;
  llmMatch: number | null;
  eac: EacJudgement | null;
  /** The LLM-Match calls' usage (every judge call, EAC's included, is in the run's ledger and its cost). */
  usage: UsageTotals;
  error: string | null;
  /** The judges whose replies could not be read (LLM-Match after its re-asks, EAC), with why. */
  unreadable?: Omit<UnreadableReply, "questionId">[];
  finishedAt: string;
}

/** One line of an explore run's judgements.jsonl, as `scoreExploration` writes it. */
export const exploreJudgementSchema = z.looseObject({
  questionId: z.string(),
  inputKey: z.string(),
  llmMatch: z.number().nullable(),
  eac: z.custom<EacJudgement | null>((v) => v === null || ((v) => typeof v === "object" && v !== null && !Array.isArray(v))(v)),
  usage: usageTotalsSchema,
  error: z.string().nullable(),
  unreadable: z.custom<Omit<UnreadableReply, "questionId">[]>(Array.isArray).optional(),
  finishedAt: z.string(),
}) satisfies z.ZodType<ExploreJudgement>;

export interface ExploreScores {
  judge: string;
  mode: LlmMatchMode;
  judged: number;
  /** Episodes whose judge calls failed (no reply to read). */
  failed: number;
  /** Episodes with a judge reply that could not be read (LLM-Match or EAC), left out of that judge's figures. */
  judgeUnreadable: JudgeUnreadable;
  /** LLM-Match correctness C over every judged episode, percent. */
  llmMatch: { correctness: number | null; n: number };
  /** Each judged episode's LLM-Match score σ (1-5; 0 for no answer), by question id: what per-category figures are computed from. */
  scores?: Record<string, number>;
  /** OpenEQA's E with path lengths in metres and in steps (null without ground truth in that unit). */
  efficiency: { metres: EfficiencySummary | null; steps: EfficiencySummary | null };
  /** EXPRESS-Bench's C, C* and E_path (percent) and d_T (metres). */
  express: ExpressMetrics | null;
  /** Every judge call of the run's ledger: LLM-Match's and EAC's. */
  usage: UsageTotals;
  failures: { questionId: string; error: string }[];
}

export interface ExploreScoreOptions {
  runDir: string;
  episodes: ActiveEpisode[];
  records: ExploreRecord[];
  /** The judge of both LLM-Match and EAC (it carries its spec). */
  judge: ChatModel;
  mode?: LlmMatchMode;
  /** false: LLM-Match alone, no EAC call (C* and the EXPRESS-Bench figures that need it are then left out). Default true. */
  eac?: boolean;
  /** How the last frame is prepared for the EAC judge. */
  image?: ImageOptions;
  onProgress?: (done: number, total: number, failed: number, unreadable: number) => void;
}


/** Judges every finished episode with a reference answer and computes E, C, C*, E_path, d_T (see the module comment). */
/** The episodes an exploration's judge reads (finished, with an answer to compare with) and each one's input key. */
function judgeItems(options: Omit<ExploreScoreOptions, "judge" | "onProgress">, judgeName: string) {
  const mode = options.mode ?? "robust";
  const episodes = new Map(options.episodes.map((e) => [e.questionId, e]));
  const items = options.records.filter((r) => r.error === null && episodes.get(r.questionId)?.answer !== undefined);
  // the EAC prompt's hash: judgements made with eqakit's prompt and with the benchmark's are not mixed
  const eacPrompt = options.eac === false ? null : loadPromptFile(EAC_PROMPT).sha256;
  const keyOf = (r: ExploreRecord): string => sha256Hex(canonicalJson([judgeName, mode, eacPrompt, r.questionId, r.inputKey, r.answer, r.frames]));
  // a judgement kept: neither failed nor with an unreadable reply (those are asked again, as a failed one is)
  const resume: ResumeRule<ExploreRecord, ExploreJudgement> = { file: EXPLORE_JUDGEMENTS_FILE, schema: exploreJudgementSchema, items, id: (r) => r.questionId, inputKey: keyOf, succeeded: (j) => j.error === null && (j.unreadable ?? []).length === 0 };
  return { mode, episodes, items, eacPrompt, keyOf, resume };
}


/** The judge's calls for one episode: LLM-Match on the answer, then EAC on the last frame (when asked for and there is one). */
async function judgeEpisode(r: ExploreRecord, episode: ActiveEpisode, runPath: string, judges: { llmMatch: ChatModel; eac: ChatModel }, mode: LlmMatchMode, eacPrompt: string | null, image: ImageOptions | undefined) {
  const question = { questionId: r.questionId, question: episode.question, answer: episode.answer ?? "", category: episode.category ?? "", episodeHistory: r.questionId } as Question;
  const task = prepareLlmMatchTask(question, r.answer, mode, judges.llmMatch.name);
  const match = await judgeLlmMatch(task, judges.llmMatch, mode);
  const frame = lastFramePath(runPath, r);
  let eac: EacJudgement | null = null;
  if (frame && r.answer !== null && eacPrompt !== null) {
    const prepared = await prepareImage(frame, image);
    eac = await judgeEac(judges.eac, { question: episode.question, answer: episode.answer ?? "", response: r.answer, image: prepared });
  }
  return { match, eac };
}

/**
 * What `scoreExploration` would ask its judge, recorded in `plan` (the batch of `eqa explore
 * --batch`): the LLM-Match and EAC requests of every episode not judged yet in the run folder,
 * built as the run builds them, each reply taken as read at the first try (a re-ask comes in a
 * later round, from the batch's real reply). Calls no model and writes nothing. Returns the
 * number of episodes to judge.
 */
export async function planExploreScore(options: Omit<ExploreScoreOptions, "judge" | "onProgress"> & { judge: ModelRef }, plan: CallPlan): Promise<number> {
  const judges = { llmMatch: plan.model(options.judge.spec, JUDGE_ROLE, "5"), eac: plan.model(options.judge.spec, JUDGE_ROLE, "5, 5") };
  const { mode, episodes, eacPrompt, resume } = judgeItems(options, judges.llmMatch.name);
  const { pending } = resumeItems(options.runDir, resume);
  for (const r of pending) await withCallContext({ item: r.questionId }, () => judgeEpisode(r, episodes.get(r.questionId)!, options.runDir, judges, mode, eacPrompt, options.image));
  return pending.length;
}

export async function scoreExploration(options: ExploreScoreOptions): Promise<ExploreScores> {
  const run = reopenRun(options.runDir, RUN_KIND.explore);
  const { mode, episodes, items, eacPrompt, keyOf, resume } = judgeItems(options, options.judge.name);
  const { reusable: judgements, pending } = resumeItems(run, resume);
  let failed = 0;
  let unreadable = 0;
  options.onProgress?.(judgements.size, items.length, failed, unreadable);
  const appender = run.appender(EXPLORE_JUDGEMENTS_FILE);
  const base = (r: ExploreRecord): ExploreJudgement => ({ questionId: r.questionId, inputKey: keyOf(r), llmMatch: null, eac: null, usage: sumUsage([]), error: null, finishedAt: new Date().toISOString() });
  try {
    await runModelBatch<ExploreRecord, ExploreJudgement>({
      items: pending,
      concurrency: 4,
      models: [options.judge.spec],
      itemId: (r) => r.questionId,
      failed: (r, error) => ({ ...base(r), error: `judge call failed: ${error.message}` }),
      finished: (r, j) => {
        appender.append(j);
        judgements.set(r.questionId, j);
        if (j.error !== null) failed++;
        else if ((j.unreadable ?? []).length > 0) unreadable++;
        options.onProgress?.(judgements.size, items.length, failed, unreadable);
      },
      work: async (r) => {
        const { match, eac } = await judgeEpisode(r, episodes.get(r.questionId) as ActiveEpisode, run.path, { llmMatch: options.judge, eac: options.judge }, mode, eacPrompt, options.image);
        const usages = [match.usage];
        const unreadable: Omit<UnreadableReply, "questionId">[] = [];
        if (match.unreadable) unreadable.push({ judge: "llm-match", error: match.error ?? "unreadable", replies: match.replies });
        if (eac?.status === "failed") unreadable.push({ judge: "eac", error: eac.error, replies: [eac.raw] });
        return { ...base(r), llmMatch: match.score, eac, usage: sumUsage(usages), error: match.unreadable ? null : match.error, ...(unreadable.length > 0 ? { unreadable } : {}) };
      },
    });
  } finally {
    appender.close();
  }
  const judged = items.flatMap((r) => {
    const j = judgements.get(r.questionId);
    return j && j.error === null ? [{ r, j, e: episodes.get(r.questionId) as ActiveEpisode }] : [];
  });
  const scored = judged.filter((x) => x.j.llmMatch !== null);
  const efficiencyIn = (unit: "metres" | "steps"): EfficiencySummary | null => {
    const list = scored.flatMap(({ r, j, e }) => {
      const gt = unit === "metres" ? e.gtPathLengthM : e.gtPathSteps;
      const agent = unit === "metres" ? r.pathLengthM : r.pathLengthSteps;
      return gt !== undefined && agent !== null ? [{ questionId: r.questionId, score: j.llmMatch as number, agentLength: agent, groundTruthLength: gt }] : [];
    });
    return list.length > 0 ? openEqaEfficiency(list, unit) : null;
  };
  const expressIn = judged.flatMap(({ r, j, e }) =>
    r.pathLengthM !== null
      ? [
          {
            id: r.questionId,
            judgement: j.eac?.status === "ok" ? { grounding: j.eac.grounding, accuracy: j.eac.accuracy } : null,
            pathLength: r.pathLengthM,
            geodesicDistance: e.gtPathLengthM ?? r.gtPathLengthM ?? null,
            // a goal the run could not reach a distance to is unreachable; no goal at all is another reason
            goalDistance: e.goalPosition === undefined ? null : (r.goalDistanceM ?? Infinity),
          },
        ]
      : [],
  );
  return {
    judge: options.judge.name,
    mode,
    judged: judged.length,
    failed: items.length - judged.length,
    judgeUnreadable: judgeUnreadable(
      judged.flatMap(({ r, j }) => (j.unreadable ?? []).map((u) => ({ questionId: r.questionId, ...u }))),
      items.length,
    ),
    llmMatch: { correctness: scored.length > 0 ? scored.reduce((a, x) => a + llmMatchPoints(x.j.llmMatch as number), 0) / scored.length : null, n: scored.length },
    scores: Object.fromEntries(scored.map((x) => [x.r.questionId, x.j.llmMatch as number])),
    efficiency: { metres: efficiencyIn("metres"), steps: efficiencyIn("steps") },
    express: eacPrompt !== null && expressIn.length > 0 ? expressMetrics(expressIn) : null,
    // every judge call of the run's ledger (LLM-Match's and EAC's, earlier processes' included)
    usage: ledgerUsage(readCallLedger(run.path).filter((call) => call.role === JUDGE_ROLE)),
    failures: items.flatMap((r) => {
      const j = judgements.get(r.questionId);
      return j && j.error !== null ? [{ questionId: r.questionId, error: j.error }] : !j ? [{ questionId: r.questionId, error: "not judged" }] : [];
    }),
  };
}

/** ACE, NPL and WCE of an exploration, with the episodes they leave out and why. */
export interface ExploreReliability extends ReliabilityMetrics {
  leftOut: { reason: string; episodes: number }[];
}

/**
 * EXPRESS-Bench's reliability figures (seed Eqs. 2-4) over an exploration's finished episodes:
 * ceᵢ the stop check's P(yes) for the view the answer came from (recorded as `confidence`), pᵢ
 * the path in metres, lᵢ the ground-truth length (`gtPathLengthM`). They need no judge.
 */
export function exploreReliability(records: readonly ExploreRecord[]): ExploreReliability {
  const items: ReliabilityItem[] = [];
  const left = { confidence: 0, path: 0, groundTruth: 0 };
  for (const r of records) {
    if (r.error !== null) continue;
    if (typeof r.confidence !== "number") left.confidence++;
    else if (r.pathLengthM === null) left.path++;
    else if (r.gtPathLengthM === null) left.groundTruth++;
    else items.push({ id: r.questionId, confidence: r.confidence, pathLength: r.pathLengthM, groundTruthLength: r.gtPathLengthM });
  }
  const leftOut = [
    { reason: "no confidence: the explorer asks no stop check, or no check gave one (no log-probabilities, none stated)", episodes: left.confidence },
    { reason: "no path length in metres", episodes: left.path },
    { reason: "no ground-truth length lᵢ (no gt_path_length, no goal the run could reach)", episodes: left.groundTruth },
  ].filter((l) => l.episodes > 0);
  return { ...reliabilityMetrics(items), leftOut };
}

/** Adds the reliability figures to the run's `summary.json` (under `reliability`) and returns the summary written. */
export async function writeExploreReliability<T extends object>(runDir: string, summary: T, records: readonly ExploreRecord[]): Promise<T & { reliability: ExploreReliability }> {
  const withReliability = { ...summary, reliability: exploreReliability(records) };
  await reopenRun(runDir, RUN_KIND.explore).writeJson("summary.json", withReliability);
  return withReliability;
}

/** Adds the scores to the run's `summary.json` (under `judged`) and returns the summary written. */
export async function writeExploreScores<T extends { cost?: RunCost }>(runDir: string, summary: T, scores: ExploreScores): Promise<T & { judged: ExploreScores }> {
  // the run's cost, from its ledger: the exploration's calls and the judge's (LLM-Match and EAC)
  const withScores = { ...summary, judged: scores, cost: ledgerCost(readCallLedger(runDir)) };
  await reopenRun(runDir, RUN_KIND.explore).writeJson("summary.json", withScores);
  return withScores;
}
