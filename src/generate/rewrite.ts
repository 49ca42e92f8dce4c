/**
 * The LLM renderer (section 3, "Natural Language Question-Answer Generation"): a model rewrites
 * each template question and answer into natural English, with few-shot examples from the
 * training split. A few training questions of each query type are rewritten first without
 * examples; the usable ones are the examples of all the others. A reply is kept only when it is
 * a JSON object with a question ending in "?" and both texts keep every coordinate and count of
 * the template; otherwise the template text stays. A model call that failed is a failed item:
 * the template text stays for now, and a run in the same directory tries it again. Each rewrite
 * is appended to `rewrites.jsonl` as it finishes, and a run in the same directory reuses the
 * ones whose call succeeded; the failed records of earlier runs are dropped from the file when a
 * run starts (their items are asked again), so that every item is recorded once.
 *
 * The other texts are written with the examples in their prompts, so they wait for them: when an
 * example's call failed, no other text is asked in that run (each is a failed item, "waiting for
 * its examples"), and the next run asks them with every example, as a run without failures
 * would. Asking them with the examples that happened to succeed made their prompts, and so their
 * records, differ from run to run: each was asked and recorded again once the examples were whole.
 */
import { z } from "zod";
import { canonicalJson, loadPromptFile, renderPromptFile, sha256Hex } from "../core/index.js";
import type { StructuredAnswer, TagQuestion, TagQueryType } from "../data/index.js";
import { runModelBatch, type ChatModel, type ModelSpec } from "../models/index.js";
import { writeRecords, type RunDirectory } from "../store/index.js";

export const REWRITE_PROMPT = "tag-rewrite";
export const REWRITE_EXAMPLE_PROMPT = "tag-rewrite-example";
export const REWRITE_PARAMS = { temperature: 0.7, maxTokens: 512, seed: 1234 } as const;
export const REWRITES_FILE = "rewrites.jsonl";

export interface RewriteOptions {
  model: ChatModel;
  spec: ModelSpec;
  run: RunDirectory;
  concurrency: number;
  /** Training questions of each query type rewritten first, as examples (default 2). */
  examplesPerQueryType?: number;
  onProgress?: (done: number, total: number) => void;
}

export interface RewriteSummary {
  jobs: number;
  rewritten: number;
  /** Replies that were unusable: the template text stays. */
  keptTemplate: number;
  /** Texts whose model call failed (the template text stays until a run in the same directory rewrites them), with the first errors. */
  failed: number;
  failures: { id: string; error: string }[];
  reused: number;
  prompts: Record<string, string>;
}

export interface RewriteJob {
  id: string;
  /** TAG-EQA's query type, or another set's kind of question (a Mixed EQA category): examples are chosen per kind. */
  queryType: TagQueryType | string;
  structuredQuestion: string;
  /** A TAG-EQA structured answer, or another set's answer value as text. */
  structuredAnswer: StructuredAnswer | string;
  question: string;
  answer: string;
  apply: (text: { question: string; answer: string }) => void;
}

const rewriteRecordSchema = z.object({
  questionId: z.string(),
  inputKey: z.string(),
  question: z.string().nullable(),
  answer: z.string().nullable(),
  error: z.string().nullable(),
  /** The model call failed (not reused: a later run tries again). */
  failed: z.boolean().optional(),
});
type RewriteRecord = z.infer<typeof rewriteRecordSchema>;

const replySchema = z.object({ question: z.string().min(3), answer: z.string().min(1) });

/** Rewrites the questions' texts in place; returns what happened. */
export async function rewriteQuestions(questions: TagQuestion[], options: RewriteOptions): Promise<RewriteSummary> {
  return rewriteJobs(questions.flatMap(jobsOf), new Set(questions.filter((q) => q.split === "train").map((q) => q.question_id)), options);
}

/**
 * Rewrites the texts of `jobs` (each applies its rewrite in place): the examples are chosen among
 * the jobs whose ids are in `trainIds`, per query type.
 */
export async function rewriteJobs(jobs: RewriteJob[], trainIds: ReadonlySet<string>, options: RewriteOptions): Promise<RewriteSummary> {
  const perType = options.examplesPerQueryType ?? 2;
  const exampleIds = new Set<string>();
  const byType = new Map<string, RewriteJob[]>();
  for (const job of jobs.filter((j) => trainIds.has(j.id))) byType.set(job.queryType, [...(byType.get(job.queryType) ?? []), job]);
  for (const list of byType.values()) list.sort((a, b) => sha256Hex(a.id).localeCompare(sha256Hex(b.id))).slice(0, perType).forEach((j) => exampleIds.add(j.id));
  const summary: RewriteSummary = { jobs: jobs.length, rewritten: 0, keptTemplate: 0, failed: 0, failures: [], reused: 0, prompts: { [REWRITE_PROMPT]: loadPromptFile(REWRITE_PROMPT).sha256, [REWRITE_EXAMPLE_PROMPT]: loadPromptFile(REWRITE_EXAMPLE_PROMPT).sha256 } };
  let done = 0;
  const examples: { job: RewriteJob; text: { question: string; answer: string } }[] = [];
  const readRecords = (): RewriteRecord[] => options.run.readRecords(REWRITES_FILE, (v) => rewriteRecordSchema.safeParse(v).data).records;
  // an earlier run's failed items are asked again: their records go, so that each item is recorded once
  const earlier = readRecords();
  if (earlier.some((r) => r.failed === true)) await writeRecords(options.run, REWRITES_FILE, earlier.filter((r) => r.failed !== true));
  const phase = async (list: RewriteJob[], withExamples: boolean): Promise<void> => {
    const prompts = new Map(list.map((job) => [job.id, rewritePrompt(job, withExamples ? examplesFor(job, examples) : [])]));
    const keys = new Map(list.map((job) => [job.id, sha256Hex(canonicalJson({ model: options.spec.name, params: REWRITE_PARAMS, prompt: prompts.get(job.id) }))]));
    const reusable = new Map<string, RewriteRecord>();
    for (const record of readRecords()) {
      if (keys.get(record.questionId) === record.inputKey && record.failed !== true) reusable.set(record.questionId, record);
    }
    const appender = options.run.appender(REWRITES_FILE);
    const finish = (job: RewriteJob, record: RewriteRecord): void => {
      if (record.question !== null && record.answer !== null) {
        const text = { question: record.question, answer: record.answer };
        job.apply(text);
        summary.rewritten++;
        if (exampleIds.has(job.id)) examples.push({ job, text });
      } else if (record.failed === true) {
        summary.failed++;
        if (summary.failures.length < 5) summary.failures.push({ id: job.id, error: record.error ?? "the model call failed" });
      } else summary.keptTemplate++;
      options.onProgress?.(++done, jobs.length);
    };
    const pending: RewriteJob[] = [];
    for (const job of list) {
      const record = reusable.get(job.id);
      if (record) {
        summary.reused++;
        finish(job, record);
      } else pending.push(job);
    }
    try {
      await runModelBatch<RewriteJob, RewriteRecord>({
        items: pending,
        concurrency: options.concurrency,
        models: [options.spec],
        work: async (job) => {
          const response = await options.model.complete({ messages: [{ role: "user", content: prompts.get(job.id)! }], ...REWRITE_PARAMS });
          const parsed = parseRewrite(response.text, job);
          const base = { questionId: job.id, inputKey: keys.get(job.id)! };
          return typeof parsed === "string" ? { ...base, question: null, answer: null, error: parsed } : { ...base, ...parsed, error: null };
        },
        failed: (job, error) => ({ questionId: job.id, inputKey: keys.get(job.id)!, question: null, answer: null, error: error.message, failed: true }),
        finished: (job, record) => {
          appender.append(record);
          finish(job, record);
        },
      });
    } finally {
      appender.close();
    }
  };
  await phase(jobs.filter((j) => exampleIds.has(j.id)), false);
  examples.sort((a, b) => a.job.id.localeCompare(b.job.id));
  const others = jobs.filter((j) => !exampleIds.has(j.id));
  const examplesFailed = summary.failed;
  if (examplesFailed > 0) {
    // asked with some examples missing, their prompts would differ from a run whose examples all succeeded
    for (const job of others) {
      summary.failed++;
      if (summary.failures.length < 5) summary.failures.push({ id: job.id, error: `not asked: ${examplesFailed} of the example rewrites failed, and this text is written with the examples` });
      options.onProgress?.(++done, jobs.length);
    }
    return summary;
  }
  await phase(others, true);
  return summary;
}

function jobsOf(q: TagQuestion): RewriteJob[] {
  const jobs: RewriteJob[] = [
    {
      id: q.question_id,
      queryType: q.tags.query_type,
      structuredQuestion: q.structured_question,
      structuredAnswer: q.structured_answer,
      question: q.question,
      answer: q.answer,
      apply: (t) => Object.assign(q, t),
    },
  ];
  const g = q.grounded;
  if (g) {
    jobs.push({
      id: `${q.question_id}#grounded`,
      queryType: q.tags.query_type,
      structuredQuestion: g.structured_question,
      structuredAnswer: g.structured_answer,
      question: g.question,
      answer: g.answer,
      apply: (t) => Object.assign(g, t),
    });
  }
  return jobs;
}

/** Up to three examples from other questions: those of the same query type first. */
function examplesFor(job: RewriteJob, examples: { job: RewriteJob; text: { question: string; answer: string } }[]): { job: RewriteJob; text: { question: string; answer: string } }[] {
  const same = examples.filter((e) => e.job.queryType === job.queryType);
  const other = examples.filter((e) => e.job.queryType !== job.queryType);
  const question = (id: string): string => id.split("#")[0]!;
  return [...same, ...other].filter((e) => question(e.job.id) !== question(job.id)).slice(0, 3);
}

function compactAnswer(answer: StructuredAnswer | string): string {
  if (typeof answer === "string") return answer;
  return JSON.stringify(answer.map((g) => ({ predicate: g.predicate, objects: g.objects, value: g.value })));
}

export function rewritePrompt(job: RewriteJob, examples: { job: RewriteJob; text: { question: string; answer: string } }[]): string {
  const blocks = examples.map((e) =>
    renderPromptFile(REWRITE_EXAMPLE_PROMPT, {
      structured_question: e.job.structuredQuestion,
      question: e.job.question,
      structured_answer: compactAnswer(e.job.structuredAnswer),
      answer: e.job.answer,
      rewritten: JSON.stringify(e.text),
    }),
  );
  return renderPromptFile(REWRITE_PROMPT, {
    examples: blocks.length > 0 ? `\n${blocks.join("\n\n")}\n` : "",
    structured_question: job.structuredQuestion,
    question: job.question,
    structured_answer: compactAnswer(job.structuredAnswer),
    answer: job.answer,
  });
}

const COORDINATES = /\(x=-?[\d.]+, y=-?[\d.]+, z=-?[\d.]+\)/g;

/** The model's rewrite when usable, else why not. */
export function parseRewrite(reply: string | null, job: { question: string; answer: string; structuredAnswer: StructuredAnswer | string; queryType: TagQueryType | string }): { question: string; answer: string } | string {
  if (!reply) return "empty reply";
  const start = reply.indexOf("{");
  const end = reply.lastIndexOf("}");
  if (start < 0 || end < start) return "no JSON object in the reply";
  let value: unknown;
  try {
    value = JSON.parse(reply.slice(start, end + 1));
  } catch {
    return "malformed JSON in the reply";
  }
  const parsed = replySchema.safeParse(value);
  if (!parsed.success) return "the reply lacks a question or an answer";
  const question = parsed.data.question.trim();
  const answer = parsed.data.answer.trim();
  if (!question.endsWith("?")) return "the question does not end with a question mark";
  const squash = (t: string): string => t.replace(/\s+/g, " ");
  for (const c of job.question.match(COORDINATES) ?? []) if (!squash(question).includes(c)) return `the question lost the coordinates ${c}`;
  for (const c of job.answer.match(COORDINATES) ?? []) if (!squash(answer).includes(c)) return `the answer lost the coordinates ${c}`;
  const counts = typeof job.structuredAnswer === "string"
    ? /^\d+$/.test(job.structuredAnswer) ? [Number(job.structuredAnswer)] : []
    : job.queryType === "countObjects" || job.queryType === "countTimes" ? job.structuredAnswer.map((g) => g.value) : [];
  for (const value of counts) {
    if (typeof value === "number" && value > 1 && !new RegExp(`\\b${value}\\b|\\b${NUMBER_WORDS[value] ?? "\u0000"}\\b`, "i").test(answer)) return `the answer lost the count ${value}`;
  }
  return { question, answer };
}

const NUMBER_WORDS: Record<number, string> = { 2: "two", 3: "three", 4: "four", 5: "five", 6: "six", 7: "seven", 8: "eight", 9: "nine", 10: "ten" };
