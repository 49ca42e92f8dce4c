import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { loadTrajectoryLog, type TagQuestion, type TrajectoryLog } from "../../src/data/index.js";
import { openEpisode } from "../../src/episodes/index.js";
import { newTrace } from "../../src/agents/index.js";
import { ModelRuntime, loadSentenceEncoder, resolveModel } from "../../src/models/index.js";
import {
  apiObservations,
  buildTagDataset,
  buildTagConceptGraph,
  captionedViews,
  conceptGraphsBaseline,
  llmApiBaseline,
  maskSightings,
  parseRetrievalCalls,
  runRetrievalCalls,
  runTagBaseline,
  tagAnswerContext,
  tagBaseline,
  RETRIEVAL_LIMITS,
  type TagBaselineModels,
  type TagBaselineTrajectory,
  type TagConceptGraph,
} from "../../src/generate/index.js";
import { openAiReply, startModelServer, type ModelServer, type ReceivedRequest } from "../helpers/model-server.js";
import { temporaryDir } from "../helpers/paths.js";
import { copyRecording } from "../helpers/recordings.js";
import { cliEnv, runCli } from "../helpers/cli.js";

const ENV = { OPENAI_API_KEY: "sk-test" };

interface ChatBody {
  model: string;
  messages: { role: string; content: string | { type: string; text?: string; image_url?: { url: string } }[] }[];
}

/** The text of a request's first message, and whether it carries an image. */
function requestText(request: ReceivedRequest): { text: string; image: boolean; imageHash: string } {
  const content = (request.body as ChatBody).messages[0]!.content;
  if (typeof content === "string") return { text: content, image: false, imageHash: "" };
  const image = content.find((p) => p.type === "image_url");
  return { text: content.map((p) => p.text ?? "").join(""), image: image !== undefined, imageHash: image ? createHash("sha256").update(image.image_url!.url).digest("hex").slice(0, 8) : "" };
}

const isRetrieval = (r: ReceivedRequest): boolean => requestText(r).text.includes("The retrieval API");
const isAnswer = (r: ReceivedRequest): boolean => /\nQ: /.test(requestText(r).text) && !isRetrieval(r);

/**
 * The model server: the captioner describes each crop by its hash (so an object's captions differ
 * and are summarised, the same crop the same way), the LLM summarises, retrieves with `retrieval.reply` and answers.
 */
const retrieval = { reply: "[]" };
let server: ModelServer;
let models: TagBaselineModels;
let dir: string;
let log: TrajectoryLog;
let questions: TagQuestion[];
let trajectory: TagBaselineTrajectory;
let graph: TagConceptGraph;

before(async () => {
  server = await startModelServer((request) => {
    const { text, image, imageHash } = requestText(request);
    if (image) return openAiReply(`a ${/labelled it "([^"]+)"/.exec(text)?.[1]} seen in crop ${imageHash}`);
    if (text.includes("Summarise them")) return openAiReply(`summary of the ${/label is "([^"]+)"/.exec(text)?.[1]}`);
    if (text.includes("The retrieval API")) return openAiReply(retrieval.reply);
    return openAiReply("A: There is one bread (x=0.5, y=-0.6, z=-1.2).\nExplanation: it was seen.");
  });
  // no retry: the tests count the requests. The loopback server answers at once, but an attempt's time
  // includes the process's own work on it (the captioner's crops, eight attempts at once), which a
  // loaded machine stretches past seconds: the timeout only stops a server that hangs.
  const runtime = new ModelRuntime({ maxRetries: 0, retryBaseMs: 5, timeoutMs: 5 * 60_000 });
  const spec = (name: string) => resolveModel(name, { baseURL: `${server.url}/v1`, env: ENV });
  models = { llm: runtime.model(spec("openai/test-llm"), { role: "agent" }), captioner: runtime.model(spec("openai/test-vlm"), { role: "captioner" }) };
  // a recording of the built-in simulator at the demo's size, and a TAG-EQA set made from it
  dir = temporaryDir();
  const out = join(dir, "rec");
  await copyRecording({ seed: 2, tasks: ["cool"], width: 160, height: 120 }, out);
  log = await loadTrajectoryLog(join(out, "trajectory.json"));
  const sightings = await maskSightings(log, join(out, "frames"));
  questions = buildTagDataset([{ log, sightings, episodeHistory: "rec/frames" }], { perTrajectory: 4, seed: 0 }).questions;
  const episode = await openEpisode(join(out, "frames"), log.id);
  trajectory = { id: log.id, episode, log, tag: await tagAnswerContext(log, episode) };
  graph = await buildTagConceptGraph(trajectory, models, newTrace("prepare"));
});

after(() => server.close());

/** The lines of a prompt that list steps ("- step N, …"), by step. */
function stepLines(prompt: string): Map<number, string> {
  const lines = new Map<number, string>();
  for (const line of prompt.split("\n")) {
    const match = /^- step (\d+)[,:]/.exec(line);
    if (match) lines.set(Number(match[1]), line);
  }
  return lines;
}

describe("buildTagConceptGraph", () => {
  test("objects from the recording's masks, captioned from up to three views by the VLM and summarised by the LLM, in the grounding frame; every step with its observed objects", () => {
    assert.ok(graph.objects.length >= 5, `${graph.objects.length} objects`);
    assert.ok(graph.relations.length > 0);
    assert.equal(graph.steps.length, log.steps.length);
    for (const o of graph.objects) {
      assert.ok(!["wall", "floor", "ceiling"].includes(o.type), o.type);
      // an object seen in several frames had several captions, which the LLM summarised
      if (o.frames.length > 1) assert.equal(o.caption, `summary of the ${o.type}`);
      else assert.match(o.caption, new RegExp(`^a ${o.type} seen in crop [0-9a-f]{8}$`));
    }
    for (const s of graph.steps) for (const id of s.objects) assert.ok(graph.objects.find((o) => o.id === id)!.frames.includes(s.frame!));
    // the first frame's camera is the grounding frame's origin
    assert.deepEqual(graph.steps[0]!.agent, [0, 0, 0]);
    // the picked-up bread is matched to the graph's bread nearest to where the action history places it
    const pickup = trajectory.tag.actions.find((a) => a.action === "pickup")!;
    const step = graph.steps[pickup.step]!;
    const bread = step.manipulated.find((m) => m.type === pickup.object.type)!;
    assert.notEqual(bread.object, null, JSON.stringify(step));
    const centre = graph.objects.find((o) => o.id === bread.object)!.centre!;
    assert.ok(Math.hypot(centre[0] - pickup.object.position![0], centre[1] - pickup.object.position![1], centre[2] - pickup.object.position![2]) <= 1.5);
    assert.match(step.action!, /^picked up the bread/);
  });

  test("captions the largest view of each distinct frame, largest first", () => {
    const instance = {
      id: 0, label: "cup", caption: "cup", captionSource: "label" as const, bestView: 0, pointCount: 0,
      views: [
        { frame: 1, label: "cup", score: 1, source: "mask" as const, box2d: [0, 0, 1, 1] as [number, number, number, number], area: 50 },
        { frame: 1, label: "cup", score: 1, source: "mask" as const, box2d: [0, 0, 1, 1] as [number, number, number, number], area: 90 },
        { frame: 2, label: "cup", score: 1, source: "mask" as const, box2d: [0, 0, 1, 1] as [number, number, number, number], area: 70 },
        { frame: 3, label: "cup", score: 1, source: "mask" as const, box2d: [0, 0, 1, 1] as [number, number, number, number], area: 10 },
        { frame: 4, label: "cup", score: 1, source: "mask" as const, box2d: [0, 0, 1, 1] as [number, number, number, number], area: 60 },
      ],
    };
    assert.deepEqual(captionedViews(instance), [1, 2, 4]);
  });
});

describe("conceptgraphs baseline", () => {
  test("answers each question from the history of actions and observed object ids, the manipulated objects' boxes and centres, and the object list with relations; a rerun reuses the prepared graph", async () => {
    assert.equal(tagBaseline("conceptgraphs"), conceptGraphsBaseline);
    const out = join(dir, "conceptgraphs");
    const before = server.requests.length;
    const episodes = new Map([[log.id, { frames: join(dir, "rec", "frames"), log }]]);
    const run = await runTagBaseline(conceptGraphsBaseline, models, questions, episodes, out, { concurrency: 2 });
    assert.equal(run.failures.length, 0, JSON.stringify(run.failures[0]));
    assert.deepEqual(run.predictions.map((p) => p.answer), questions.map(() => "There is one bread (x=0.5, y=-0.6, z=-1.2)."));
    const made = server.requests.slice(before);
    const answers = made.filter(isAnswer);
    assert.equal(answers.length, questions.length);
    const prompt = requestText(answers[0]!).text;
    assert.ok(questions.some((q) => prompt.endsWith(`Q: ${q.question}`)));
    // the history: one line per step, each with the ids it observed
    const lines = stepLines(prompt);
    assert.equal(lines.size, log.steps.length);
    const seen = graph.steps.find((s) => s.objects.length >= 2)!;
    assert.match(lines.get(seen.step)!, new RegExp(`observed ${seen.objects.join(", ")}$`));
    assert.match(lines.get(1)!, /: (moved forward|turned left|turned right|looked down|looked up), succeeded;/);
    // a manipulation names its object's id, last box and centre
    const pickup = trajectory.tag.actions.find((a) => a.action === "pickup")!;
    const bread = graph.objects.find((o) => o.id === graph.steps[pickup.step]!.manipulated[0]!.object)!;
    assert.ok(lines.get(pickup.step)!.includes(`picked up the bread (the bread [${bread.id}: centre (x=${bread.centre![0]}, y=${bread.centre![1]}, z=${bread.centre![2]}), box [(x=`), lines.get(pickup.step));
    // the complete object list and the relations
    for (const o of graph.objects) assert.ok(prompt.includes(`- [${o.id}] ${o.type}: ${o.caption}; `), `object ${o.id}`);
    const relation = graph.relations[0]!;
    assert.ok(prompt.includes(`- [${relation.subject}] ${graph.objects.find((o) => o.id === relation.subject)!.type} ${relation.relation} [${relation.object}]`));
    // the trajectory was prepared once for its questions: each crop captioned once
    const captions = made.filter((r) => requestText(r).image).length;
    assert.equal(captions, graph.objects.reduce((n, o) => n + Math.min(3, o.frames.length), 0));
    assert.equal(made.filter((r) => requestText(r).text.includes("Summarise them")).length, graph.objects.filter((o) => o.frames.length > 1).length);

    // a rerun with new questions (under new ids: a folder refuses other questions under its ids) reads the prepared graph back from prepared.jsonl: no caption is asked again, the answered questions are kept
    const prepared = (await readFile(join(out, "prepared.jsonl"), "utf8")).trim().split("\n");
    assert.equal(prepared.length, 1);
    const again = server.requests.length;
    const rerun = await runTagBaseline(conceptGraphsBaseline, models, [...questions, ...questions.map((q) => ({ ...q, question_id: `${q.question_id}-again`, question: `${q.question} Please.` }))], episodes, out, { concurrency: 2 });
    assert.equal(rerun.failures.length, 0);
    const remade = server.requests.slice(again);
    assert.equal(remade.length, questions.length);
    assert.ok(remade.every(isAnswer));
    assert.equal(requestText(remade.find((r) => requestText(r).text.endsWith(`Q: ${questions[0]!.question} Please.`))!).text.split("\nQ: ")[0], prompt.split("\nQ: ")[0]);
  });
});

describe("llm-api baseline", () => {
  const question = (): TagQuestion => questions[0]!;

  async function answerWith(reply: string): Promise<{ answer: string | null; retrieve: string; prompt: string; notes: string[]; retrieved: number[] | undefined; toolCalls: number }> {
    retrieval.reply = reply;
    const before = server.requests.length;
    const result = await llmApiBaseline.answer(question(), graph, trajectory, models);
    const made = server.requests.slice(before);
    assert.equal(made.length, 2, "one retrieval call, one answer call");
    assert.ok(isRetrieval(made[0]!));
    assert.ok(isAnswer(made[1]!));
    return { answer: result.answer, retrieve: requestText(made[0]!).text, prompt: requestText(made[1]!).text, notes: result.trace.notes, retrieved: result.trace.retrieved, toolCalls: result.trace.toolCalls?.length ?? 0 };
  }

  test("is registered, and prepares the same ConceptGraph", async () => {
    assert.equal(tagBaseline("llm-api"), llmApiBaseline);
    const trace = newTrace("prepare");
    const prepared = await llmApiBaseline.prepare(trajectory, models, trace);
    assert.deepEqual(prepared, graph);
    assert.ok(trace.calls.some((c) => c.role === "caption") && trace.calls.some((c) => c.role === "caption-summary"));
  });

  test("filter_by_position: the answer prompt holds only the observations with an object within 0.25 m of the position, and only those objects", async () => {
    const target = graph.objects.find((o) => o.centre && o.frames.length >= 3)!;
    const [x, y, z] = target.centre!;
    const near = (p: { x: number; y: number; z: number } | null): boolean => p !== null && Math.hypot(p.x - x, p.y - y, p.z - z) <= 0.25;
    const expected = apiObservations(graph).filter((o) => o.objects.some((obj) => near(obj.position)));
    assert.ok(expected.length >= 1 && expected.length < graph.steps.length);
    const { answer, retrieve, prompt, retrieved, toolCalls } = await answerWith(JSON.stringify([{ function: "filter_by_position", args: { observations: "all", position: { x, y, z }, type: "object_position" } }]));
    assert.equal(answer, "There is one bread (x=0.5, y=-0.6, z=-1.2).");
    assert.ok(retrieve.endsWith(`Question: ${question().question}`));
    assert.match(retrieve, /threshold defaults to 0\.25 m/);
    const lines = stepLines(prompt);
    assert.deepEqual([...lines.keys()], expected.map((o) => o.step));
    assert.deepEqual(retrieved, expected.map((o) => o.step));
    assert.equal(toolCalls, 1);
    for (const line of lines.values()) {
      const ids = [...line.matchAll(/\[(\d+)\] /g)].map((m) => Number(m[1]));
      assert.ok(ids.includes(target.id), line);
      for (const id of ids) {
        const c = graph.objects.find((o) => o.id === id)!.centre;
        assert.ok(c && near({ x: c[0], y: c[1], z: c[2] }), `object ${id} in ${line}`);
      }
    }
    assert.ok(prompt.endsWith(`Q: ${question().question}`));
  });

  test("calls chain: a filter narrows an earlier one's result, only the unnarrowed results reach the answer, agent positions filter by where the agent was, similarity checks are stated", async () => {
    const bread = graph.objects.find((o) => o.type === "bread" && o.centre)!;
    const [x, y, z] = bread.centre!;
    const reply = [
      "Here are the calls:",
      "```json",
      JSON.stringify([
        { function: "filter_by_semantic_similarity", args: { observations: "all", query: "bread", type: "object_type", threshold: 0.99 } },
        { function: "filter_by_position", args: { observations: { result: 0 }, position: { x, y, z }, type: "object_position", threshold: 0.5 } },
        { function: "filter_by_position", args: { observations: "all", position: { x: 0, y: 0, z: 0 }, type: "agent_position" } },
        { function: "are_semantically_similar", args: { text1: "bread", text2: "food to eat" } },
      ]),
      "```",
    ].join("\n");
    const { prompt, notes } = await answerWith(reply);
    assert.ok(notes.some((n) => /^retrieval: 4 calls run/.test(n)), notes.join("\n"));
    const observations = apiObservations(graph);
    const breadSteps = observations.filter((o) => o.objects.some((obj) => obj.type === "bread" && obj.position && Math.hypot(obj.position.x - x, obj.position.y - y, obj.position.z - z) <= 0.5)).map((o) => o.step);
    const startSteps = observations.filter((o) => o.agent_position && Math.hypot(o.agent_position.x, o.agent_position.y, o.agent_position.z) <= 0.25).map((o) => o.step);
    assert.ok(breadSteps.length > 0 && startSteps.includes(0));
    assert.deepEqual([...stepLines(prompt).keys()], [...new Set([...breadSteps, ...startSteps])].sort((a, b) => a - b));
    // a step kept by the bread filter lists bread only (unless the agent-position filter kept it whole)
    const onlyBread = breadSteps.find((s) => !startSteps.includes(s))!;
    assert.ok([...stepLines(prompt).get(onlyBread)!.matchAll(/\[\d+\] (\w[\w ]*):/g)].every((m) => m[1] === "bread"));
    assert.match(prompt, /Checks:\n- are_semantically_similar\("bread", "food to eat"\) = \d\.\d\d\n/);
  });

  test("semantic similarity uses the embedded sentence encoder's cosine: a caption query keeps the observations whose objects' captions are near in meaning", async () => {
    const encoder = await loadSentenceEncoder();
    const observations = apiObservations(graph);
    const query = graph.objects.find((o) => o.type === "bread")!.caption;
    const result = await runRetrievalCalls([{ function: "filter_by_semantic_similarity", args: { observations: "all", query, type: "object_caption", threshold: 0.999 } }], observations, encoder);
    assert.ok(result.observations.length > 0);
    for (const o of result.observations) for (const obj of o.objects) assert.equal(obj.caption, query);
    const none = await runRetrievalCalls([{ function: "filter_by_semantic_similarity", args: { observations: "all", query: "a spaceship on the moon", type: "action", threshold: 0.95 } }], observations, encoder);
    assert.deepEqual(none.observations, []);
  });

  test("an unreadable or hostile retrieval reply is refused whole, nothing of it runs, and the answer is given every observation", async () => {
    const call = { function: "are_semantically_similar", args: { text1: "a", text2: "b" } };
    const position = { function: "filter_by_position", args: { observations: "all", position: { x: 0, y: 0, z: 0 }, type: "object_position" } };
    const hostile: [string, string, RegExp][] = [
      ["huge", JSON.stringify(Array.from({ length: 2000 }, () => call)), /characters, over 20000/],
      ["deeply nested", `${"[".repeat(9000)}${"]".repeat(9000)}`, /nested 9000 deep, over 5/],
      ["unknown function", JSON.stringify([{ function: "exec", args: { code: "import os; os.system('rm -rf /')" } }]), /function/],
      ["code, not data", "filter_by_position(observations, position={'x': 0})\n__import__('os').system('id')", /no JSON list/],
      ["unknown argument", JSON.stringify([{ ...position, args: { ...position.args, __proto__x: 1 } }]), /args/],
      ["prototype key", '[{"function": "filter_by_position", "args": {"observations": "all", "position": {"x": 0, "y": 0, "z": 0}, "__proto__": {"polluted": true}}}]', /args/],
      ["too many calls", JSON.stringify(Array.from({ length: RETRIEVAL_LIMITS.calls + 1 }, () => call)), /Too big|too big|at most|16/],
      ["forward reference", JSON.stringify([{ ...position, args: { ...position.args, observations: { result: 1 } } }, position]), /call 0 narrows the result of call 1/],
      ["reference to a check", JSON.stringify([call, { ...position, args: { ...position.args, observations: { result: 0 } } }]), /not a filter/],
      ["infinite coordinate", '[{"function": "filter_by_position", "args": {"position": {"x": 1e999, "y": 0, "z": 0}}}]', /position\.x/],
      ["negative threshold", JSON.stringify([{ ...position, args: { ...position.args, threshold: -1 } }]), /threshold/],
      ["long query", JSON.stringify([{ function: "filter_by_semantic_similarity", args: { query: "x".repeat(RETRIEVAL_LIMITS.textChars + 1) } }]), /query/],
      ["not JSON", "[this is not json]", /not JSON/],
      ["empty", "", /empty/],
    ];
    for (const [name, reply, reason] of hostile) {
      const parsed = parseRetrievalCalls(reply);
      assert.equal(parsed.ok, false, name);
      if (!parsed.ok) assert.match(parsed.reason, reason, `${name}: ${parsed.reason}`);
    }
    assert.equal(({} as Record<string, unknown>)["polluted"], undefined);
    // through the baseline: refused, recorded, and the answer step gets the whole memory
    const { prompt, notes, toolCalls, answer } = await answerWith(JSON.stringify([{ function: "exec", args: { code: "import os" } }]));
    assert.equal(toolCalls, 0);
    assert.ok(notes.some((n) => /^retrieval reply refused \(.+\): the answer is given every observation$/.test(n)), notes.join("\n"));
    assert.equal(stepLines(prompt).size, graph.steps.length);
    assert.notEqual(answer, null);
  });

  test("a list without any filter narrows nothing: the answer is given every observation", async () => {
    const { prompt, notes } = await answerWith("[]");
    assert.equal(stepLines(prompt).size, graph.steps.length);
    assert.ok(notes.some((n) => n.startsWith("retrieval: 0 calls run")));
  });
});

describe("eqa answer-tag --agent llm-api", () => {
  test("answers the set with the user's LLM (the captioner defaults to it): predictions for eqa score-tag, the retrieval calls in each answer's trace", async () => {
    const bread = graph.objects.find((o) => o.type === "bread" && o.centre)!;
    const [x, y, z] = bread.centre!;
    retrieval.reply = JSON.stringify([{ function: "filter_by_position", args: { observations: "all", position: { x, y, z }, type: "object_position", object_type: "bread" } }]);
    const questionsFile = join(dir, "questions.json");
    await writeFile(questionsFile, JSON.stringify(questions));
    const out = join(dir, "cli-llm-api");
    const cli = await runCli(["answer-tag", "--questions", questionsFile, "--agent", "llm-api", "--model", "openai/test-llm", "--model-base-url", `${server.url}/v1`, "--no-cache", "--out", out], cliEnv(dir, ENV));
    assert.equal(cli.code, 0, cli.stderr);
    const predictions = JSON.parse(await readFile(join(out, "predictions.json"), "utf8")) as { question_id: string; answer: string | null }[];
    assert.deepEqual(predictions, questions.map((q) => ({ question_id: q.question_id, answer: "There is one bread (x=0.5, y=-0.6, z=-1.2)." })));
    const records = (await readFile(join(out, "answers.jsonl"), "utf8")).trim().split("\n").map((l) => JSON.parse(l) as { trace: { toolCalls: { name: string; arguments: { position: { x: number } } }[]; retrieved: number[] } });
    assert.equal(records.length, questions.length);
    for (const r of records) {
      assert.deepEqual(r.trace.toolCalls.map((c) => c.name), ["filter_by_position"]);
      assert.equal(r.trace.toolCalls[0]!.arguments.position.x, x);
      assert.ok(r.trace.retrieved.length > 0);
    }
  });
});
