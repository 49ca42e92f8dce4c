/**
 * What every explorer of `eqa explore` is: one `Explorer` object, registered by name in
 * `EXPLORERS` (`explorers.ts`), that the run (`runExploration`), its dry run (`planExploration`),
 * the explore workflow and the command read instead of asking which explorer they run.
 */
import type { ImageOptions } from "../../episodes/index.js";
import type { CallPlan, ChatModel, ModelSpec, UsageTotals } from "../../models/index.js";
import type { AgentState, Environment, Point3, SceneBounds } from "../../sim/index.js";
import type { Agent } from "../types.js";
import type { ExternalActiveAgent } from "../external/index.js";
import type { OccupancyMap } from "./occupancy.js";

/**
 * An active episode: a question in a scene, from a start state. A set may give its episodes
 * fields beyond these (a Mixed EQA episode's history): the run keeps them (they are part of the
 * episode's key), and only an explorer typed for them (`Explorer<ThatEpisode>`) reads them.
 */
export interface ActiveEpisode {
  questionId: string;
  question: string;
  answer?: string;
  choices?: string[];
  category?: string;
  scene: string;
  start?: AgentState;
  goalPosition?: Point3;
  /** Ground-truth path length, metres. */
  gtPathLengthM?: number;
  /** Ground-truth path length, steps (primitive actions). */
  gtPathSteps?: number;
}

/** The models and budgets a run gives its explorer (each explorer reads those it uses). */
export interface ExplorerSettings {
  /** The VLM of an explorer that answers itself (`answersWithVlm`). */
  vlm?: { model: ChatModel; spec: ModelSpec };
  /** An explorer that takes an answerer: the EM-EQA agent answering from the collected frames (none: exploration only). */
  answerer?: { agent: Agent; models: ModelSpec[] };
  /** The user's own active agent (`ownAgent`). */
  activeAgent?: ExternalActiveAgent;
  /** The user's own agent: each episode's wall-time budget, milliseconds (--episode-time). */
  episodeTimeMs?: number;
  /** Most actions (frontier, the user's own agent); Fine-EQA: a fixed step budget instead of the area rule. */
  maxSteps?: number;
  image?: ImageOptions;
}

/** What an explorer is given for one episode beside the episode: the environment, reset to the episode's start, and the empty folder its frames go to. */
export interface ExplorerContext extends ExplorerSettings {
  env: Environment;
  framesDir: string;
}

/** What an explorer plans its calls with (`eqa explore --dry-run`), starting no environment. */
export interface ExplorerPlanContext {
  vlm?: ModelSpec;
  /** The answering agent, built on the plan's runtime; `fresh` builds another like it, that has described no frame yet. */
  answerer?: { agent: Agent; models: ModelSpec[]; fresh?: () => Agent };
  maxSteps?: number;
  image?: ImageOptions;
  /** The observations' size in pixels. */
  observation: { width: number; height: number };
  /** A scene's bounds when they can be had without starting anything (the built-in simulator). */
  sceneBounds?: (scene: string) => Promise<SceneBounds | undefined>;
}

/** One episode explored, as every explorer reports it to the run. */
export interface ExplorationOutcome {
  answer: string | null;
  answerSource: "view" | "blind" | "agent" | "none";
  stop: string;
  positions: { action: string | null; success: boolean; state: AgentState; via?: [number, number][] }[];
  pathLengthM: number;
  pathLengthSteps: number;
  frames: number;
  explorerMsPerStep: number;
  map: OccupancyMap;
  usage: UsageTotals | null;
  /** The explorer's own record of the episode (its moves, checks, trace), kept in the episode's record. */
  details: Record<string, unknown>;
  /** ceᵢ: the stop check's P(yes) for the view the answer came from (its last check with a confidence), when the explorer asks one. */
  confidence?: number | null;
}

/**
 * An explorer. Everything the run, the dry run and the command would otherwise decide by the
 * explorer's name is a part of it, so that adding an explorer is one entry in `EXPLORERS`.
 */
export interface Explorer<Episode extends ActiveEpisode = ActiveEpisode> {
  /** Its name: `--agent NAME`, and the `explorer` of each record. */
  readonly name: string;
  /** Said of it in `eqa explore --help` after its name, when anything. */
  readonly about?: string;
  /** Whether it answers itself with its VLM (Fine-EQA): it needs `--model` and takes no answering agent. */
  readonly answersWithVlm: boolean;
  /** Whether an EM-EQA agent may answer from the frames it collects (`--em-agent`). */
  readonly takesAnswerer: boolean;
  /** Whether it is the user's own active agent, chosen by its command or module (`--agent exec:…`), not by name. */
  readonly ownAgent: boolean;
  /** Whether several episodes may run at once (`--concurrency`), each with its own environment; else one at a time. */
  readonly concurrent: boolean;
  /** The model roles its own calls are recorded under (the first is the VLM's); the answering agent's are its own. */
  readonly roles: readonly string[];
  /** The observations' size it runs at unless `--width` and `--height` are given. */
  readonly observation?: { readonly width: number; readonly height: number };
  /** The hashes of the prompts it sends, part of each episode's key; undefined when it sends none of its own. */
  readonly promptHashes: () => Record<string, string> | undefined;
  /** `--dry-run`: puts the calls of the pending episodes on `plan`, as a most; returns their steps in all (null when some scene's budget is unknown). */
  readonly plan: (pending: readonly Episode[], context: ExplorerPlanContext, plan: CallPlan) => Promise<number | null>;
  /** `--dry-run`: the notes printed under the plan about its calls, given the steps `plan` returned. */
  readonly planNotes: (steps: number | null) => string[];
  /** Explores one episode (the environment already reset to its start). */
  readonly explore: (episode: Episode, context: ExplorerContext) => Promise<ExplorationOutcome>;
}
