/**
 * The built-in Mixed EQA agents in their program form: each executes the question's program
 * (`executeMixedProgram`) over a view of what it perceived, never over the ground truth, so its
 * answer is a canonical value scored exactly.
 *
 * - `memory-only` builds a memory of each day from its frames and its own actions and answers
 *   from it without moving; it knows nothing of now, so it answers a present question from its
 *   last memory (as if nothing had changed while it was away).
 * - `explore-only` ignores its history: it explores now with the frontier explorer until a view
 *   shows what the question is about, builds a memory of what it saw and answers from it; it
 *   knows nothing of the past, so it answers a past question from the present.
 * - `recall-explore` looks in its memory first; when the program asks about now (a present
 *   question, or then against now), what it remembers may have changed, so it walks on its own
 *   map (built from its history's depth) to where it last saw the thing (for "is it on that?", to
 *   that receptacle, which does not move, rather than to the thing, which may have), looks,
 *   explores further when it is not there, and stops as soon as a view shows it; then it answers
 *   from its memory of the days and what it saw now.
 */
import { executeMixedProgram, type MixedMoment, type MixedProgram, type MixedSnapshotObject, type TrajectoryLog } from "../../data/index.js";
import { openEpisode } from "../../episodes/index.js";
import type { AgentState, Environment } from "../../sim/index.js";
import { buildMemory } from "../memory/index.js";
import type { OccupancyMap } from "../explore/occupancy.js";
import { asksAboutNow, lookFor, showsAny } from "./needs.js";
import type { MixedAgentName, MixedHistory, RecalledDay } from "./types.js";
import { graphSnapshot, historyView, logPosition, logSnapshot, presentOnlyView, seenOverRemembered } from "./views.js";
import { LiveWalk, type WalkStep } from "./walk.js";
import { answerWithModel, type MixedModel } from "./model-answer.js";
import type { UsageTotals } from "../../models/index.js";

/** What an agent is asked: the question, and its program (what the program agents execute). */
export interface MixedQuestion {
  questionId: string;
  question: string;
  program: MixedProgram;
}

/** Where an agent answers: the live environment (already at the episode's start), its history, and where its frames go. */
export interface MixedAgentContext {
  env: Environment;
  start: AgentState;
  history: MixedHistory;
  /** What the agent remembers of each day (built once per day and shared by the home's episodes). */
  recall: (day: number) => Promise<RecalledDay>;
  /** The frame folder of what it sees now. */
  framesDir: string;
  /** Most actions in the live environment. */
  maxSteps: number;
  /** The model-driven form: the user's VLM answers from the frames retrieved and seen (the program form without). */
  model?: MixedModel;
}

export interface MixedOutcome {
  /** The program's answer in canonical form; null when the agent could not answer. */
  answer: string | null;
  /** memory (answered without moving), found (a view showed what it looked for), no_frontier, budget. */
  stop: string;
  steps: WalkStep[];
  pathLengthM: number;
  pathLengthSteps: number;
  /** Frames seen now. */
  frames: number;
  /** History frames the agent retrieved: the best views of the objects the program names on the days it consulted. */
  historyFrames: { day: number; frame: number }[];
  /** The agent's map of the live environment (none when it did not move). */
  map: OccupancyMap | null;
  details: Record<string, unknown>;
  /** The model's calls' usage (the model-driven form). */
  usage?: UsageTotals;
}

/** Mask labels of a home's structure, which are not objects. */
const STRUCTURE_MASK_LABELS = ["wall", "floor", "ceiling"] as const;

/** The days a program consults: those its moments name, and the last day when it asks about now from memory. */
function daysAsked(program: MixedProgram, lastDay: number, nowFromMemory: boolean): number[] {
  const moments = [program.at, program.since].filter((m): m is MixedMoment => m !== undefined);
  const days = new Set<number>(program.days ?? []);
  for (const m of moments) if (!("now" in m)) days.add(m.day);
  if (nowFromMemory && asksAboutNow(program)) days.add(lastDay);
  return [...days].sort((a, b) => a - b);
}

function namedTypes(program: MixedProgram): string[] {
  return [program.object, program.receptacle].filter((t): t is string => t !== undefined);
}

/** The best views, in the days' memories, of the objects the program names. */
function retrievedFrames(program: MixedProgram, recalled: readonly RecalledDay[], days: readonly number[]): { day: number; frame: number }[] {
  const types = new Set(namedTypes(program));
  return recalled
    .filter((r) => days.includes(r.day))
    .flatMap((r) => r.graph.instances.filter((i) => types.has(i.label)).flatMap((i) => {
      const view = i.views[i.bestView];
      return view ? [{ day: r.day, frame: view.frame }] : [];
    }))
    .sort((a, b) => a.day - b.day || a.frame - b.frame)
    .filter((f, k, all) => k === 0 || f.day !== all[k - 1]!.day || f.frame !== all[k - 1]!.frame);
}

async function recallAll(context: MixedAgentContext): Promise<{ recalled: RecalledDay[]; logs: Map<number, TrajectoryLog>; lastEnd: MixedSnapshotObject[] }> {
  const recalled: RecalledDay[] = [];
  for (const day of context.history.days) recalled.push(await context.recall(day.day));
  const logs = new Map(recalled.map((r) => [r.day, r.log]));
  const last = recalled[recalled.length - 1];
  return { recalled, logs, lastEnd: last ? logSnapshot(last.log, last.log.steps.length - 1) : [] };
}

/** What the agent sees now, as a snapshot: the memory of the frames of its walk. */
async function seenNow(walk: LiveWalk, framesDir: string): Promise<MixedSnapshotObject[]> {
  await walk.finish();
  const episode = await openEpisode(framesDir);
  const { graph } = await buildMemory(episode, { sampling: { kind: "every", step: 1 }, detector: null, ignoredMaskLabels: STRUCTURE_MASK_LABELS });
  return graphSnapshot(graph);
}

const answerOf = (value: string | undefined): string | null => (value === undefined || value === "" ? null : value);

function stayed(context: MixedAgentContext, answer: string | null, historyFrames: MixedOutcome["historyFrames"], details: Record<string, unknown>): MixedOutcome {
  return { answer, stop: "memory", steps: [{ action: null, success: true, state: context.start }], pathLengthM: 0, pathLengthSteps: 0, frames: 0, historyFrames, map: null, details };
}

function walked(walk: LiveWalk, answer: string | null, stop: string, historyFrames: MixedOutcome["historyFrames"], details: Record<string, unknown>): MixedOutcome {
  return { answer, stop, steps: walk.steps, pathLengthM: walk.pathLengthM, pathLengthSteps: walk.actions, frames: walk.frames, historyFrames, map: walk.map, details: { ...details, found: walk.found } };
}

async function memoryOnly(question: MixedQuestion, context: MixedAgentContext): Promise<MixedOutcome> {
  const { recalled, logs, lastEnd } = await recallAll(context);
  const answer = answerOf(executeMixedProgram(question.program, historyView(logs, () => lastEnd)));
  const lastDay = recalled[recalled.length - 1]?.day ?? 0;
  return stayed(context, answer, retrievedFrames(question.program, recalled, daysAsked(question.program, lastDay, true)), { nowFrom: "last memory" });
}

async function exploreOnly(question: MixedQuestion, context: MixedAgentContext): Promise<MixedOutcome> {
  const wanted = lookFor(question.program);
  const walk = await LiveWalk.start(context.env, { framesDir: context.framesDir, shows: (obs) => showsAny(obs, wanted.types), maxSteps: context.maxSteps });
  const stop = walk.found ? "found" : await walk.explore();
  if (walk.found) await walk.lookOver(wanted.types);
  const now = await seenNow(walk, context.framesDir);
  return walked(walk, answerOf(executeMixedProgram(question.program, presentOnlyView(now))), stop, [], { pastFrom: "present" });
}

async function recallExplore(question: MixedQuestion, context: MixedAgentContext): Promise<MixedOutcome> {
  const { recalled, logs, lastEnd } = await recallAll(context);
  const lastDay = recalled[recalled.length - 1]?.day ?? 0;
  if (!asksAboutNow(question.program)) {
    const answer = answerOf(executeMixedProgram(question.program, historyView(logs, () => undefined)));
    return stayed(context, answer, retrievedFrames(question.program, recalled, daysAsked(question.program, lastDay, false)), { changed: false });
  }
  const wanted = lookFor(question.program);
  const walk = await LiveWalk.start(context.env, { framesDir: context.framesDir, shows: (obs) => showsAny(obs, wanted.types), maxSteps: context.maxSteps });
  for (const day of context.history.days) await walk.remember(day.frames, day.cameraHeight);
  // where it last saw the thing: the latest day whose memory places it
  const remembered = wanted.walkTo === undefined ? undefined : [...recalled].reverse().map((r) => logPosition(r.log, wanted.walkTo!, r.log.steps.length - 1)).find((p) => p !== undefined);
  let reached = false;
  if (remembered && !walk.found) reached = await walk.walkTo(remembered[0], remembered[2]);
  if (!walk.found) await walk.lookAround();
  const stop = walk.found ? "found" : await walk.explore();
  if (walk.found) await walk.lookOver(wanted.types);
  const seen = await seenNow(walk, context.framesDir);
  const now = walk.found ? seen : seenOverRemembered(seen, lastEnd);
  const answer = answerOf(executeMixedProgram(question.program, historyView(logs, () => now)));
  const historyFrames = retrievedFrames(question.program, recalled, [...daysAsked(question.program, lastDay, false), lastDay]);
  return walked(walk, answer, stop, historyFrames, { changed: true, remembered: remembered ?? null, reachedRemembered: reached });
}

const AGENTS: Record<MixedAgentName, (question: MixedQuestion, context: MixedAgentContext) => Promise<MixedOutcome>> = {
  "memory-only": memoryOnly,
  "explore-only": exploreOnly,
  "recall-explore": recallExplore,
};

/**
 * Answers one question with a built-in agent: its program form, or with `context.model` the same
 * loop answered by the model from the history frames retrieved and the frames seen now (the
 * program's own answer kept in `details.programAnswer`, the model's call in `details.trace`).
 */
export async function answerMixedQuestion(agent: MixedAgentName, question: MixedQuestion, context: MixedAgentContext): Promise<MixedOutcome> {
  const outcome = await AGENTS[agent](question, context);
  if (!context.model) return outcome;
  const answered = await answerWithModel(context.model, question.question, context.history, outcome.historyFrames, { framesDir: context.framesDir, frames: outcome.frames });
  return { ...outcome, answer: answered.answer, details: { ...outcome.details, programAnswer: outcome.answer, trace: answered.trace }, usage: answered.trace.usage };
}
