/**
 * The explorers of `eqa explore`, by name: the frontier explorer (then, when given, an EM-EQA
 * agent answering from the frames it collected: OpenEQA's A-EQA baseline), Fine-EQA (eqakit's
 * and the reference mode), and `external`, an active agent of the user's own. Adding an explorer
 * is one entry in `EXPLORERS` (see `Explorer`).
 */
import { UserError, canonicalJson } from "../../core/index.js";
import { FrameFolderWriter, loadSharp, openEpisode, prepareImage, type Episode, type ImageOptions, type PreparedImage } from "../../episodes/index.js";
import type { CallPlan, UsageTotals } from "../../models/index.js";
import type { Agent } from "../types.js";
import { exploreExternal } from "./external.js";
import { exploreFrontier, type ExplorationResult } from "./explorer.js";
import { STOP_CHECK_ROLE, exploreFineEqa, fineEqaBudget, fineEqaPromptHashes, fineEqaRequests, type FineEqaResult } from "./fine-eqa.js";
import { FINE_EQA_REFERENCE_OBSERVATION, exploreFineEqaReference, fineEqaReferencePromptHashes, fineEqaReferenceRequests, type FineEqaReferenceResult } from "./fine-eqa-reference.js";
import { askedQuestion } from "./multiple-choice.js";
import type { ActiveEpisode, ExplorationOutcome, Explorer, ExplorerContext, ExplorerPlanContext } from "./explorer-types.js";

/** The file name an episode's trajectory and frame folder take (characters outside [A-Za-z0-9._-] become _; so do the dots of `.` and `..`, which name folders already). */
export function episodeFileName(id: string): string {
  const name = id.replace(/[^A-Za-z0-9._-]/g, "_");
  return name === "." || name === ".." ? name.replaceAll(".", "_") : name;
}

/** The frontier explorer's step budget when --max-steps is not given. */
export const FRONTIER_MAX_STEPS = 500;
/** Answering agents whose requests depend only on the frames' images (not on depth, poses or masks): `eqa explore --dry-run` plans them on a stand-in recording. */
export const STAND_IN_ANSWERERS: ReadonlySet<string> = new Set(["blind", "vlm", "socratic"]);

const noPrompts = (): undefined => undefined;
const noNotes = (): string[] => [];

/** OpenEQA's frontier explorer; the answering agent, when given, answers from the frames it wrote. */
const frontier: Explorer = {
  name: "frontier",
  answersWithVlm: false,
  takesAnswerer: true,
  ownAgent: false,
  concurrent: false,
  roles: [],
  promptHashes: noPrompts,
  planNotes: noNotes,
  plan: async (pending, context, plan) => {
    await planFrontierAnswerer(pending, context, plan);
    return 0;
  },
  explore: async (episode, context) => {
    const { r, frames } = await exploreFrontierWritingFrames(context);
    const answered = context.answerer ? await answerFromFrames(context.answerer.agent, episode, context.framesDir) : undefined;
    return {
      answer: answered?.answer ?? null,
      answerSource: context.answerer ? "agent" : "none",
      stop: r.stop,
      positions: r.steps.map((s) => ({ action: s.action ?? null, success: s.success, state: s.state })),
      pathLengthM: r.pathLengthM,
      pathLengthSteps: r.pathLengthSteps,
      frames,
      explorerMsPerStep: r.explorerMsPerStep,
      map: r.map,
      usage: answered?.usage ?? null,
      details: { goals: r.goals.length, replans: r.replans, actions: r.actions, moves: r.moves, ...(answered ? { trace: answered.trace } : {}) },
    };
  },
};

/** Explores with the frontier explorer, writing each observation to the episode's frame folder. */
async function exploreFrontierWritingFrames(context: ExplorerContext): Promise<{ r: ExplorationResult; frames: number }> {
  const writer = new FrameFolderWriter(context.framesDir);
  // The writer numbers frames in call order: one write at a time, in the order observed.
  // A refused write (a full disk) ends the exploration at the next observation.
  let writing: Promise<void> = Promise.resolve();
  let refused: { error: unknown } | undefined;
  let r: ExplorationResult;
  try {
    r = await exploreFrontier(context.env, {
      ...(context.maxSteps !== undefined ? { maxSteps: context.maxSteps } : {}),
      onObservation: (_i, obs) => {
        if (refused) throw refused.error;
        writing = writing.then(async () => {
          if (!refused) await writer.write(obs);
        }).catch((error: unknown) => {
          refused ??= { error };
        });
      },
    });
  } finally {
    await writing;
  }
  if (refused) throw refused.error;
  return { r, frames: writer.frames };
}

/** The EM-EQA agent's answer from the frames an exploration wrote. */
async function answerFromFrames(agent: Agent, episode: ActiveEpisode, framesDir: string): Promise<{ answer: string | null; usage: UsageTotals | null; trace: unknown }> {
  const opened = await openEpisode(framesDir, episodeFileName(episode.questionId));
  const answered = await agent.answer(emEqaQuestion(episode, episodeFileName(episode.questionId)), opened);
  return { answer: answered.answer, usage: answered.trace.usage, trace: answered.trace };
}

/** An active episode as the EM-EQA question an answering agent is asked, about the recording `history`. */
function emEqaQuestion(episode: ActiveEpisode, history: string): Parameters<Agent["answer"]>[0] {
  return { questionId: episode.questionId, question: askedQuestion(episode), answer: episode.answer ?? "", category: episode.category ?? "", episodeHistory: history } as Parameters<Agent["answer"]>[0];
}

/**
 * The answering agent's calls: the frames are not known before exploring, so an agent whose
 * requests depend only on the images answers from a stand-in recording of blank frames of the
 * run's size, as long as the step budget allows; another is counted once per episode.
 */
async function planFrontierAnswerer(pending: readonly ActiveEpisode[], context: ExplorerPlanContext, plan: CallPlan): Promise<void> {
  const answerer = context.answerer;
  if (!answerer || pending.length === 0) return;
  if (!STAND_IN_ANSWERERS.has(answerer.agent.name)) {
    plan.addEstimate({ role: "agent", model: answerer.models[0]?.name ?? answerer.agent.name, calls: pending.length, cached: 0, promptTokens: null, completionTokens: null, dollars: null, upperBound: false });
    return;
  }
  const recording = await blankRecording(context.observation, (context.maxSteps ?? FRONTIER_MAX_STEPS) + 1);
  for (const e of pending) await (answerer.fresh?.() ?? answerer.agent).answer(emEqaQuestion(e, recording.id), recording);
}

/**
 * An episode of `frames` plain frames of the observation's size, each of its own colour (an agent
 * that describes each image once, as the socratic agent does, is asked about every frame); only
 * the frames an agent samples are made, each once.
 */
async function blankRecording(observation: { width: number; height: number }, frames: number): Promise<Episode> {
  const sharp = await loadSharp();
  const prepared = new Map<string, Promise<PreparedImage>>();
  const frame = (index: number, image: ImageOptions | undefined): Promise<PreparedImage> => {
    const key = `${index}\u0000${canonicalJson(image ?? {})}`;
    if (!prepared.has(key)) {
      const colour = { r: index & 255, g: (index >> 8) & 255, b: 128 };
      prepared.set(key, sharp({ create: { width: observation.width, height: observation.height, channels: 3, background: colour } }).png().toBuffer().then((png) => prepareImage(png, image)));
    }
    return prepared.get(key)!;
  };
  return {
    id: "stand-in-recording",
    path: "stand-in-recording",
    kind: "images",
    frameCount: frames,
    notes: [],
    images: (indices, image) => Promise.all(indices.map(async (index) => ({ ...(await frame(index, image)), index }))),
    frame: () => Promise.reject(new Error("a stand-in recording has no geometry")),
  };
}

/** The parts both Fine-EQA modes share: the VLM answers, its roles, its observation steps. */
const fineEqaParts = {
  answersWithVlm: true,
  takesAnswerer: false,
  ownAgent: false,
  concurrent: false,
  roles: ["explorer", STOP_CHECK_ROLE],
  planNotes: (steps: number | null): string[] => [
    steps === null ? "the step budget of some scenes is unknown before their environment starts: each counts as one step (pass --max-steps for a bound)" : `at most ${steps} step(s) in all: each step a stop check and a region check, so the calls are an upper bound (an episode ends when the VLM can answer)`,
  ],
} as const;

/** Fine-EQA's options for one episode. */
function fineEqaOptions(episode: ActiveEpisode, context: ExplorerContext): { question: string; framesDir: string; maxSteps?: number; image?: ImageOptions } {
  return { question: askedQuestion(episode), framesDir: context.framesDir, ...(context.maxSteps !== undefined ? { maxSteps: context.maxSteps } : {}), ...(context.image ? { image: context.image } : {}) };
}

/** The VLM of an explorer that answers with it; a UserError naming --model when the run has none. */
function requireVlm(name: string, context: ExplorerContext): NonNullable<ExplorerContext["vlm"]> {
  if (!context.vlm) throw new UserError(`the ${name} explorer needs a vision-language model`, { field: "--model" });
  return context.vlm;
}

/** What either Fine-EQA mode's result tells the run, with the mode's own `details` recorded beside. */
function fineEqaOutcome(r: FineEqaResult | FineEqaReferenceResult, details: Record<string, unknown>): ExplorationOutcome {
  return {
    answer: r.answer,
    answerSource: r.answerSource,
    stop: r.stop,
    positions: r.steps.map((s) => ({ action: s.action ?? null, success: s.success, state: s.state, ...(s.via ? { via: s.via } : {}) })),
    pathLengthM: r.pathLengthM,
    pathLengthSteps: r.pathLengthSteps,
    frames: r.frames,
    explorerMsPerStep: r.explorerMsPerStep,
    map: r.map,
    usage: r.trace.usage,
    details,
  };
}

/**
 * Fine-EQA's calls per pending episode, as a most: the question's regions, then at each step of
 * the budget a stop check and a region check (and what `perStep` adds), and once the answer;
 * built by its own code on a blank observation of the run's size. Returns the steps in all.
 */
async function planFineEqa(pending: readonly ActiveEpisode[], context: ExplorerPlanContext, plan: CallPlan, perStep?: (e: ActiveEpisode, image: PreparedImage, steps: number) => Promise<void>): Promise<number | null> {
  const vlm = context.vlm;
  if (!vlm) return 0;
  const sharp = await loadSharp();
  const blank = await sharp({ create: { width: context.observation.width, height: context.observation.height, channels: 3, background: "#808080" } }).png().toBuffer();
  const image = await prepareImage(blank, context.image);
  let steps: number | null = 0;
  for (const e of pending) {
    const bounds = context.maxSteps === undefined ? await context.sceneBounds?.(e.scene) : undefined;
    const budget = context.maxSteps ?? (bounds ? fineEqaBudget(bounds) : undefined);
    if (budget === undefined) steps = null;
    else if (steps !== null) steps += budget;
    await plan.repeat(vlm, "explorer", fineEqaRequests.regions(e.question), 1);
    await plan.repeat(vlm, STOP_CHECK_ROLE, fineEqaRequests.stopCheck(e.question, image), budget ?? 1);
    await plan.repeat(vlm, "explorer", fineEqaRequests.viewRegion(image), Math.max(0, (budget ?? 1) - 1));
    await perStep?.(e, image, Math.max(0, (budget ?? 1) - 1));
    // the answer from a view, or the blind answer when the budget runs out: one of the two
    await plan.repeat(vlm, "explorer", fineEqaRequests.answer(e.question, image), 1);
  }
  return steps;
}

/** eqakit's Fine-EQA (EXPRESS-Bench): regions, look-arounds, a stop check at each view. */
const fineEqa: Explorer = {
  name: "fine-eqa",
  about: "eqakit's",
  ...fineEqaParts,
  promptHashes: fineEqaPromptHashes,
  plan: (pending, context, plan) => planFineEqa(pending, context, plan),
  explore: async (episode, context) => {
    const r = await exploreFineEqa(context.env, requireVlm("fine-eqa", context).model, fineEqaOptions(episode, context));
    const details = { regions: r.regions, roundsByRegion: r.roundsByRegion, explorationSteps: r.explorationSteps, budget: r.budget, badReplies: r.badReplies, stopChecks: r.stopChecks, calls: r.trace.calls };
    return { ...fineEqaOutcome(r, details), confidence: [...r.stopChecks].reverse().find((c) => c.confidence !== null)?.confidence ?? null };
  },
};

/** Fine-EQA as EXPRESS-Bench's published code runs it (value and region maps, lettered choices). */
const fineEqaReference: Explorer = {
  name: "fine-eqa:reference",
  about: "as EXPRESS-Bench's published code runs it",
  ...fineEqaParts,
  // the reference observes 512×512 (fine_eqa.yaml)
  observation: FINE_EQA_REFERENCE_OBSERVATION,
  promptHashes: fineEqaReferencePromptHashes,
  plan: (pending, context, plan) =>
    planFineEqa(pending, context, plan, async (e, image, steps) => {
      // each step at most: the lettered direction, the worth of the view, the region's point (3 candidates)
      const vlm = context.vlm!;
      await plan.repeat(vlm, "explorer", fineEqaReferenceRequests.direction(e.question, image, 3), steps);
      await plan.repeat(vlm, "explorer", fineEqaReferenceRequests.worth(e.question, image), steps);
      await plan.repeat(vlm, "explorer", fineEqaReferenceRequests.regionPoint("kitchen", image, 3), steps);
    }),
  explore: async (episode, context) => {
    const r = await exploreFineEqaReference(context.env, requireVlm("fine-eqa:reference", context).model, fineEqaOptions(episode, context));
    const details = { regions: r.regions, explorationSteps: r.explorationSteps, budget: r.budget, observation: r.observation, valueUpdates: r.valueUpdates, regionPoints: r.regionPoints, moves: r.moves, finalMove: r.finalMove, badReplies: r.badReplies, calls: r.trace.calls };
    return fineEqaOutcome(r, details);
  },
};

/** An active agent of the user's own (the agent protocol): several episodes at once, each with its own agent session and environment. */
const external: Explorer = {
  name: "external",
  answersWithVlm: false,
  takesAnswerer: false,
  ownAgent: true,
  concurrent: true,
  roles: ["agent"],
  promptHashes: noPrompts,
  plan: () => Promise.resolve(0),
  planNotes: () => ["your own agent's model calls (model/complete) are known only as it makes them: not counted"],
  explore: async (episode, context) => {
    if (!context.activeAgent) throw new Error("the external explorer needs its activeAgent");
    const r = await exploreExternal(context.activeAgent, episode, context.env, context.framesDir, { ...(context.maxSteps !== undefined ? { maxSteps: context.maxSteps } : {}), ...(context.episodeTimeMs !== undefined ? { timeMs: context.episodeTimeMs } : {}), ...(context.image ? { image: context.image } : {}) });
    return {
      answer: r.answer,
      answerSource: r.stop === "answered" ? "agent" : "none",
      stop: r.stop,
      positions: r.steps,
      pathLengthM: r.pathLengthM,
      pathLengthSteps: r.pathLengthSteps,
      frames: r.frames,
      explorerMsPerStep: r.agentMsPerStep,
      map: r.map,
      usage: r.trace.usage,
      details: { actions: r.pathLengthSteps, moves: r.moves, failedActions: r.failedActions, trace: r.trace },
      confidence: r.confidence,
    };
  },
};

/** Every explorer, by name; `EXPLORER_NAMES` are those chosen by name (`--agent NAME`). */
export const EXPLORERS = { frontier, "fine-eqa": fineEqa, "fine-eqa:reference": fineEqaReference, external } as const satisfies Readonly<Record<string, Explorer>>;
/** The explorers' names: the built-in ones and `external`, an active agent of the user's own. */
export type ExplorerName = keyof typeof EXPLORERS;
/** The explorers chosen by name with `--agent`, in `EXPLORERS`' order. */
export const EXPLORER_NAMES: readonly ExplorerName[] = (Object.keys(EXPLORERS) as ExplorerName[]).filter((name) => !EXPLORERS[name].ownAgent);

/** The explorer of that name; a UserError naming `--agent` for one eqakit does not have. */
export function createExplorer(name: string): Explorer {
  if (!Object.hasOwn(EXPLORERS, name)) throw new UserError(`no explorer named ${name}`, { field: "--agent" }, `explorers: ${EXPLORER_NAMES.join(", ")}`);
  return EXPLORERS[name as ExplorerName];
}

/** The explorers an EM-EQA agent may answer for (`--em-agent`), by name. */
export function answeringExplorerNames(): ExplorerName[] {
  return EXPLORER_NAMES.filter((name) => EXPLORERS[name].takesAnswerer);
}

/** The explorers chosen by name, as `eqa explore --help` lists them: "frontier, fine-eqa (eqakit's) or …". */
export function explorerChoices(): string {
  const named = EXPLORER_NAMES.map((name) => (EXPLORERS[name].about ? `${name} (${EXPLORERS[name].about})` : name));
  return named.length > 1 ? `${named.slice(0, -1).join(", ")} or ${named[named.length - 1]}` : named.join("");
}

/** An explorer given by name or as itself. */
export function resolveExplorer<Episode extends ActiveEpisode>(explorer: ExplorerName | Explorer<Episode>): Explorer<Episode> {
  return typeof explorer === "string" ? createExplorer(explorer) : explorer;
}
