import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { openAiReply, startModelServer, withModelServer, type ReceivedRequest } from "../helpers/model-server.js";
import { cliEnv, runCli } from "../helpers/cli.js";
import { killMidway } from "../helpers/kill.js";
import { openEqaBenchmarkFile, openEqaDir, projectRoot, readRawBenchmark, temporaryDir } from "../helpers/paths.js";
import { writePythonAgent } from "../helpers/python-agent.js";
import { writeRgbEpisode } from "../helpers/frames.js";

const demoQuestions = join(openEqaDir, "open-eqa-demo-data.json");
const demoIds = (JSON.parse(readFileSync(demoQuestions, "utf8")) as { question_id: string }[]).map((q) => q.question_id);
const blindPy = join(projectRoot, "examples", "agents", "blind.py");
const moduleAgent = join(projectRoot, "examples", "agents", "module-agent.mjs");
const readJson = (path: string): unknown => JSON.parse(readFileSync(path, "utf8"));
const lines = (path: string): string[] => (existsSync(path) ? readFileSync(path, "utf8").split("\n").filter((l) => l !== "") : []);
const isJudgeCall = (request: ReceivedRequest): boolean => JSON.stringify(request.body).includes("Your mark");

interface Summary {
  counts: { answered: number; failed: number };
  failures: { questionId: string; error: string }[];
}

/** A Python agent built on the client that misbehaves on the question whose id is $BAD_QUESTION, as $BAD_WAY says. */
function misbehavingAgent(dir: string): string {
  return writePythonAgent(dir, "misbehaving.py", { modules: ["os", "sys", "time"], names: ["Agent", "serve"], body: `
class Misbehaving(Agent):
    name = "misbehaving"
    def answer(self, question, episode):
        if question["id"] == os.environ["BAD_QUESTION"]:
            way = os.environ["BAD_WAY"]
            if way == "crash":
                sys.stderr.write("Traceback: CUDA out of memory\\n")
                sys.stderr.flush()
                os._exit(3)
            if way == "hang":
                time.sleep(60)
            if way == "garbage":
                sys.__stdout__.write("loading weights... done\\n")
                sys.__stdout__.flush()
                time.sleep(60)
        return "a sofa"

serve(Misbehaving())
` });
}

describe("eqa answer --agent exec:COMMAND (the agent protocol)", () => {
  test("a Python blind agent calls back the run's model, is scored by LLM-Match like a built-in agent, and its log lines are kept in the trace", async () => {
    const home = temporaryDir();
    await withModelServer((request) => openAiReply(isJudgeCall(request) ? "Your mark: 5" : "A: a sofa\nExplanation: living rooms have sofas"), async (server) => {
      const out = join(home, "run");
      const result = await runCli(
        ["run", "--benchmark", demoQuestions, "--agent", `exec:python3 "${blindPy}"`, "--model", "openai/gpt-4", "--model-base-url", `${server.url}/v1`, "--judge", "openai/gpt-4", "--judge-base-url", `${server.url}/v1`, "--out", out],
        cliEnv(home),
      );
      assert.equal(result.code, 0, result.stderr);
      const summary = readJson(join(out, "summary.json")) as { answer: { counts: { answered: number } }; score: { llmMatch: { overall: { mean: number } } } };
      assert.equal(summary.answer.counts.answered, 3);
      assert.equal(summary.score.llmMatch.overall.mean, 100);
      const predictions = readJson(join(out, "predictions.json")) as { question_id: string; answer: string }[];
      assert.deepEqual(predictions.map((p) => p.answer), ["a sofa", "a sofa", "a sofa"]);
      const agentCalls = server.requests.filter((r) => !isJudgeCall(r));
      assert.equal(agentCalls.length, 3);
      const body = agentCalls[0]!.body as { messages: { content: string }[]; temperature: number; max_tokens: number; seed: number };
      assert.match(body.messages[0]!.content, /You are an intelligent question answering agent/);
      assert.deepEqual([body.temperature, body.max_tokens, body.seed], [0.2, 128, 1234], "OpenEQA's parameters, sent by the agent");
      const record = JSON.parse(lines(join(out, "traces.jsonl"))[0]!) as { questionId: string; trace: { agent: string; calls: { model: string; cached: boolean }[]; log: { message: string }[]; stderr?: string } };
      assert.equal(record.trace.agent, "blind-python");
      assert.equal(record.trace.calls[0]!.model, "openai/gpt-4");
      assert.match(record.trace.log[0]!.message, /model replied 'A: a sofa/);
      assert.equal(record.trace.stderr, `answering ${record.questionId}\n`, "what the agent prints goes to stderr, recorded per question");

      const again = await runCli(["answer", "--benchmark", demoQuestions, "--agent", `exec:python3 "${blindPy}"`, "--model", "openai/gpt-4", "--model-base-url", `${server.url}/v1`, "--out", join(home, "again")], cliEnv(home));
      assert.equal(again.code, 0, again.stderr);
      const cached = JSON.parse(lines(join(home, "again", "traces.jsonl"))[0]!) as { trace: { calls: { cached: boolean }[] } };
      assert.equal(cached.trace.calls[0]!.cached, true, "the agent's calls go through eqakit's model-call cache");
    });
  });

  test("an agent that answers after its model call failed keeps its answer; one that fails is named, with its log lines and stderr", async () => {
    const home = temporaryDir();
    const fallback = writePythonAgent(home, "fallback.py", { modules: ["sys"], names: ["Agent", "ProtocolError", "serve"], body: `
class Fallback(Agent):
    name = "fallback"
    def answer(self, question, episode):
        sys.stderr.write("asking the model about " + question["id"] + "\\n")
        sys.stderr.flush()
        try:
            return self.complete([{"role": "user", "content": question["text"]}])["text"]
        except ProtocolError as error:
            self.log("the model failed: " + str(error), "warning")
            if question["id"] == ${JSON.stringify(demoIds[0])}:
                raise RuntimeError("no fallback for this one")
            return "a guess"

serve(Fallback())
` });
    await withModelServer(() => ({ status: 400, body: { error: { message: "the prompt is too long", type: "invalid_request_error" } } }), async (server) => {
      const out = join(home, "run");
      const result = await runCli(["answer", "--benchmark", demoQuestions, "--agent", `exec:python3 ${fallback}`, "--model", "openai/gpt-4", "--model-base-url", `${server.url}/v1`, "--out", out], cliEnv(home));
      assert.equal(result.code, 1, result.stdout + result.stderr);
      type Traced = { questionId: string; answer: string | null; error: string | null; trace: { calls: { reply: string | null; error?: string }[]; log?: { level: string; message: string }[]; stderr?: string } | null };
      const records = lines(join(out, "traces.jsonl")).map((l) => JSON.parse(l) as Traced);
      assert.equal(records.length, 3);
      for (const r of records) {
        assert.ok(r.trace, `${r.questionId} keeps its trace`);
        assert.equal(r.trace.calls.length, 1);
        assert.equal(r.trace.calls[0]!.reply, null);
        assert.match(r.trace.calls[0]!.error ?? "", /prompt is too long/, "the failed call is in the trace");
        assert.match(r.trace.log?.[0]?.message ?? "", /the model failed: /);
        assert.ok(r.trace.stderr?.startsWith(`asking the model about ${r.questionId}\n`), r.trace.stderr);
        if (r.questionId === demoIds[0]) {
          assert.equal(r.answer, null);
          assert.match(r.error ?? "", new RegExp(`^agent fallback failed on question ${demoIds[0]}: answer failed in the agent: .*no fallback for this one`));
        } else {
          assert.equal(r.error, null, r.error ?? "");
          assert.equal(r.answer, "a guess", "the agent's answer stands");
        }
      }
    });
    // a model the run cannot use (a refused key) stops the run, whatever the agent answers
    await withModelServer(() => ({ status: 401, body: { error: { message: "Incorrect API key provided", type: "invalid_request_error" } } }), async (server) => {
      const result = await runCli(["answer", "--benchmark", demoQuestions, "--agent", `exec:python3 ${fallback}`, "--model", "openai/gpt-4", "--model-base-url", `${server.url}/v1`, "--out", join(home, "refused")], cliEnv(home));
      assert.equal(result.code, 2, result.stdout + result.stderr);
      assert.match(result.stderr, /Incorrect API key provided/);
    });
  });

  test("a module agent is loaded in-process and asks for frames of the demo video by index", async () => {
    const home = temporaryDir();
    await withModelServer(() => openAiReply("eight chairs"), async (server) => {
      const out = join(home, "run");
      const result = await runCli(["answer", "--benchmark", demoQuestions, "--frames", openEqaDir, "--agent", moduleAgent, "--model", "openai/gpt-4o", "--model-base-url", `${server.url}/v1`, "--out", out, "--no-cache"], cliEnv(home));
      assert.equal(result.code, 0, result.stderr);
      const images = (server.requests[0]!.body as { messages: { content: { type: string }[] }[] }).messages[0]!.content.filter((p) => p.type === "image_url");
      assert.equal(images.length, 4);
      const record = JSON.parse(lines(join(out, "traces.jsonl"))[0]!) as { answer: string; trace: { agent: string; frames: number[]; images: unknown[]; notes: string[] } };
      assert.equal(record.answer, "eight chairs");
      assert.equal(record.trace.agent, "module-example");
      assert.deepEqual(record.trace.frames, [0, 56, 111, 167]);
      assert.equal(record.trace.images.length, 4);
      assert.deepEqual(record.trace.notes, ["module-example version 1.0", "confidence 0.5"]);
    });
  });

  test("a Python agent is given the episode's frame files in order, and reads them itself", async () => {
    const home = temporaryDir();
    const frames = await writeRgbEpisode(join(home, "episode"), 5, 64, 48);
    const agent = writePythonAgent(home, "frames.py", { modules: ["os", "sys"], names: ["Agent", "serve"], body: `
class Frames(Agent):
    name = "frames"
    def answer(self, question, episode):
        paths = [f["path"] for f in episode["frames"]]
        sizes = [os.path.getsize(p) > 0 for p in paths]
        return f"{episode['frameCount']} frames, {sum(sizes)} readable, first {os.path.basename(paths[0])}, last index {episode['frames'][-1]['index']}"

serve(Frames())
` });
    const out = join(home, "run");
    const result = await runCli(["answer", "--benchmark", demoQuestions, "--frames", frames, "--agent", `exec:python3 ${agent}`, "--out", out], cliEnv(home));
    assert.equal(result.code, 0, result.stderr);
    const predictions = readJson(join(out, "predictions.json")) as { answer: string }[];
    assert.deepEqual(predictions.map((p) => p.answer), Array(3).fill("5 frames, 5 readable, first 00000-rgb.png, last index 4"));
  });

  for (const [way, words, extra] of [
    ["crash", /agent misbehaving failed on question .*: the agent process exited \(exit code 3\); its stderr ends with:\nTraceback: CUDA out of memory/, []],
    ["hang", /agent misbehaving failed on question .*: answer got no reply in 1000 ms/, ["--agent-timeout", "1"]],
    ["garbage", /a line on stdout that is not JSON: "loading weights\.\.\. done"/, []],
  ] as const) {
    test(`an agent that ${way === "crash" ? "crashes" : way === "hang" ? "hangs" : "prints a non-JSON line"} on one question fails that question alone, named, and a fresh process answers the next`, async () => {
      const home = temporaryDir();
      const out = join(home, "run");
      const agent = misbehavingAgent(home);
      const result = await runCli(["answer", "--benchmark", demoQuestions, "--agent", `exec:python3 ${agent}`, "--out", out, "--concurrency", "1", ...extra], cliEnv(home, { BAD_QUESTION: demoIds[1]!, BAD_WAY: way }));
      assert.equal(result.code, 1, result.stderr);
      const summary = readJson(join(out, "summary.json")) as Summary;
      assert.equal(summary.counts.answered, 2);
      assert.equal(summary.failures.length, 1);
      assert.equal(summary.failures[0]!.questionId, demoIds[1]);
      assert.match(summary.failures[0]!.error, words);
      const predictions = readJson(join(out, "predictions.json")) as { question_id: string; answer: string }[];
      assert.deepEqual(predictions.map((p) => p.question_id), [demoIds[0], demoIds[2]]);
    });
  }

  test("a shell pipeline in --agent exits 2 before any work, naming the operator", async () => {
    const home = temporaryDir();
    const result = await runCli(["answer", "--benchmark", demoQuestions, "--agent", "exec:python3 agent.py | tee log", "--out", join(home, "run")], cliEnv(home));
    assert.equal(result.code, 2);
    assert.match(result.stderr, /"\|" is a shell operator/);
  });

  test("killed with SIGKILL and run again, it asks the agent only the questions not yet answered", async () => {
    const home = temporaryDir();
    const questions = readRawBenchmark().slice(0, 16);
    const subset = join(home, "subset.json");
    writeFileSync(subset, JSON.stringify(questions.map((q) => q.question_id)));
    const server = await startModelServer(() => ({ ...openAiReply("A: a chair"), delayMs: 100 }));
    try {
      const out = join(home, "answers");
      const args = ["answer", "--benchmark", openEqaBenchmarkFile, "--subset", subset, "--agent", `exec:python3 ${blindPy}`, "--model", "openai/gpt-4", "--model-base-url", `${server.url}/v1`, "--out", out, "--concurrency", "2", "--no-cache"];
      await killMidway(args, cliEnv(home), () => lines(join(out, "traces.jsonl")).length >= 4);
      const done = lines(join(out, "traces.jsonl")).length;
      const before = server.requests.length;
      const resumed = await runCli(args, cliEnv(home));
      assert.equal(resumed.code, 0, resumed.stderr);
      assert.equal(server.requests.length - before, questions.length - done);
      const predictions = readJson(join(out, "predictions.json")) as { answer: string }[];
      assert.equal(predictions.length, questions.length);
      assert.ok(predictions.every((p) => p.answer === "a chair"));
    } finally {
      await server.close();
    }
  });

  test("with several questions in flight, the ledger names the question of each model/complete call, also when a process answers a second question", async () => {
    const home = temporaryDir();
    const questions = readRawBenchmark().slice(0, 9);
    const subset = join(home, "subset.json");
    writeFileSync(subset, JSON.stringify(questions.map((q) => q.question_id)));
    // replies of uneven latency, so that the processes finish out of order and are reused for other questions
    const server = await startModelServer((_, index) => ({ ...openAiReply("A: a chair"), delayMs: [40, 5, 20][index % 3] }));
    try {
      const out = join(home, "answers");
      const result = await runCli(["answer", "--benchmark", openEqaBenchmarkFile, "--subset", subset, "--agent", `exec:python3 ${blindPy}`, "--model", "openai/gpt-4", "--model-base-url", `${server.url}/v1`, "--out", out, "--concurrency", "3", "--no-cache"], cliEnv(home));
      assert.equal(result.code, 0, result.stderr);
      assert.equal(server.requests.length, questions.length);
      const items = lines(join(out, "calls.jsonl")).map((l) => (JSON.parse(l) as { item?: string }).item);
      assert.deepEqual([...items].sort(), questions.map((q) => q.question_id).sort(), "one call for each question, under its own id");
    } finally {
      await server.close();
    }
  });
});

describe("eqa agent check", () => {
  test("passes the Python example and the module example", async () => {
    const home = temporaryDir();
    const python = await runCli(["agent", "check", "--agent", `exec:python3 ${blindPy}`], cliEnv(home));
    assert.equal(python.code, 0, python.stdout + python.stderr);
    assert.match(python.stdout, /pass {2}initialize: blind-python 1\.0 \(protocol 1; supports em-eqa\)/);
    assert.match(python.stdout, /pass {2}answer with an episode \(4 frames\): answered "a sofa"/);
    assert.match(python.stdout, /pass {2}malformed input: refused with error -32700/);
    assert.match(python.stdout, /pass {2}shutdown: replied null and exited/);
    assert.match(python.stdout, /all 7 checks passed/);
    const module = await runCli(["agent", "check", "--agent", moduleAgent], cliEnv(home));
    assert.equal(module.code, 0, module.stdout + module.stderr);
    assert.match(module.stdout, /answered "A: a sofa" in \d+ ms, 1 model call\(s\), frames 0, 1, 2, 3/);
  });

  test("checks a TAG agent with a TAG suite: the example that counts its action history passes every check", async () => {
    const home = temporaryDir();
    const result = await runCli(["agent", "check", "--agent", `exec:python3 ${join(projectRoot, "examples", "agents", "tag_history.py")}`], cliEnv(home));
    assert.equal(result.code, 0, result.stdout + result.stderr);
    assert.match(result.stdout, /\(tag\)\n/);
    assert.match(result.stdout, /pass {2}tag: initialize: tag-history 1\.0 \(protocol 1; supports tag\)/);
    // "How many times did you pick up the mug?" over a history that picks it up twice
    assert.match(result.stdout, /pass {2}tag: answer with frames and the action history \(4 frames, 3 actions\): answered "\[\{\\"predicate\\": .*\\"value\\": 2\}\]".*a structured answer of 1 group\(s\)/);
    assert.match(result.stdout, /pass {2}tag: invalid params: refused/);
    assert.match(result.stdout, /pass {2}tag: shutdown: replied null and exited/);
    assert.match(result.stdout, /all 6 checks passed/);
  });

  test("checks every kind an agent names in supports, and fails a TAG agent whose answer breaks the protocol", async () => {
    const home = temporaryDir();
    const every = join(home, "every.mjs");
    writeFileSync(
      every,
      `export function initialize() { return { name: "every", version: "1", supports: ["em-eqa", "active", "tag"] }; }
export function answer(params) { return { answer: params.tag ? JSON.stringify([{ predicate: "", objects: [], value: params.tag.actions.length }]) : "a sofa" }; }
export function step() { return { answer: "a sofa" }; }
`,
    );
    const result = await runCli(["agent", "check", "--agent", every], cliEnv(home));
    assert.equal(result.code, 0, result.stdout + result.stderr);
    assert.match(result.stdout, /\(em-eqa, active, tag\)\n/);
    assert.match(result.stdout, /pass {2}answer with an episode \(4 frames\)/);
    assert.match(result.stdout, /pass {2}active: step budget \(2 actions\)/);
    assert.match(result.stdout, /pass {2}tag: answer with frames and the action history \(4 frames, 3 actions\): answered .*value\\":3/);

    // an agent that refuses to be initialized for a task it does not do is asked again, in a fresh process, for the next kind
    const tagOnly = join(home, "tag-only.mjs");
    writeFileSync(tagOnly, `export function initialize(params) { if (params.task !== "tag") throw new Error("tag questions only"); return { name: "tag-only", version: "1", supports: ["tag"] }; }\nexport function answer() { return { answer: "two" }; }\n`);
    const refusing = await runCli(["agent", "check", "--agent", tagOnly], cliEnv(home));
    assert.equal(refusing.code, 0, refusing.stdout + refusing.stderr);
    assert.match(refusing.stdout, /\(tag\)\n {2}pass {2}tag: initialize: tag-only 1/);

    const broken = join(home, "broken-tag.mjs");
    writeFileSync(broken, `export function initialize() { return { name: "broken-tag", version: "0", supports: ["tag", "dance"] }; }\nexport function answer() { return { answer: 5 }; }\n`);
    const failed = await runCli(["agent", "check", "--agent", broken], cliEnv(home));
    assert.equal(failed.code, 1, failed.stdout + failed.stderr);
    assert.match(failed.stdout, /FAIL {2}supports: names "dance", which the protocol does not have/);
    assert.match(failed.stdout, /FAIL {2}tag: answer with frames and the action history .*: agent broken-tag failed on question eqakit-check-tag-1: the answer does not match the protocol/);
    assert.match(failed.stdout, /2 of 3 checks failed/);
  });

  test("sends each process initialize once, with the settings a run sends (model, timeoutMs, eqakitVersion)", async () => {
    const home = temporaryDir();
    const strict = join(home, "strict.py");
    writeFileSync(
      strict,
      `import json, sys
initialized = False
def reply(id, result=None, error=None, code=-32000):
    message = {"jsonrpc": "2.0", "id": id}
    if error is None:
        message["result"] = result
    else:
        message["error"] = {"code": code, "message": error}
    sys.stdout.write(json.dumps(message) + "\\n")
    sys.stdout.flush()
for line in sys.stdin:
    try:
        m = json.loads(line)
    except ValueError:
        reply(None, error="parse error", code=-32700)
        continue
    if "id" not in m:
        continue
    method, params = m["method"], m.get("params")
    if method == "initialize":
        s = params["settings"]
        if initialized:
            reply(m["id"], error="initialize was sent twice to this process")
        elif s.get("model") != "eqakit/check" or not isinstance(s.get("timeoutMs"), (int, float)) or not s.get("eqakitVersion"):
            reply(m["id"], error="settings lack the model, timeoutMs or eqakitVersion: " + json.dumps(s))
        else:
            initialized = True
            reply(m["id"], {"name": "strict", "version": "1", "supports": ["em-eqa", "tag"]})
    elif method == "answer":
        if not isinstance(params.get("question"), dict):
            reply(m["id"], error="invalid params", code=-32602)
        else:
            reply(m["id"], {"answer": "two"})
    elif method == "shutdown":
        reply(m["id"], None)
        sys.exit(0)
    else:
        reply(m["id"], error="unknown method", code=-32601)
`,
    );
    const result = await runCli(["agent", "check", "--agent", `exec:python3 ${strict}`], cliEnv(home));
    assert.equal(result.code, 0, result.stdout + result.stderr);
    assert.match(result.stdout, /\(em-eqa, tag\)\n/);
    assert.match(result.stdout, /pass {2}malformed input: refused with error -32700/);
    assert.match(result.stdout, /pass {2}tag: invalid params: refused \(invalid params \(code -32602\)\) and kept working/);
    assert.match(result.stdout, /all 13 checks passed/);
  });

  test("fails a broken agent with the reasons: a malformed answer, death on a line that is not JSON, a reply to an unknown method", async () => {
    const home = temporaryDir();
    const broken = join(home, "broken.py");
    writeFileSync(
      broken,
      `import json, sys
for line in sys.stdin:
    message = json.loads(line)  # dies on a line that is not JSON
    method = message.get("method")
    if method == "initialize":
        result = {"name": "broken", "version": "0"}
    elif method == "answer":
        result = {"answer": 5}
    else:
        result = "ok"
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}) + "\\n")
    sys.stdout.flush()
`,
    );
    const result = await runCli(["agent", "check", "--agent", `exec:python3 ${broken}`, "--agent-timeout", "5"], cliEnv(home));
    assert.equal(result.code, 1, result.stdout + result.stderr);
    assert.match(result.stdout, /pass {2}initialize: broken 0/);
    assert.match(result.stdout, /FAIL {2}answer without an episode: agent broken failed on question eqakit-check-1: the answer does not match the protocol: answer: Invalid input: expected string, received number/);
    assert.match(result.stdout, /FAIL {2}malformed input: after a line that is not JSON: .*exited \(exit code 1\); its stderr ends with:\n.*JSONDecodeError/s);
    assert.match(result.stdout, /checks failed/);
  });
});
