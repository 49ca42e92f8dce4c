/**
 * The kinds of run, each defined once: its name (as manifests and summaries write it), what it
 * is, the commands that write it (with the flag that selects it and the default of their
 * `--out`), whether it ends with a summary, and how a folder written before manifests existed is
 * recognised. `RunKind` is derived from these definitions; the manifest's kind, its check of a
 * folder's kind ({@link inferRunKind} in manifest.ts) and the list of commands whose folders keep
 * `commands.jsonl` ({@link runFolderOf}) read them, so a kind added here is known to all of them.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { eqakitVersion } from "../core/index.js";
import { readJsonl } from "./jsonl.js";
import { defaultRunPath } from "./run-dir.js";

/** A command that writes a run of a kind into its `--out`. */
export interface RunCommand {
  /** The command as typed after `eqa`: `answer`, `rm score`. */
  readonly command: string;
  /** The flag that makes the command write this kind, where it writes another (or none) without it: `--validate`. */
  readonly flag?: string;
  /** Where `--out` goes when it is left out: `runs/<defaultOut>-DATE` (none: the command needs --out, or has its own default). */
  readonly defaultOut?: string;
  /** A flag with which the command writes no run folder: `eqa reproduce --published` writes the published table alone. */
  readonly noRunWith?: string;
}

/** What a folder written before manifests holds, for recognising its kind. */
export interface RunFolderProbe {
  /** Whether the folder holds `name`. */
  has(name: string): boolean;
  /** The first record of the JSONL file `name` in the folder, as an object (undefined when none). */
  firstRecord(name: string): Record<string, unknown> | undefined;
}

export interface RunKindDefinition {
  readonly kind: string;
  /** What a run of the kind holds, in a few words (for messages and docs). */
  readonly description: string;
  /** The commands that write it. */
  readonly commands: readonly RunCommand[];
  /** Whether a finished run of the kind has a `summary.json` (or `bench.json`). */
  readonly summary: boolean;
  /**
   * How a folder written before manifests (and without a summary naming its kind) is
   * recognised; kinds are tried in the order of {@link RUN_KINDS}.
   */
  readonly recognise: (folder: RunFolderProbe) => boolean;
}

/** Every kind of run, in the order a folder without manifest or summary is matched against them. */
export const RUN_KINDS = [
  {
    kind: "run",
    description: "an EM-EQA agent's answers scored with LLM-Match, in one folder",
    commands: [{ command: "run", defaultOut: "run" }],
    summary: true,
    recognise: (f) => f.has("summary.answer.json") || f.has("summary.score.json"),
  },
  {
    kind: "demo",
    description: "the demo: recordings, a generated TAG-EQA set and the runs on it",
    commands: [{ command: "demo" }],
    summary: true,
    recognise: (f) => f.has("recordings") && f.has("dataset") && f.has("runs"),
  },
  {
    kind: "explore",
    description: "active EQA episodes explored in an environment (and their judgements)",
    commands: [{ command: "explore", defaultOut: "explore" }, { command: "merge" }],
    summary: true,
    recognise: (f) => f.has("episodes.jsonl"),
  },
  {
    kind: "mixed",
    description: "Mixed EQA episodes: a history of past days and the live home, answered and scored exactly",
    // eqa explore writes it when --episodes is a Mixed EQA set (eqakit-mixed/1)
    commands: [{ command: "explore" }, { command: "merge" }],
    summary: true,
    recognise: (f) => f.has("mixed.jsonl"),
  },
  {
    kind: "answer",
    description: "an EM-EQA agent's answers to benchmark questions",
    commands: [{ command: "answer", defaultOut: "answer" }, { command: "merge" }],
    summary: true,
    recognise: (f) => f.has("traces.jsonl"),
  },
  {
    kind: "memory",
    description: "scene-graph memories of episodes",
    commands: [{ command: "memory build" }],
    summary: false,
    recognise: (f) => f.has("memories.jsonl"),
  },
  {
    kind: "rm-score",
    description: "a reward model's scores of instances",
    commands: [{ command: "rm score", defaultOut: "rm-score" }],
    summary: true,
    recognise: (f) => f.has("evaluations.jsonl"),
  },
  {
    kind: "rm-build",
    description: "a reward-model benchmark built from answers and their scores",
    commands: [{ command: "rm build", defaultOut: "rm-build" }],
    summary: false,
    recognise: (f) => f.has("responses.jsonl"),
  },
  {
    kind: "rm-review",
    description: "reward-model instances after the human review, split again",
    commands: [{ command: "rm review", flag: "--import" }],
    summary: false,
    recognise: (f) => f.has("reviewed.jsonl"),
  },
  {
    kind: "tag-validate",
    description: "the structured TAG-EQA judge validated on perturbed true answers",
    commands: [{ command: "score-tag", flag: "--validate", defaultOut: "validate-tag" }],
    summary: true,
    recognise: (f) => f.has("validation.jsonl"),
  },
  {
    kind: "answer-tag",
    description: "an agent's answers to TAG-EQA questions",
    commands: [{ command: "answer-tag" }],
    summary: false,
    recognise: (f) => f.has("answers.jsonl"),
  },
  {
    kind: "generate-tag",
    description: "a TAG-EQA question set generated from trajectories",
    commands: [{ command: "generate tag" }],
    summary: false,
    recognise: (f) => f.has("questions.json") && f.has("stats.json"),
  },
  {
    kind: "generate-mixed",
    description: "a Mixed EQA set generated in the built-in simulator: days recorded, changes while away, questions",
    commands: [{ command: "generate mixed" }],
    summary: false,
    recognise: (f) => f.has("episodes.json") && f.has("stats.json") && f.has("homes"),
  },
  {
    kind: "tag-structured",
    description: "TAG-EQA answers scored by the structured grounded judge",
    commands: [{ command: "score-tag", defaultOut: "score-tag" }],
    summary: true,
    recognise: (f) => f.has("judgements.jsonl") && "groundedScore" in (f.firstRecord("judgements.jsonl") ?? {}),
  },
  {
    kind: "la-eqa",
    description: "answers to LA-EQA's questions scored with its judge (1-5) and SPL",
    commands: [{ command: "score", defaultOut: "score" }],
    summary: true,
    // always written with a manifest, which names the kind
    recognise: () => false,
  },
  {
    kind: "llm-match",
    description: "answers scored with LLM-Match",
    commands: [{ command: "score", defaultOut: "score" }, { command: "merge" }],
    summary: true,
    recognise: (f) => f.has("judgements.jsonl"),
  },
  {
    kind: "rm-bench",
    description: "a reward model benchmarked against ground-truth scores",
    commands: [{ command: "rm bench", defaultOut: "rm-bench" }],
    summary: true,
    // its bench.json names its kind
    recognise: () => false,
  },
  {
    kind: "reproduce",
    description: "a paper's table reproduced, each row a run of its own",
    commands: [{ command: "reproduce", defaultOut: "reproduce", noRunWith: "--published" }],
    summary: true,
    // its summary.json names its kind
    recognise: () => false,
  },
] as const satisfies readonly RunKindDefinition[];

/** A kind of run, as manifests and summaries name it. */
export type RunKind = (typeof RUN_KINDS)[number]["kind"];

/**
 * Each kind's name by itself, for code that names a kind: `openRun({ kind: RUN_KIND.explore })`,
 * `kind: typeof RUN_KIND["rm-score"]` in a summary's type. Nowhere but here is a kind written as a
 * string (`test/store/kind-names.test.ts`).
 */
export const RUN_KIND = Object.fromEntries(RUN_KINDS.map((definition) => [definition.kind, definition.kind])) as { readonly [K in RunKind]: K };

/** What every kind's summary begins with: its kind, the eqakit that wrote it, when, in how long, and the run's configuration. */
export interface RunSummaryHead<Kind extends RunKind> {
  kind: Kind;
  eqakitVersion: string;
  createdAt: string;
  wallTimeMs: number;
  config: Record<string, unknown>;
}

/** A summary's head for a run of `kind` that took `wallTimeMs`, written now by this eqakit. */
export function summaryHead<Kind extends RunKind>(kind: Kind, wallTimeMs: number, config: Record<string, unknown>): RunSummaryHead<Kind> {
  return { kind, eqakitVersion, createdAt: new Date().toISOString(), wallTimeMs: Math.round(wallTimeMs), config };
}

const BY_KIND = new Map<string, RunKindDefinition>(RUN_KINDS.map((definition) => [definition.kind, definition]));

/** True for the name of a kind of run. */
export function isRunKind(value: string): value is RunKind {
  return BY_KIND.has(value);
}

/** The definition of `kind`. */
export function runKindDefinition(kind: RunKind): RunKindDefinition {
  return BY_KIND.get(kind)!;
}

/** Every command that writes a run folder, as typed after `eqa` (`rm score`). */
export function runCommands(): string[] {
  return [...new Set(RUN_KINDS.flatMap((definition) => definition.commands.map((c) => c.command)))];
}

/** A flag as commander keeps its value: `--finetune-fraction` → `finetuneFraction`. */
function flagKey(flag: string): string {
  return flag.replace(/^--/, "").replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());
}

/**
 * The run folder `command` run with `flags` writes: the `--out` given, else the command's
 * default for the kind these flags select (`runs/<defaultOut>-DATE`, dated `now`); undefined
 * when the command writes no run folder with these flags, or needs --out and was given none.
 */
export function runFolderOf(command: string, flags: Record<string, unknown>, now = new Date()): string | undefined {
  const candidates = RUN_KINDS.flatMap((definition): readonly RunCommand[] => definition.commands.filter((c) => c.command === command));
  const set = (flag: string | undefined): boolean => flag !== undefined && flags[flagKey(flag)] !== undefined && flags[flagKey(flag)] !== false;
  const chosen = candidates.find((c) => set(c.flag)) ?? candidates.find((c) => c.flag === undefined);
  if (!chosen || set(chosen.noRunWith)) return undefined;
  if (typeof flags.out === "string") return flags.out;
  return chosen.defaultOut !== undefined ? defaultRunPath(chosen.defaultOut, now) : undefined;
}

/** The kind whose files `dir` holds, for a folder without a manifest or a summary naming its kind (see `inferRunKind`). */
export function recogniseRunKind(dir: string): RunKind | undefined {
  const probe: RunFolderProbe = {
    has: (name) => existsSync(join(dir, name)),
    firstRecord: (name) => readJsonl(join(dir, name), (v) => (typeof v === "object" && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined), false).records[0],
  };
  return RUN_KINDS.find((definition) => definition.recognise(probe))?.kind;
}
