/**
 * LA-EQA's evaluation code beside eqakit's on the same inputs: its judge prompt, the mark it reads
 * from a reply, and SPL. Prints one JSON line; exits 1 when any figure differs.
 *
 *   node --import tsx bench/la-eqa.ts [--repo DIR] [--rounds N]
 *
 * DIR is a copy of mind-palace-laeqa/benchmark fetched at run time, never kept in eqakit (the
 * repository has no licence): a clone with its files, or a git directory without a work tree
 * (default: ../.mirror/mind-palace-laeqa+benchmark/repo beside the checkout), from which commit
 * bc08362's files are read with `git show`. Without it the benchmark is skipped with a message.
 *
 * Inputs: the benchmark's real question file (100 questions), and synthetic rest: place positions
 * for every place its questions name (some left out, so the reference's nearest-id fallback is
 * used), distances walked around each best path's length, responses (right, wrong, empty, with
 * braces, quotes and line breaks) and judge replies in every form the parser meets. Python runs
 * the reference's `EQAEvaluation.evaluate_answer_accuracy` (its API call replaced by the scripted
 * reply) and `evaluate_SPL` with its `WorldModel.move_robot` (bench/la_eqa_reference.py); eqakit
 * runs `renderLaEqaJudgePrompt` under `--prompts original`, `parseLaEqaScore`, `laEqaBestPathLength`
 * and `laEqaSpl`. Prompts are compared byte for byte, marks and SPL as numbers (===).
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { seededRandom, withPromptFiles } from "../src/core/index.js";
import { KNOWN_DATASETS, loadLaEqaBenchmark, type LaEqaPlace, type LaEqaQuestion } from "../src/data/index.js";
import { laEqaBestPathLength, laEqaSpl, parseLaEqaScore, readLaEqaOriginalPrompt, renderLaEqaJudgePrompt } from "../src/eval/index.js";

const COMMIT = "bc083627160e27a1c03a7f2c486c7c9434449501";
const FILES = {
  questions: "la_eqa_benchmark/eqa-questions.json",
  evaluation: "src/contextual_long_term_reasoning/eqa_evaluation.py",
  beliefs: "src/contextual_long_term_reasoning/belief_manager.py",
  init: "src/contextual_long_term_reasoning/__init__.py",
  openai: "src/contextual_long_term_reasoning/openai_interface.py",
};

function flag(name: string): string | undefined {
  const at = process.argv.indexOf(name);
  return at >= 0 ? process.argv[at + 1] : undefined;
}

const repo = flag("--repo") ?? join(import.meta.dirname, "..", "..", ".mirror", "mind-palace-laeqa+benchmark", "repo");
const rounds = Number(flag("--rounds") ?? 3);

/** The reference's files in a temporary folder of the repository's layout; undefined when there is no copy. */
function extractReference(): string | undefined {
  if (!existsSync(repo)) return undefined;
  const dir = mkdtempSync(join(tmpdir(), "la-eqa-reference-"));
  for (const path of Object.values(FILES)) {
    const worktree = join(repo, path);
    const text = existsSync(worktree) ? execFileSync("cat", [worktree]) : execFileSync("git", ["--git-dir", existsSync(join(repo, ".git")) ? join(repo, ".git") : repo, "show", `${COMMIT}:${path}`]);
    mkdirSync(join(dir, path, ".."), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  // as `eqa data fetch la-eqa` lays them out, checked by their SHA-256 when read
  const fetched = join(dir, "fetched");
  mkdirSync(fetched);
  const known = KNOWN_DATASETS["la-eqa"]!.files;
  writeFileSync(join(fetched, known.benchmark!.name), execFileSync("cat", [join(dir, FILES.questions)]));
  writeFileSync(join(fetched, known.evaluation!.name), execFileSync("cat", [join(dir, FILES.evaluation)]));
  return dir;
}

/** Judge replies in the forms the reference's parser meets (JSON, strings, floats, fences, prose, NaN, none). */
const REPLIES: (string | null)[] = [
  '{"score": 4, "reasoning": "close enough"}',
  '{"score": "5", "reasoning": "same place"}',
  '{"score": 4.7, "reasoning": "x"}',
  '{"score": "3.5", "reasoning": "half"}',
  '{"score": true}',
  '{"score": null, "reasoning": "2 of 3 items"}',
  '{"score": 0, "reasoning": "nothing"}',
  '{"score": 7}',
  '{"score": NaN, "reasoning": "about 3"}',
  '```json\n{"score": 2, "reasoning": "fenced"}\n```',
  "Score: 3/5. The response names the room but not the shelf.",
  '{"reasoning": "no mark at all"}',
  "I cannot grade this.",
  '{"score": " 1 ", "note": Infinity}',
  '{"note": NaN, "reasoning": "4 of 5 items", "score": 2}',
  '[5, "list"]',
  null,
];

/** Synthetic positions for every place a scene's questions name; ids ≡ 3 (mod 7) left out but within reach of others. */
function synthesisePlaces(questions: readonly LaEqaQuestion[], seed: number): Map<string, LaEqaPlace[]> {
  const random = seededRandom(seed);
  const byScene = new Map<string, LaEqaPlace[]>();
  for (const scene of new Set(questions.map((q) => q.sceneName))) {
    const named = new Set(questions.filter((q) => q.sceneName === scene).flatMap((q) => [q.startPlace, ...q.bestPath]));
    const ids = [...new Set([...named, ...[...named].map((id) => id + 1)])].filter((id) => id % 7 !== 3 || named.size < 2);
    // the scene graph's order is its own, not sorted: shuffled, so ties of the fallback are decided by it
    ids.sort(() => random() - 0.5);
    byScene.set(scene, ids.map((id) => ({ id, position: [(random() - 0.5) * 40, (random() - 0.5) * 4, (random() - 0.5) * 40] })));
  }
  return byScene;
}

interface Case {
  question: LaEqaQuestion;
  places: LaEqaPlace[];
  distance: number;
  response: string;
  reply: string | null;
}

function cases(questions: readonly LaEqaQuestion[]): Case[] {
  const random = seededRandom(7);
  const out: Case[] = [];
  for (let round = 0; round < rounds; round++) {
    const places = synthesisePlaces(questions, round);
    questions.forEach((question, i) => {
      const scenePlaces = places.get(question.sceneName)!;
      const length = laEqaBestPathLength(question, scenePlaces) ?? 0;
      const distances = [0, 0.005, 0.01, 0.0100001, length * 0.5, length, length * 1.7 + random(), random() * 30];
      const responses = [question.alternatives[0]!, question.alternatives.at(-1)!.toLowerCase(), "I don't know", "", 'On the {shelf}, "left"\nof the door', question.answer];
      out.push({ question, places: scenePlaces, distance: distances[(i + round) % distances.length]!, response: responses[(i + 2 * round) % responses.length]!, reply: REPLIES[(i + 5 * round) % REPLIES.length]! });
    });
  }
  return out;
}

const dir = extractReference();
if (!dir) {
  console.log(JSON.stringify({ skipped: `no copy of mind-palace-laeqa/benchmark at ${repo}: fetch it (or pass --repo DIR) to compare with LA-EQA's evaluation code` }));
} else {
  const benchmark = await loadLaEqaBenchmark(join(dir, "fetched", "eqa-questions.json"));
  const original = readLaEqaOriginalPrompt(join(dir, "fetched"));
  const all = cases(benchmark.questions);
  const input = { src: join(dir, "src"), cases: all.map((c) => ({ question: c.question.question, answer: c.question.answer, start_place: c.question.startPlace, best_path: c.question.bestPath, places: c.places.map((p) => [p.id, p.position]), distance: c.distance, response: c.response, reply: c.reply })) };
  const started = performance.now();
  const reference = JSON.parse(execFileSync("python3", [join(import.meta.dirname, "la_eqa_reference.py")], { input: JSON.stringify(input), encoding: "utf8", maxBuffer: 256 * 2 ** 20 })) as { prompt: string | null; score: number | null; spl: number }[];
  const pythonMs = performance.now() - started;
  const differences: string[] = [];
  let equalPrompts = 0;
  let equalScores = 0;
  let equalSpl = 0;
  all.forEach((c, i) => {
    const ref = reference[i]!;
    const prompt = withPromptFiles([original], () => renderLaEqaJudgePrompt(c.question, c.response));
    const score = parseLaEqaScore(c.reply) ?? null;
    const spl = laEqaSpl(laEqaBestPathLength(c.question, c.places), c.distance);
    if (prompt === ref.prompt) equalPrompts++;
    else differences.push(`${c.question.questionId}: prompt`);
    if (score === ref.score) equalScores++;
    else differences.push(`${c.question.questionId}: mark ${score} vs ${ref.score} (reply ${JSON.stringify(c.reply)})`);
    if (spl === ref.spl) equalSpl++;
    else differences.push(`${c.question.questionId}: SPL ${spl} vs ${ref.spl}`);
  });
  const categories: Record<string, number> = {};
  for (const q of benchmark.questions) categories[q.category] = (categories[q.category] ?? 0) + 1;
  console.log(
    JSON.stringify({
      questions: benchmark.questions.length,
      categories,
      withAlternatives: benchmark.questions.filter((q) => q.alternatives.length > 1).length,
      withBestPath: benchmark.questions.filter((q) => q.bestPath.length > 0).length,
      cases: all.length,
      equalPrompts,
      equalScores,
      raisedInReference: reference.filter((r) => r.score === null).length,
      equalSpl,
      nearestIdFallbacks: all.filter((c) => c.question.bestPath.length > 0 && [c.question.startPlace, ...c.question.bestPath].some((id) => !c.places.some((p) => p.id === id))).length,
      splStrictlyBetween0And1: reference.filter((r) => r.spl > 0 && r.spl < 1).length,
      pythonMs: Math.round(pythonMs),
      differences: differences.slice(0, 10),
    }),
  );
  process.exitCode = differences.length > 0 ? 1 : 0;
  rmSync(dir, { recursive: true, force: true });
}
