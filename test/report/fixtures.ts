import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Question } from "../../src/core/index.js";
import { aggregateLlmMatch } from "../../src/eval/index.js";

/** One question of a synthetic run: the answer given and, when judged, its mark. */
export interface FixtureAnswer {
  id: string;
  answer: string | null;
  /** LLM-Match's mark; undefined: not judged; null: judging failed. */
  score?: number | null;
  /** What the judge was sent when robust LLM-Match neutralised text addressed to it. */
  neutralisedTo?: string;
  /** Frames the agent used. */
  frames?: number[];
  /** The answer failed with this message (no trace, as `eqa answer` records it). */
  error?: string;
  status?: string;
}

export interface FixtureRun {
  benchmark: string;
  questions: Question[];
  answers: FixtureAnswer[];
  framesRoot?: string;
  /** Write traces.jsonl; false for a run that only scored predictions. */
  answered?: boolean;
  config?: Record<string, unknown>;
}

const usage = (calls: number) => ({ calls, cacheHits: 0, promptTokens: 100 * calls, completionTokens: 5 * calls, thinkingTokens: 0, cachedPromptTokens: 0, cachedCompletionTokens: 0, images: 0, retries: 0, failures: 0, latencyMs: 10 * calls });
const cost = (role: string, model: string, calls: number) => {
  const part = { calls, cacheHits: 0, promptTokens: 100 * calls, completionTokens: 5 * calls, thinkingTokens: 0, dollars: calls * 0.0003 };
  return { roles: [{ role, model, ...part }], total: part, unpriced: [], prices: ["eqakit prices"] };
};

/** A benchmark file of OpenEQA's shape. */
export function writeBenchmark(path: string, questions: Question[]): void {
  writeFileSync(path, JSON.stringify(questions.map((q) => ({ question_id: q.questionId, question: q.question, answer: q.answer, category: q.category, episode_history: q.episodeHistory }))));
}

/**
 * A run directory as `eqa run` (or `eqa answer`, when nothing is scored) writes it: traces in
 * the order given (the order answers finished), judgements, and a summary whose LLM-Match
 * aggregates eqakit's own code computes.
 */
export function writeRun(dir: string, run: FixtureRun): void {
  mkdirSync(dir, { recursive: true });
  const byId = new Map(run.questions.map((q) => [q.questionId, q]));
  const created = { eqakitVersion: "0.1.0", createdAt: "2026-05-04T10:20:30.000Z" };
  const failed = run.answers.filter((a) => a.error !== undefined);
  if (run.answered !== false) {
    const lines = run.answers.map((a) =>
      JSON.stringify({
        questionId: a.id,
        answer: a.error ? null : a.answer,
        agent: "vlm",
        inputKey: `k-${a.id}`,
        episode: byId.get(a.id)!.episodeHistory,
        trace: a.error ? null : { agent: "vlm", frames: a.frames ?? [], calls: [{ role: "answer", model: "openai/gpt-4o", prompt: "openeqa-gpt4v", promptSha256: "0".repeat(64), frames: a.frames ?? [], reply: a.answer, cached: false }], agentAnswer: a.answer, usage: usage(1) },
        error: a.error ?? null,
        ...(a.status ? { status: a.status } : {}),
        finishedAt: created.createdAt,
      }),
    );
    writeFileSync(join(dir, "traces.jsonl"), `${lines.join("\n")}\n`);
  }
  const answerSummary = {
    kind: "answer",
    ...created,
    wallTimeMs: 4200,
    config: { agent: "vlm", model: "openai/gpt-4o", framesRoot: run.framesRoot ?? null, benchmark: { path: run.benchmark }, ...run.config },
    counts: { questions: run.answers.length, answered: run.answers.length - failed.length, failed: failed.length, reused: 0, nullAnswers: 0, forceGuessChecked: 0, abstained: 0 },
    abstentionRate: null,
    replyStatuses: Object.fromEntries([...new Set(failed.flatMap((a) => (a.status ? [a.status] : [])))].map((s) => [s, failed.filter((a) => a.status === s).length])),
    failures: failed.map((a) => ({ questionId: a.id, error: a.error!, ...(a.status ? { status: a.status } : {}) })),
    // the process's own ledger counts every call it made, the failed answers' too
    usage: { answers: usage(run.answers.length - failed.length), thisProcess: { total: { ...usage(run.answers.length), failures: failed.length }, byModel: {} } },
    cost: cost("agent", "openai/gpt-4o", run.answers.length - failed.length),
  };
  const judged = run.answers.filter((a) => a.score !== undefined);
  if (judged.length === 0) {
    writeFileSync(join(dir, "summary.json"), JSON.stringify(answerSummary));
    return;
  }
  writeFileSync(
    join(dir, "judgements.jsonl"),
    `${judged.map((a) => JSON.stringify({ questionId: a.id, score: a.score, mode: "robust", judge: "openai/gpt-4o", inputKey: `j-${a.id}`, promptName: "openeqa-mmbench", prediction: a.neutralisedTo ?? a.answer, neutralised: a.neutralisedTo !== undefined, replies: a.score === null ? ["I cannot"] : [`Your mark: ${a.score}`], error: a.score === null ? "no mark in the judge's reply" : null, usage: usage(1), finishedAt: created.createdAt })).join("\n")}\n`,
  );
  const scored = judged.flatMap((a) => (typeof a.score === "number" ? [{ question: byId.get(a.id)!, score: a.score }] : []));
  const scoreSummary = {
    kind: "llm-match",
    ...created,
    wallTimeMs: 1300,
    config: { judge: { name: "openai/gpt-4o", provider: "openai", model: "gpt-4o", baseURL: "http://127.0.0.1:9/v1" }, mode: "robust", benchmark: { path: run.benchmark } },
    counts: { questions: judged.length, scored: scored.length, failed: judged.length - scored.length, missingPredictions: 0, noAnswer: 0, neutralised: judged.filter((a) => a.neutralisedTo !== undefined).length, reused: 0, predictionsOutsideSubset: 0 },
    llmMatch: aggregateLlmMatch(scored, { resamples: 200 }),
    replyStatuses: {},
    failures: judged.filter((a) => a.score === null).map((a) => ({ questionId: a.id, error: "no mark in the judge's reply" })),
    usage: { judgements: usage(judged.length), thisProcess: null },
    cost: cost("judge", "openai/gpt-4o", judged.length),
  };
  const summary = run.answered === false ? scoreSummary : { kind: "run", ...created, answer: answerSummary, score: scoreSummary };
  writeFileSync(join(dir, "summary.json"), JSON.stringify(summary));
}
