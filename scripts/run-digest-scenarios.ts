/**
 * The commands scripts/run-digest.ts runs, the inputs they read and the replies of its loopback
 * model server. Every command that writes a run is here, offline where it can run offline and
 * against the server where it calls a model.
 */
import { cpSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { writeSceneEpisode } from "../test/agents/scene-fixture.js";
import { writeRgbEpisode } from "../test/helpers/frames.js";
import { writeLaEqaFiles } from "../test/helpers/la-eqa.js";
import { openAiReply, type ReceivedRequest, type ScriptedReply } from "../test/helpers/model-server.js";

/**
 * One command run: its arguments (given the temporary folder and the model server's /v1 URL), the
 * folder it writes, relative to the temporary folder, and what it needs of a checkout: the help
 * of `eqa ...needs.help --help` shows the command or choice (a checkout without it records the
 * scenario as absent; commander prints a parent's help for an unknown subcommand's --help).
 */
export interface Scenario {
  name: string;
  args: (root: string, model: string) => string[];
  dir?: string;
  needs?: { help: string[]; shows: RegExp };
}

const DEMO = (root: string): string[] => ["demo", "--out", join(root, "demo"), "--seeds", "2", "--per-trajectory", "4"];
const TAG = (root: string, out: string): string[] => ["generate", "tag", "--source", `sim:${join(root, "tag-source")}`, "--out", join(root, out), "--per-trajectory", "6", "--seed", "4"];
const RM_BUILD = (root: string): string[] => ["rm", "build", "--benchmark", join(root, "open-eqa-v0.json"), "--subset", join(root, "subset.json"), "--frames", join(root, "frames")];
const MODEL = (name: string, role: string, url: string): string[] => [`--${role}`, `openai/${name}`, `--${role}-base-url`, url, "--no-cache", "--concurrency", "1"];
const OPEN_EQA = (root: string): string[] => ["--benchmark", join(root, "open-eqa-v0.json"), "--subset", join(root, "subset.json")];
const RM_INPUTS = (root: string): string[] => ["--instances", join(root, "instances.jsonl"), "--frames", join(root, "frames")];
const EXPLORE = (root: string, out: string): string[] => ["explore", "--episodes", join(root, "episodes.json"), "--width", "64", "--height", "48", "--max-steps", "20", "--no-cache", "--out", join(root, out)];
const REPRODUCE = (table: string, root: string, out: string): string[] => ["reproduce", table, "--out", join(root, out)];
const MIXED_TABLE = (root: string): string[] => ["--episodes", join(root, "mixed", "episodes.json"), "--width", "64", "--height", "48", "--max-steps", "20", "--no-cache"];
const LA_EQA = (root: string): string[] => ["score", "--benchmark", join(root, "la-eqa", "eqa-questions.json"), "--predictions", join(root, "la-eqa", "predictions.json"), "--places", join(root, "la-eqa", "places.json")];
const MIXED = (root: string): string[] => ["generate", "mixed", "--seeds", "1-2", "--days", "2", "--tasks-per-day", "1", "--changes", "4", "--per-category", "2", "--out", join(root, "mixed")];

export const SCENARIOS: Scenario[] = [
  { name: "demo --help", args: () => ["demo", "--help"] },
  { name: "generate tag --help", args: () => ["generate", "tag", "--help"] },
  { name: "rm build --help", args: () => ["rm", "build", "--help"] },
  { name: "demo offline", args: DEMO, dir: "demo" },
  { name: "demo again (resumes)", args: DEMO, dir: "demo" },
  { name: "demo --agent", args: (root) => [...DEMO(root), "--agent", join(root, "counter.mjs")], dir: "demo" },
  { name: "demo --model", args: (root, url) => [...DEMO(root), ...MODEL("test-vlm", "model", url), "--agents", "blind,vlm"], dir: "demo" },
  { name: "demo, its default homes", args: (root) => ["demo", "--out", join(root, "demo-default")], dir: "demo-default" },
  { name: "generate tag sim", args: (root) => TAG(root, "tag"), dir: "tag" },
  { name: "generate tag --renderer", args: (root, url) => [...TAG(root, "tag-rewritten"), ...MODEL("gemma-2-27b-it", "renderer", url)], dir: "tag-rewritten" },
  { name: "generate tag alfred", args: (root) => ["generate", "tag", "--source", `alfred:${join(root, "alfred")}`, "--out", join(root, "tag-alfred"), "--per-trajectory", "4"], dir: "tag-alfred" },
  { name: "generate tag bad source", args: (root) => ["generate", "tag", "--source", "habitat:/tmp", "--out", join(root, "tag-bad")] },
  { name: "answer-tag", args: (root) => ["answer-tag", "--questions", join(root, "tag", "questions.json"), "--agent", join(root, "counter.mjs"), "--out", join(root, "answer-tag")], dir: "answer-tag" },
  { name: "score-tag exact", args: (root) => ["score-tag", "--questions", join(root, "tag", "questions.json"), "--predictions", join(root, "answer-tag", "predictions.json"), "--similarity", "exact", "--out", join(root, "score-tag")], dir: "score-tag" },
  { name: "rm build", args: (root, url) => [...RM_BUILD(root), ...MODEL("resp", "responder", url), ...MODEL("scorer", "scorer", url), "--responses", "2", "--out", join(root, "rm-build")], dir: "rm-build" },
  { name: "rm build without --frames", args: () => ["rm", "build", "--responder", "openai/resp", "--scorer", "openai/scorer"] },
  { name: "rm build without --scorer", args: (root) => [...RM_BUILD(root), "--responder", "openai/resp"] },
  { name: "rm score", args: (root, url) => ["rm", "score", ...RM_INPUTS(root), ...MODEL("judge-vl", "model", url), "--out", join(root, "rm-score")], dir: "rm-score" },
  { name: "rm bench", args: (root, url) => ["rm", "bench", ...RM_INPUTS(root), ...MODEL("judge-vl", "model", url), "--max-k", "2", "--resamples", "100", "--out", join(root, "rm-bench")], dir: "rm-bench" },
  { name: "memory build", args: (root) => ["memory", "build", "--benchmark", join(root, "scene-benchmark.json"), "--frames", join(root, "scenes"), "--no-detector", "--sampling", "every:2", "--out", join(root, "memory")], dir: "memory" },
  { name: "answer blind", args: (root, url) => ["answer", ...OPEN_EQA(root), "--agent", "blind", ...MODEL("gpt-4", "model", url), "--out", join(root, "answer")], dir: "answer" },
  { name: "score llm-match", args: (root, url) => ["score", "--predictions", join(root, "predictions.json"), ...OPEN_EQA(root), ...MODEL("gpt-4o", "judge", url), "--out", join(root, "score")], dir: "score" },
  { name: "score again (resumes)", args: (root, url) => ["score", "--predictions", join(root, "predictions.json"), ...OPEN_EQA(root), ...MODEL("gpt-4o", "judge", url), "--out", join(root, "score")], dir: "score" },
  { name: "run blind", args: (root, url) => ["run", ...OPEN_EQA(root), "--agent", "blind", ...MODEL("gpt-4", "model", url), ...MODEL("gpt-4o", "judge", url), "--out", join(root, "run")], dir: "run" },
  { name: "explore frontier", args: (root) => [...EXPLORE(root, "explore"), "--env", "builtin", "--agent", "frontier"], dir: "explore" },
  { name: "explore frontier --em-agent vlm", args: (root, url) => [...EXPLORE(root, "explore-vlm"), "--agent", "frontier", "--em-agent", "vlm", "--num-frames", "4", "--no-force-guess", "--image-size", "64", ...MODEL("gpt-4o", "model", url)], dir: "explore-vlm" },
  { name: "generate mixed", args: MIXED, dir: "mixed", needs: { help: ["generate"], shows: /^ {2}mixed /m } },
  { name: "generate mixed --rewrite", args: (root, url) => [...MIXED(root).slice(0, -1), join(root, "mixed-rewritten"), ...MODEL("gemma-2-27b-it", "rewrite", url)], dir: "mixed-rewritten", needs: { help: ["generate", "mixed"], shows: /--rewrite / } },
  { name: "score LA-EQA", args: (root, url) => [...LA_EQA(root), ...MODEL("gpt-4o", "judge", url), "--out", join(root, "score-la-eqa")], dir: "score-la-eqa" },
  { name: "score LA-EQA --dry-run", args: (root, url) => [...LA_EQA(root), ...MODEL("gpt-4o", "judge", url), "--dry-run"] },
  { name: "score-tag --validate", args: (root, url) => ["score-tag", "--questions", join(root, "tag", "questions.json"), "--validate", "--samples", "3", "--similarity", "exact", ...MODEL("gpt-4o", "judge", url), "--out", join(root, "score-tag-validate")], dir: "score-tag-validate" },
  { name: "reproduce openeqa-table-2 --published", args: (root) => REPRODUCE("openeqa-table-2", root, "reproduce-published").concat("--published"), dir: "reproduce-published" },
  { name: "reproduce openeqa-table-2 --dry-run", args: (root, url) => [...REPRODUCE("openeqa-table-2", root, "reproduce-openeqa"), ...OPEN_EQA(root), "--frames", join(root, "frames"), ...MODEL("gpt-4", "model", url), ...MODEL("gpt-4o", "judge", url), "--dry-run"] },
  { name: "reproduce openeqa-table-2 blind,vlm", args: (root, url) => [...REPRODUCE("openeqa-table-2", root, "reproduce-openeqa"), ...OPEN_EQA(root), "--frames", join(root, "frames"), "--rows", "blind,vlm", ...MODEL("gpt-4", "model", url), ...MODEL("gpt-4o", "judge", url)], dir: "reproduce-openeqa" },
  { name: "reproduce eqa-rm-table-1", args: (root, url) => [...REPRODUCE("eqa-rm-table-1", root, "reproduce-rm"), ...RM_INPUTS(root), "--max-k", "2", ...MODEL("judge-vl", "model", url)], dir: "reproduce-rm" },
  { name: "reproduce tag-eqa-table-2", args: (root, url) => [...REPRODUCE("tag-eqa-table-2", root, "reproduce-tag"), "--questions", join(root, "tag", "questions.json"), "--baselines", "llm-api", ...MODEL("gpt-4", "model", url), ...MODEL("gpt-4o", "judge", url)], dir: "reproduce-tag" },
  { name: "reproduce express-table-3", args: (root, url) => [...REPRODUCE("express-table-3", root, "reproduce-express"), "--episodes", join(root, "express-episodes.json"), "--max-steps", "4", "--width", "64", "--height", "48", ...MODEL("gpt-4o", "model", url), ...MODEL("gpt-4o", "judge", url)], dir: "reproduce-express" },
  { name: "reproduce mixed-eqa-table --dry-run", args: (root) => [...REPRODUCE("mixed-eqa-table", root, "reproduce-mixed"), ...MIXED_TABLE(root), "--dry-run"], needs: { help: ["reproduce"], shows: /mixed-eqa-table/ } },
  { name: "reproduce mixed-eqa-table", args: (root) => [...REPRODUCE("mixed-eqa-table", root, "reproduce-mixed"), ...MIXED_TABLE(root), "--rows", "memory-only,explore-only"], dir: "reproduce-mixed", needs: { help: ["reproduce"], shows: /mixed-eqa-table/ } },
  { name: "explore memory-only (mixed)", args: (root) => ["explore", "--episodes", join(root, "mixed", "episodes.json"), "--agent", "memory-only", "--width", "64", "--height", "48", "--no-cache", "--out", join(root, "explore-mixed")], dir: "explore-mixed", needs: { help: ["explore"], shows: /memory-only/ } },
];

/**
 * The inputs the scenarios read, in the temporary folder (paths are part of some hashes): the
 * fixtures' OpenEQA questions with frames, a subset and predictions; their ALFRED trajectories;
 * an agent of the user's own; reward-model instances; a rendered scene for eqa memory build; and
 * episodes in the built-in homes for eqa explore.
 */
export async function writeInputs(root: string, checkout: string): Promise<void> {
  cpSync(join(checkout, "test/fixtures/alfred/valid_seen"), join(root, "alfred"), { recursive: true });
  cpSync(join(checkout, "test/fixtures/openeqa/open-eqa-v0.json"), join(root, "open-eqa-v0.json"));
  const questions = JSON.parse(readFileSync(join(root, "open-eqa-v0.json"), "utf8")) as { question_id: string; episode_history: string; answer: string }[];
  const scannet = questions.filter((q) => q.episode_history.startsWith("scannet"));
  const chosen = [questions.find((q) => q.episode_history.startsWith("hm3d"))!, scannet[0]!, scannet.find((q) => q.episode_history !== scannet[0]!.episode_history)!];
  for (const q of chosen) await writeRgbEpisode(join(root, "frames", q.episode_history), 6, 48, 32);
  writeFileSync(join(root, "subset.json"), JSON.stringify(chosen.map((q) => q.question_id)));
  writeFileSync(join(root, "predictions.json"), JSON.stringify(chosen.map((q) => ({ question_id: q.question_id, answer: `${q.answer}, I think` }))));
  writeFileSync(
    join(root, "counter.mjs"),
    `export function initialize() { return { name: "counter", version: "1", supports: ["tag"] }; }\nexport function answer(params) { return { answer: JSON.stringify([{ predicate: "", objects: [], value: params.tag.actions.length }]) }; }\n`,
  );
  const instance = (id: string, i: number): string => JSON.stringify({ id, question: `Question ${i}?`, predicted_answer: "An answer.", reasoning_trace: ["I look around."], episode_history: chosen[0]!.episode_history, ground_truth_score: 6 + 3 * i, category: "object recognition" });
  writeFileSync(join(root, "instances.jsonl"), `${["i-1", "i-2"].map(instance).join("\n")}\n`);
  await writeSceneEpisode(join(root, "scenes", "hm3d-v0", "scene"), { layout: "hm3d", views: 4 });
  writeFileSync(join(root, "scene-benchmark.json"), JSON.stringify([{ question_id: "q1", question: "What is on the table?", answer: "a cup", category: "object recognition", episode_history: "hm3d-v0/scene" }]));
  writeFileSync(join(root, "express-episodes.json"), JSON.stringify([{ question_id: "x1", question: "What is on the bed?", answer: "a pillow", scene: "home-4", gt_path_length: 3 }]));
  mkdirSync(join(root, "la-eqa"));
  writeLaEqaFiles(join(root, "la-eqa"));
  writeFileSync(join(root, "episodes.json"), JSON.stringify([{ question_id: "e1", question: "What is in the kitchen?", scene: "home-0" }, { question_id: "e2", question: "What is on the bed?", scene: "home-4" }]));
}

/** Before the generate tag scenarios: the demo's recording and a trajectory file that is not JSON. */
export function writeTagSource(root: string): void {
  if (existsSync(join(root, "tag-source"))) return;
  cpSync(join(root, "demo", "recordings"), join(root, "tag-source"), { recursive: true });
  mkdirSync(join(root, "tag-source", "broken"));
  writeFileSync(join(root, "tag-source", "broken", "trajectory.json"), "{ not json");
}

/** Every request's text, and the reply each command's tests script: LLM-Match's judge, the reward model's responder and scorer, the TAG rewriter, the demo's judge and agents. */
export function reply(request: ReceivedRequest): ScriptedReply {
  const messages = (request.body as { messages: { content: string | { type: string; text?: string }[] }[] }).messages;
  const texts = messages.map((m) => (typeof m.content === "string" ? m.content : m.content.map((p) => p.text ?? "").join("")));
  const all = texts.join("\n");
  if (all.includes("You are grading the response a robot gave")) return openAiReply('{"score": 4, "reasoning": "close"}');
  if (all.includes("Your mark")) return openAiReply("Your mark: 4");
  if (all.includes("Role: You are an intelligent Embodied Question Answering")) return openAiReply("<reasoning_trace>\n<think>\nI scan the room.\n</think>\n</reasoning_trace>\n<predicted_answer>\nOn the table.\n</predicted_answer>");
  if (all.includes("Answer Ground Truth: ") || all.includes("<score>")) return openAiReply("<critique>\nPlausible.\n</critique>\n<score>\n6\n</score>");
  if (all.includes("Structured question: ")) {
    const last = texts[0]!.split("Structured question: ").at(-1)!;
    return openAiReply(JSON.stringify({ question: `So, ${/^Question: (.*)$/m.exec(last)?.[1]}`, answer: /^Answer: (.*)$/m.exec(last)?.[1] }));
  }
  if (all.includes("You read an answer to a question about a home")) return openAiReply(JSON.stringify([{ predicate: "", objects: [{ type: "mug", caption: "red", position: null }], value: 1 }]));
  return openAiReply("A: There is one red mug.");
}
