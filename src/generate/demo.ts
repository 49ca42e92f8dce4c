/**
 * The offline demo, eqakit's whole pipeline with nothing configured: simulated homes, household
 * tasks recorded in them, TAG-EQA questions generated from the recordings, each recording's 3-D
 * memory built from its RGB-D frames and instance masks, the `program` agent answering from
 * that memory, and the structured judge scoring (structured answers need no language model).
 * With a model, the language-model agents answer the same questions from the same frames and
 * the judge's extraction reads their free text; their runs sit beside the program agent's.
 *
 * Every stage writes plain files under `out/` and is skipped when its files are there, so a
 * demo that was stopped goes on where it was.
 */
import { existsSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { resolveInside, type Question } from "../core/index.js";
import { loadTagQuestions, type TagQuestion } from "../data/index.js";
import { JUDGE_ROLE, readCallLedger, type CallEntry, type ModelRuntime, type ModelSpec } from "../models/index.js";
import { RUN_KIND, openRun, readRunManifest, type RunDirectory } from "../store/index.js";
import { catalogueType, recordTask, type TaskType } from "../sim/index.js";
import { answerQuestions, createAgent, describeExternalAgent, ExternalAgent, type AgentName, type ExternalAgentSpec } from "../agents/index.js";
import { defaultTextSimilarity, loadTagPredictions, scoreTagRun, tagScoreRunContract, type SimilaritySource, type TagPrediction, type TagScoreSetup, type TagScoreSummary } from "../eval/index.js";
import { buildTagDataset, writeTagDataset } from "./dataset.js";
import { loadSimRecordings, RECORDING_FILE } from "./sources.js";
import { answerWithPrograms, type ProgramAgentEpisode } from "./program-agent.js";
import { actionHistory } from "./history.js";
import { CATEGORY_OF_QUERY, runTagAnswers, type TagAgentEpisode } from "./tag-agent.js";

export interface DemoOptions {
  out: string;
  /** The homes' seeds (default 1, 2, 3). */
  seeds?: number[];
  /** Tasks recorded per home, chosen among those the home can host (default 2). */
  tasksPerHome?: number;
  /** Questions asked per recording (default 16). */
  perTrajectory?: number;
  /** Frame size of the recordings (default 160×120). */
  width?: number;
  height?: number;
  /** Language-model agents to run beside the program agent (needs `runtime` and `model`). */
  model?: ModelSpec;
  runtime?: ModelRuntime;
  agents?: AgentName[];
  /** An agent of the user's own (agent protocol, task tag) to run beside the program agent; with `model`, its text answers are read by the judge's extraction and it may call the model. */
  agent?: ExternalAgentSpec;
  /** Milliseconds to wait for each of its replies (default 120 000). */
  agentTimeoutMs?: number;
  onStage?: (message: string) => void;
}

export interface DemoRun {
  agent: string;
  dir: string;
  summary: TagScoreSummary;
}

export interface DemoResult {
  recordings: string;
  dataset: string;
  questions: number;
  runs: DemoRun[];
}

export const DEMO_SEEDS = [1, 2, 3];
const DEMO_AGENTS: AgentName[] = ["blind", "vlm"];

/** Material and use of an object type: what any model knows of a mug (the simulator's catalogue). */
function typeKnowledge(type: string): { material?: string; use?: string } | undefined {
  try {
    const known = catalogueType(type);
    return { material: known.material, use: known.use };
  } catch {
    return undefined;
  }
}

async function recordHomes(options: DemoOptions, dir: string): Promise<void> {
  const tasks: ("random" | TaskType)[] = Array.from({ length: options.tasksPerHome ?? 2 }, () => "random");
  for (const seed of options.seeds ?? DEMO_SEEDS) {
    const out = join(dir, `home-${seed}`);
    if (existsSync(join(out, RECORDING_FILE))) continue;
    const summary = await recordTask({ seed, tasks, out, width: options.width ?? 160, height: options.height ?? 120 });
    options.onStage?.(`recorded home ${seed}: ${summary.tasks.map((t) => t.description).join("; ")} (${summary.steps} steps, ${summary.events} events)`);
  }
}

async function generateQuestions(options: DemoOptions, recordings: string, dir: string): Promise<TagQuestion[]> {
  const file = join(dir, "questions.json");
  if (existsSync(file)) return loadTagQuestions(file);
  // the dataset is a generate-tag run, with the settings eqa generate tag --source sim:RECORDINGS would record
  const run = await openRun({ dir, kind: RUN_KIND["generate-tag"], settings: { source: `sim:${resolve(recordings)}`, perTrajectory: options.perTrajectory ?? 16, seed: 0, renderer: "template" }, inputs: [{ name: "source", path: recordings }] });
  const { inputs, skipped } = await loadSimRecordings(recordings, run.path, { sightings: true });
  const dataset = buildTagDataset(inputs, { perTrajectory: options.perTrajectory ?? 16, seed: 0 }, skipped);
  await writeTagDataset(run, dataset, skipped);
  options.onStage?.(`generated ${dataset.questions.length} questions from ${inputs.length} recordings`);
  return dataset.questions;
}

async function programRun(questions: TagQuestion[], questionsPath: string, recordings: string, dir: string, options: DemoOptions): Promise<DemoRun> {
  const episodes = new Map<string, ProgramAgentEpisode>();
  const { inputs } = await loadSimRecordings(recordings, recordings);
  for (const { log, file } of inputs) {
    if (file && log.frames) episodes.set(log.id, { frames: resolveInside(dirname(file), log.frames, { file, field: "frames" }), environment: log.environment, cameraHeight: log.cameraHeight, actions: actionHistory(log) });
  }
  const predictionsFile = join(dir, "predictions.json");
  const scoring = { questions, questionsPath, predictionsPath: predictionsFile, outDir: dir, settings: { agent: "program", memory: "instance masks, every second frame", actions: "the recording's action history" } };
  const { run, similarity } = await openTagRun(scoring);
  let answers: TagPrediction[];
  if (existsSync(predictionsFile)) answers = await loadTagPredictions(predictionsFile);
  else {
    const onMemory = (trajectory: string, graph: { instances: unknown[] }): void => options.onStage?.(`built the memory of ${trajectory}: ${graph.instances.length} objects`);
    const predicted = await answerWithPrograms(questions, episodes, { typeKnowledge, onMemory });
    const failures = predicted.filter((p) => p.error !== undefined);
    for (const failure of failures) options.onStage?.(`program agent: ${failure.question_id} not answered: ${failure.error}`);
    answers = predicted.map((p) => ({ question_id: p.question_id, answer: p.answer }));
    await run.writeJson("program-failures.json", failures);
    await run.writeJson("predictions.json", answers);
  }
  const result = await scoreTagRun({ ...scoring, predictions: answers, run, match: { similarity } });
  return { agent: "program", dir, summary: result.summary };
}

/** Opens the folder of one of the demo's agents as a tag-structured run, checked before anything is written in it. */
async function openTagRun(scoring: Omit<TagScoreSetup, "predictions">): Promise<{ run: RunDirectory; similarity: SimilaritySource }> {
  const similarity = await defaultTextSimilarity();
  const run = await openRun(tagScoreRunContract({ ...scoring, predictions: [], match: { similarity } }, similarity.name));
  return { run, similarity };
}

/** A TAG question as an OpenEQA one; its frame folder (relative to the dataset) made relative to `framesRoot`, which holds it. */
function asOpenEqaQuestion(q: TagQuestion, datasetDir: string, framesRoot: string): Question {
  const episodeHistory = q.episode_history ? relative(framesRoot, resolve(datasetDir, q.episode_history)) : "";
  return { questionId: q.question_id, question: q.question, answer: q.answer, category: CATEGORY_OF_QUERY[q.tags.query_type], episodeHistory };
}

/** The folder, inside a language-model agent's demo run, of its answers (a stage with a ledger of its own). */
export const DEMO_ANSWERS_DIR = "answers";

/** Every model call of a demo run, from its ledgers: the judge's (the run's folder) and its agent's (answers/). */
export function demoRunCalls(run: Pick<DemoRun, "dir">): CallEntry[] {
  return [...readCallLedger(run.dir), ...readCallLedger(join(run.dir, DEMO_ANSWERS_DIR))];
}

async function modelRun(agentName: AgentName, questions: TagQuestion[], questionsPath: string, framesRoot: string, dir: string, options: Required<Pick<DemoOptions, "model" | "runtime">>): Promise<DemoRun> {
  const { agent, models } = createAgent({ agent: agentName, model: options.model }, options.runtime);
  // one tag-structured run: the agent's answers (answers/, an answer run of its own) are a stage of it
  const scoring = { questions, questionsPath, predictionsPath: join(dir, "predictions.json"), judge: { spec: options.model }, outDir: dir, settings: { agent: agentName, model: options.model.name } };
  const { run, similarity } = await openTagRun(scoring);
  const datasetDir = dirname(questionsPath);
  const answered = await answerQuestions({ questions: questions.map((q) => asOpenEqaQuestion(q, datasetDir, framesRoot)), agent, framesRoot, outDir: join(dir, DEMO_ANSWERS_DIR), models, usage: options.runtime.usage });
  const byId = new Map(answered.records.map((r) => [r.questionId, r.answer]));
  const predictions = questions.map((q) => ({ question_id: q.question_id, answer: byId.get(q.question_id) ?? null }));
  await run.writeJson("predictions.json", predictions);
  const judge = options.runtime.model(options.model, { role: JUDGE_ROLE });
  const result = await scoreTagRun({ ...scoring, predictions, judge, usage: options.runtime.usage, run, match: { similarity } });
  return { agent: `${agentName} (${options.model.name})`, dir, summary: result.summary };
}

/** The agent of the user's own on every question, with the grounding frame and its action history (tag-agent.ts). */
async function externalRun(spec: ExternalAgentSpec, questions: TagQuestion[], questionsPath: string, recordings: string, dir: string, options: DemoOptions): Promise<DemoRun> {
  const episodes = new Map<string, TagAgentEpisode>();
  const { inputs } = await loadSimRecordings(recordings, recordings);
  for (const { log, file } of inputs) {
    if (file && log.frames) episodes.set(log.id, { frames: resolveInside(dirname(file), log.frames, { file, field: "frames" }), log });
  }
  const predictionsFile = join(dir, "predictions.json");
  // one tag-structured run: the agent's answers (answers.jsonl) are a stage of it
  const scoring = { questions, questionsPath, predictionsPath: predictionsFile, ...(options.model && options.runtime ? { judge: { spec: options.model } } : {}), outDir: dir, settings: { agent: describeExternalAgent(spec), task: "tag" } };
  const { run, similarity } = await openTagRun(scoring);
  const model = options.model && options.runtime ? options.runtime.model(options.model, { role: "agent" }) : undefined;
  const agent = new ExternalAgent(spec, { task: "tag", episodes: true, ...(model ? { model } : {}), ...(options.agentTimeoutMs !== undefined ? { timeoutMs: options.agentTimeoutMs } : {}) });
  let answered;
  try {
    answered = await runTagAnswers(questions, episodes, agent, run, options.runtime ? { usage: options.runtime.usage } : {});
  } finally {
    await agent.close();
  }
  for (const failure of answered.failures) options.onStage?.(`${describeExternalAgent(spec)}: ${failure.question_id} not answered: ${failure.error}`);
  const predictions: TagPrediction[] = answered.predictions.map((p) => ({ question_id: p.question_id, answer: p.answer }));
  const result = await scoreTagRun({
    questions,
    questionsPath,
    predictions,
    predictionsPath: predictionsFile,
    ...(model && options.model && options.runtime ? { judge: options.runtime.model(options.model, { role: JUDGE_ROLE }), usage: options.runtime.usage } : {}),
    outDir: dir,
    settings: { agent: describeExternalAgent(spec), task: "tag" },
    run,
    match: { similarity },
  });
  return { agent: describeExternalAgent(spec), dir, summary: result.summary };
}

/** Runs the demo into `options.out`: recordings/, dataset/, runs/<agent>/. */
export async function runDemo(options: DemoOptions): Promise<DemoResult> {
  // the demo's folder: kind demo, its settings those of the stages every agent shares (homes, tasks, questions, frames);
  // each run under runs/ and the dataset carry their own manifest (parts), checked as they are opened
  const agents = options.model && options.runtime ? (options.agents ?? DEMO_AGENTS) : [];
  const parts = ["dataset", "runs/program", ...(options.agent ? ["runs/agent"] : []), ...agents.map((a) => `runs/${a}`)];
  const earlier = existsSync(options.out) ? readRunManifest(options.out)?.parts ?? [] : [];
  await openRun({
    dir: options.out,
    kind: RUN_KIND.demo,
    settings: { seeds: options.seeds ?? DEMO_SEEDS, tasksPerHome: options.tasksPerHome ?? 2, perTrajectory: options.perTrajectory ?? 16, width: options.width ?? 160, height: options.height ?? 120 },
    parts: [...new Set([...earlier, ...parts])],
  });
  const recordings = join(options.out, "recordings");
  const datasetDir = join(options.out, "dataset");
  await recordHomes(options, recordings);
  const questions = await generateQuestions(options, recordings, datasetDir);
  const questionsPath = join(datasetDir, "questions.json");
  const runs = [await programRun(questions, questionsPath, recordings, join(options.out, "runs", "program"), options)];
  options.onStage?.(`program agent: ${runs[0]!.summary.counts.scored} questions scored`);
  if (options.agent) {
    runs.push(await externalRun(options.agent, questions, questionsPath, recordings, join(options.out, "runs", "agent"), options));
    options.onStage?.(`${runs.at(-1)!.agent}: ${runs.at(-1)!.summary.counts.scored} questions scored`);
  }
  if (options.model && options.runtime) {
    for (const agent of options.agents ?? DEMO_AGENTS) {
      // the recordings beside the dataset hold the frames: both are under options.out
      runs.push(await modelRun(agent, questions, questionsPath, options.out, join(options.out, "runs", agent), { model: options.model, runtime: options.runtime }));
      options.onStage?.(`${agent} agent (${options.model.name}): ${runs.at(-1)!.summary.counts.scored} questions scored`);
    }
  }
  return { recordings, dataset: datasetDir, questions: questions.length, runs };
}
