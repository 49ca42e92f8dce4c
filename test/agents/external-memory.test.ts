import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { cliEnv, runCli } from "../helpers/cli.js";
import { writeRgbEpisode } from "../helpers/frames.js";
import { openAiReply, withModelServer } from "../helpers/model-server.js";
import { projectRoot, temporaryDir } from "../helpers/paths.js";
import { writePythonAgent } from "../helpers/python-agent.js";

const readJson = <T>(path: string): T => JSON.parse(readFileSync(path, "utf8")) as T;

function writeBenchmark(dir: string, episode: string): string {
  const file = join(dir, "questions.json");
  writeFileSync(file, JSON.stringify([{ question_id: "q1", question: "What is on the sofa?", answer: "a red cushion", category: "object recognition", episode_history: episode }]));
  return file;
}

/** A Python agent that answers with what memory/query("cushion") returns, or with the error it gets. */
function memoryAgent(dir: string): string {
  return writePythonAgent(dir, "memory_agent.py", { modules: ["sys"], names: ["Agent", "ProtocolError", "serve"], body: `
class Memory(Agent):
    name = "memory-reader"
    def answer(self, question, episode):
        try:
            found = self.memory("cushion")
        except ProtocolError as error:
            return f"error {error.code}: {error}"
        o = found["objects"][0]
        # null and a field left out mean the same
        nulls = self._connection.request("memory/query", {"query": None, "limit": None})
        return f"{o['caption']} at {o['centre']} of {found['total']}/{found['episode']}; all: {len(self.memory()['objects'])}, with nulls: {len(nulls['objects'])}, relations {self.memory()['relations']}"

serve(Memory())
` });
}

describe("memory/query (the agent protocol)", () => {
  test("an agent of your own reads the episode's prebuilt scene graph of eqa answer --memory, and is told why when the run has none", async () => {
    const home = temporaryDir();
    const memory = join(home, "memory");
    const graph = join(home, "obj.json");
    writeFileSync(graph, JSON.stringify({
      object_1: { id: 1, object_tag: "sofa", object_caption: "a grey three-seat sofa", bbox_center: [1, 0.4, 2], bbox_extent: [2, 0.8, 0.9] },
      object_2: { id: 2, object_tag: "cushion", object_caption: "a red cushion", bbox_center: [1, 0.9, 2], bbox_extent: [0.4, 0.2, 0.4] },
    }));
    const imported = await runCli(["memory", "import", graph, "--episode", "hm3d-v0/scene", "--out", memory], cliEnv(home));
    assert.equal(imported.code, 0, imported.stderr);
    const benchmark = writeBenchmark(home, "hm3d-v0/scene");
    const agent = `exec:python3 ${memoryAgent(home)}`;

    const withMemory = await runCli(["answer", "--benchmark", benchmark, "--agent", agent, "--memory", memory, "--out", join(home, "with")], cliEnv(home));
    assert.equal(withMemory.code, 0, withMemory.stderr);
    const [answered] = readJson<{ answer: string }[]>(join(home, "with", "predictions.json"));
    assert.equal(answered!.answer, "a red cushion at [1, 0.9, 2] of 1/hm3d-v0/scene; all: 2, with nulls: 2, relations [{'subject': 1, 'relation': 'on', 'object': 0}]");

    const without = await runCli(["answer", "--benchmark", benchmark, "--agent", agent, "--out", join(home, "without")], cliEnv(home));
    assert.equal(without.code, 0, without.stderr);
    const [refused] = readJson<{ answer: string }[]>(join(home, "without", "predictions.json"));
    assert.match(refused!.answer, /^error -32003: no memory: the run has no prebuilt scene graphs \(give --memory DIR/);
  });
});

describe("examples/agents/multi_frame.py", () => {
  test("sends K frames spread over the episode between the halves of OpenEQA's GPT-4V prompt, through the run's model", async () => {
    const home = temporaryDir();
    const frames = await writeRgbEpisode(join(home, "episode"), 9, 64, 48);
    const benchmark = writeBenchmark(home, "episode");
    await withModelServer(() => openAiReply("a red cushion"), async (server) => {
      const out = join(home, "run");
      const result = await runCli(
        ["answer", "--benchmark", benchmark, "--frames", frames, "--agent", `exec:python3 ${join(projectRoot, "examples", "agents", "multi_frame.py")} --frames 3`, "--model", "openai/gpt-4o", "--model-base-url", `${server.url}/v1`, "--out", out, "--no-cache"],
        cliEnv(home),
      );
      assert.equal(result.code, 0, result.stderr);
      const content = (server.requests[0]!.body as { messages: { content: { type: string; text?: string }[] }[] }).messages[0]!.content;
      assert.deepEqual(content.map((p) => p.type), ["text", "image_url", "image_url", "image_url", "text"]);
      assert.match(content[0]!.text ?? "", /^You are an intelligent question answering agent/);
      assert.equal(content[4]!.text, "User Query: What is on the sofa?");
      const trace = JSON.parse(readFileSync(join(out, "traces.jsonl"), "utf8").split("\n")[0]!) as { answer: string; trace: { frames: number[]; agent: string } };
      assert.equal(trace.answer, "a red cushion");
      assert.equal(trace.trace.agent, "multi-frame-python");
      assert.deepEqual(trace.trace.frames, [0, 4, 8]);
    });
  });
});
