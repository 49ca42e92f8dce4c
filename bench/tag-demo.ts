/**
 * What the demo's program agent answers, per query type and with or without a moment condition:
 * questions, answered (a prediction naming an object or a known value: not null, not "unknown"),
 * and the mean grounded and ungrounded structured scores, read from an `eqa demo --out DIR`.
 * It also counts the dataset's questions whose objects were never seen (checkSeenSet).
 *
 *   node --import tsx bench/tag-demo.ts [--demo eqakit-demo]
 *
 * Prints one JSON line of figures.
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { loadTagQuestions, type StructuredAnswer } from "../src/data/index.js";
import { textFlag as flag } from "./flags.js";

const demo = flag("demo", "eqakit-demo");
const questions = await loadTagQuestions(join(demo, "dataset", "questions.json"));
const predictions = new Map<string, StructuredAnswer | null>(
  (JSON.parse(await readFile(join(demo, "runs", "program", "predictions.json"), "utf8")) as { question_id: string; answer: StructuredAnswer | null }[]).map((p) => [p.question_id, p.answer]),
);
const judgements = new Map<string, { groundedScore: number; ungroundedScore: number }>();
for (const line of (await readFile(join(demo, "runs", "program", "judgements.jsonl"), "utf8")).split("\n")) {
  if (line.trim() === "") continue;
  const j = JSON.parse(line) as { questionId: string; groundedScore: number; ungroundedScore: number };
  judgements.set(j.questionId, j);
}

const known = (v: unknown): boolean => v !== null && v !== "unknown" && !(Array.isArray(v) && v.every((x) => x === null || x === "unknown"));
function answered(answer: StructuredAnswer | null | undefined): boolean {
  return !!answer && answer.some((g) => g.objects.length > 0 || (known(g.value) && !(typeof g.value === "number" && g.value === 0 && g.objects.length === 0)));
}

interface Cell {
  questions: number;
  answered: number;
  grounded: number;
  ungrounded: number;
}
const table: Record<string, Cell> = {};
for (const q of questions) {
  const key = `${q.program.query.type}${q.program.query.type === "countTimes" ? "" : ""}|${q.program.filters.some((c) => c.type === "moment") ? "moment" : "no moment"}`;
  const cell = (table[key] ??= { questions: 0, answered: 0, grounded: 0, ungrounded: 0 });
  const j = judgements.get(q.question_id);
  cell.questions++;
  if (answered(predictions.get(q.question_id))) cell.answered++;
  cell.grounded += j?.groundedScore ?? 1;
  cell.ungrounded += j?.ungroundedScore ?? 1;
}
const round2 = (v: number): number => Math.round(v * 100) / 100;
const rows = Object.fromEntries(
  Object.entries(table)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([k, c]) => [k, { questions: c.questions, answered: c.answered, grounded: round2(c.grounded / c.questions), ungrounded: round2(c.ungrounded / c.questions) }]),
);
console.log(JSON.stringify({ benchmark: "tag-demo-program-agent", demo, questions: questions.length, rows }));
