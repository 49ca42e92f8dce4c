import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { cliEnv, runCli } from "../helpers/cli.js";
import { killMidway } from "../helpers/kill.js";
import { openAiReply, withModelServer } from "../helpers/model-server.js";
import { projectRoot, temporaryDir } from "../helpers/paths.js";
import { writePythonAgent } from "../helpers/python-agent.js";

const examples = join(projectRoot, "examples", "agents");
const SMALL = ["--env", "builtin", "--width", "64", "--height", "48", "--no-cache"];
const readJson = <T>(path: string): T => JSON.parse(readFileSync(path, "utf8")) as T;
const lines = (path: string): string[] => (existsSync(path) ? readFileSync(path, "utf8").split("\n").filter((l) => l !== "") : []);

interface EpisodeRecord {
  questionId: string;
  explorer: string;
  answer: string | null;
  answerSource: string;
  stop: string | null;
  pathLengthSteps: number | null;
  pathLengthM: number | null;
  frames: number;
  coverage?: number | null;
  confidence?: number | null;
  explorerMsPerStep: number | null;
  details: { trace?: { agent: string; frames: number[]; calls: unknown[]; log?: { message: string }[]; stderr?: string } };
  error: string | null;
}

interface Summary {
  counts: { episodes: number; finished: number; failed: number; reused: number; answered: number };
  stops: Record<string, number>;
  metrics: { pathLength: { meanSteps: number | null }; coverage: { mean: number | null; n: number } };
  failures: { questionId: string; error: string }[];
}

function writeEpisodes(dir: string, ids: string[], scene = "home-0"): string {
  const file = join(dir, "episodes.json");
  writeFileSync(file, JSON.stringify(ids.map((id) => ({ question_id: id, question: `What is near the door (${id})?`, scene }))));
  return file;
}

const records = (out: string): Map<string, EpisodeRecord> => new Map(lines(join(out, "episodes.jsonl")).map((l) => JSON.parse(l) as EpisodeRecord).map((r) => [r.questionId, r]));

/**
 * A Python agent on the client that behaves, per episode id, as $WAYS (JSON) says: "walk" (turns
 * left, answers at step 3, after asking for the memory), "crash", "unknown-action", "wrong-id",
 * "garbage", "hang", "ignore-budget" (always acts), "slow" (turns, 0.3 s a step, always); it appends each reset's episode id to $RESETS.
 */
function scriptedAgent(dir: string): string {
  return writePythonAgent(dir, "scripted.py", { modules: ["json", "os", "sys", "time"], names: ["Agent", "ProtocolError", "answer", "serve"], body: `
WAYS = json.loads(os.environ.get("WAYS", "{}"))

class Scripted(Agent):
    name = "scripted"
    version = "2"
    supports = ["active"]

    def reset(self, episode, observation):
        with open(os.environ["RESETS"], "a") as f:
            f.write(episode["id"] + "\\n")
        self.way = WAYS.get(episode["id"], "walk")
        try:
            self.memory("door")
        except ProtocolError as error:
            self.log(f"memory: {error}")
        self.log(f"pid {os.getpid()}")
        return self.step(observation)

    def step(self, observation):
        way, n = self.way, observation["step"]
        if way == "crash" and n == 2:
            sys.stderr.write("Traceback: RuntimeError: CUDA out of memory\\n")
            sys.stderr.flush()
            os._exit(3)
        if way == "unknown-action" and n == 1:
            return "fly"
        if way == "wrong-id" and n == 1:
            sys.__stdout__.write(json.dumps({"jsonrpc": "2.0", "id": 999, "result": {"action": "turn_left"}}) + "\\n")
            sys.__stdout__.flush()
            time.sleep(60)
        if way == "garbage" and n == 1:
            sys.__stdout__.write("step 1: turning left\\n")
            sys.__stdout__.flush()
            time.sleep(60)
        if way == "hang" and n == 1:
            time.sleep(60)
        if way == "ignore-budget":
            return "move_forward"
        if way == "slow":
            time.sleep(0.3)
            return "turn_left"
        if n >= 3:
            if not os.path.exists(observation["frame"]["path"]) or not os.path.exists(observation["frame"]["depthPath"]):
                raise RuntimeError("the frame files are missing")
            return answer(f"seen {observation['frame']['index'] + 1} frames", 0.75)
        return "turn_left"

serve(Scripted())
` });
}

describe("eqa explore --agent exec:COMMAND (active agents of the protocol)", () => {
  test("the Python random walk explores the built-in simulator, answers from its frames through the run's model, and is recorded like a built-in explorer", async () => {
    const home = temporaryDir();
    const episodes = writeEpisodes(home, ["w1", "w2"]);
    await withModelServer(() => openAiReply("a green armchair"), async (server) => {
      const out = join(home, "run");
      const result = await runCli(
        ["explore", "--episodes", episodes, "--agent", `exec:python3 ${join(examples, "random_walk.py")} --steps 6`, "--model", "openai/gpt-4o", "--model-base-url", `${server.url}/v1`, "--out", out, ...SMALL],
        cliEnv(home),
      );
      assert.equal(result.code, 0, result.stderr);
      assert.match(result.stdout, /eqa explore \(exec:python3 .*random_walk\.py --steps 6, builtin\): 2\/2 episodes finished, 0 failed/);
      assert.match(result.stdout, /reachable floor seen: \d/);
      assert.equal(server.requests.length, 2);
      const images = (server.requests[0]!.body as { messages: { content: { type: string }[] }[] }).messages[0]!.content.filter((p) => p.type === "image_url");
      assert.ok(images.length >= 1 && images.length <= 4, `${images.length} frames sent`);
      const w1 = records(out).get("w1")!;
      assert.equal(w1.explorer, "external");
      assert.equal(w1.answer, "a green armchair");
      assert.equal(w1.answerSource, "agent");
      assert.equal(w1.stop, "answered");
      assert.equal(w1.confidence, 0.5);
      assert.equal(w1.pathLengthSteps, 6);
      assert.equal(typeof w1.coverage, "number");
      assert.equal(typeof w1.explorerMsPerStep, "number");
      assert.equal(w1.details.trace?.agent, "random-walk");
      assert.equal(w1.details.trace?.calls.length, 1);
      assert.match(w1.details.trace?.log?.[0]?.message ?? "", /walking 6 steps in home-0/);
      const trajectory = readJson<{ format: string; steps: unknown[]; frames: number }>(join(out, "trajectories", "w1.json"));
      assert.equal(trajectory.format, "eqakit-explore-trajectory/1");
      assert.equal(trajectory.steps.length, 7);
      assert.ok(existsSync(join(out, "trajectories", "w1.png")));
      assert.equal(readdirSync(join(out, "frames", "w1")).filter((f) => f.endsWith("-rgb.png")).length, w1.frames);
      const predictions = readJson<{ question_id: string; answer: string }[]>(join(out, "predictions.json"));
      assert.deepEqual(predictions.map((p) => [p.question_id, p.answer]), [["w1", "a green armchair"], ["w2", "a green armchair"]]);
      const summary = readJson<Summary>(join(out, "summary.json"));
      assert.deepEqual(summary.stops, { answered: 2 });
      assert.equal(summary.metrics.coverage.n, 2);
    });
  });

  test("the Python frontier agent reads the depth frames and covers more of the home than its first view, offline and without a model", async () => {
    const home = temporaryDir();
    const episodes = writeEpisodes(home, ["f1"], "home-1");
    const out = join(home, "run");
    const result = await runCli(["explore", "--episodes", episodes, "--agent", `exec:python3 ${join(examples, "frontier.py")}`, "--max-steps", "40", "--out", out, ...SMALL], cliEnv(home));
    assert.equal(result.code, 0, result.stderr);
    const f1 = records(out).get("f1")!;
    assert.equal(f1.stop, "stopped", "without a model it stops without an answer");
    assert.equal(f1.answer, null);
    assert.ok((f1.pathLengthM ?? 0) > 1, `walked ${f1.pathLengthM} m`);
    assert.ok((f1.coverage ?? 0) > 0.2, `saw ${f1.coverage} of the reachable floor`);
    assert.match(f1.details.trace?.log?.[0]?.message ?? "", /free cells/);
  });

  test("a TypeScript module agent is loaded in-process and answers from the frames it asks for by index", async () => {
    const home = temporaryDir();
    const episodes = writeEpisodes(home, ["m1", "m2"]);
    await withModelServer(() => openAiReply("a bookshelf"), async (server) => {
      const out = join(home, "run");
      const result = await runCli(["explore", "--episodes", episodes, "--agent", join(examples, "active-module.ts"), "--model", "openai/gpt-4o", "--model-base-url", `${server.url}/v1`, "--concurrency", "2", "--out", out, ...SMALL], cliEnv(home));
      assert.equal(result.code, 0, result.stderr);
      for (const r of records(out).values()) {
        assert.equal(r.answer, "a bookshelf");
        assert.equal(r.pathLengthSteps, 12);
        assert.equal(r.details.trace?.agent, "look-around");
        assert.equal(r.details.trace?.frames.length, 4);
      }
    });
  });

  /** How an agent breaks the protocol in an episode (its id is the way), and what that episode's error says. */
  const BROKEN: [way: string, title: string, words: RegExp][] = [
    ["crash", "crashes", /agent scripted failed in episode crash at step 2: the agent process exited \(exit code 3\); its stderr ends with:\nTraceback: RuntimeError: CUDA out of memory/],
    ["unknown-action", "names an unknown action", /agent scripted failed in episode unknown-action at step 1: the reply to step names an unknown action "fly" \(the environment offers move_forward, turn_left, turn_right, look_up, look_down\)/],
    ["wrong-id", "answers a request it was not sent", /agent scripted failed in episode wrong-id at step 1: a reply to no request eqakit sent \(id 999\)/],
    ["garbage", "prints a non-JSON line", /agent scripted failed in episode garbage at step 1: a line on stdout that is not JSON: "step 1: turning left"/],
    ["hang", "hangs", /agent scripted failed in episode hang at step 1: step got no reply in 1000 ms/],
  ];

  /**
   * Explores a good episode before and after each bad one, one episode at a time (the episode
   * after a bad one needs a fresh process), and checks that each bad episode fails alone, named,
   * and that the good one after it is explored by a fresh process.
   */
  async function eachFailsAlone(ways: typeof BROKEN, extra: string[] = []): Promise<void> {
    const home = temporaryDir();
    const ids = ["good0", ...ways.flatMap(([way], i) => [way, `good${i + 1}`])];
    const episodes = writeEpisodes(home, ids);
    const out = join(home, "run");
    const env = cliEnv(home, { WAYS: JSON.stringify(Object.fromEntries(ways.map(([way]) => [way, way]))), RESETS: join(home, "resets.txt") });
    const result = await runCli(["explore", "--episodes", episodes, "--agent", `exec:python3 ${scriptedAgent(home)}`, "--concurrency", "1", "--out", out, ...SMALL, ...extra], env);
    assert.equal(result.code, 1, result.stderr);
    const summary = readJson<Summary>(join(out, "summary.json"));
    assert.equal(summary.counts.finished, ways.length + 1);
    assert.deepEqual(summary.failures.map((f) => f.questionId).sort(), ways.map(([way]) => way).sort());
    for (const [i, [way, , words]] of ways.entries()) {
      assert.match(summary.failures.find((f) => f.questionId === way)!.error, words);
      assert.match(result.stdout, new RegExp(`failed ${way}: agent scripted failed in episode ${way}`));
      const bad = records(out).get(way)!;
      assert.equal(bad.details.trace?.agent, "scripted", `the failed episode ${way} keeps the agent's trace`);
      if (way === "crash") assert.match(bad.details.trace?.stderr ?? "", /CUDA out of memory/);
      const good = records(out).get(`good${i + 1}`)!;
      assert.equal(good.answer, "seen 4 frames", `the episode after ${way}`);
      assert.equal(good.confidence, 0.75);
      assert.match(good.details.trace?.log?.[0]?.message ?? "", /memory: no memory: eqa explore has no prebuilt scene graphs \(memory\/query answers in eqa answer --memory DIR\)/);
    }
    assert.deepEqual(lines(join(home, "resets.txt")), ids);
  }

  // the ways that end a step at once share one run; a hang waits for --agent-timeout, which only its own run is given
  const [immediate, hang] = [BROKEN.filter(([way]) => way !== "hang"), BROKEN.filter(([way]) => way === "hang")];
  test(`an agent that ${immediate.map(([, title]) => title).join(", ")} fails that episode alone, named, and a fresh process explores the next`, () => eachFailsAlone(immediate));
  test("an agent that hangs fails that episode alone, named, and a fresh process explores the next", () => eachFailsAlone(hang, ["--agent-timeout", "1"]));

  test("--concurrency 2 explores with a pool of two agent processes, each taking episode after episode", async () => {
    const home = temporaryDir();
    const ids = ["p1", "p2", "p3", "p4", "p5", "p6"];
    const episodes = writeEpisodes(home, ids);
    const out = join(home, "run");
    const result = await runCli(["explore", "--episodes", episodes, "--agent", `exec:python3 ${scriptedAgent(home)}`, "--concurrency", "2", "--out", out, ...SMALL], cliEnv(home, { RESETS: join(home, "resets.txt") }));
    assert.equal(result.code, 0, result.stderr);
    const pids = [...records(out).values()].map((r) => r.details.trace?.log?.[1]?.message);
    assert.equal(pids.length, ids.length);
    assert.equal(new Set(pids).size, 2, `processes: ${pids.join(", ")}`);
  });

  test("with two processes taking episode after episode, the ledger names the episode of each model/complete call", async () => {
    const home = temporaryDir();
    const ids = ["m1", "m2", "m3", "m4", "m5"];
    const episodes = writeEpisodes(home, ids);
    await withModelServer((_, index) => ({ ...openAiReply("a green armchair"), delayMs: [30, 5, 15][index % 3] }), async (server) => {
      const out = join(home, "run");
      const result = await runCli(["explore", "--episodes", episodes, "--agent", `exec:python3 ${join(examples, "random_walk.py")} --steps 2`, "--model", "openai/gpt-4o", "--model-base-url", `${server.url}/v1`, "--concurrency", "2", "--no-cache", "--out", out, ...SMALL], cliEnv(home));
      assert.equal(result.code, 0, result.stderr);
      assert.equal(server.requests.length, ids.length);
      const items = readFileSync(join(out, "calls.jsonl"), "utf8").trim().split("\n").map((l) => (JSON.parse(l) as { item?: string }).item);
      assert.deepEqual([...items].sort(), ids, "one call for each episode, under its own id");
    });
  });

  test("when the step budget is spent, an agent that still moves ends its episode without an answer (stop: budget)", async () => {
    const home = temporaryDir();
    const episodes = writeEpisodes(home, ["b1"]);
    const out = join(home, "run");
    const env = cliEnv(home, { WAYS: JSON.stringify({ b1: "ignore-budget" }), RESETS: join(home, "resets.txt") });
    const result = await runCli(["explore", "--episodes", episodes, "--agent", `exec:python3 ${scriptedAgent(home)}`, "--max-steps", "5", "--out", out, ...SMALL], env);
    assert.equal(result.code, 0, result.stderr);
    const b1 = records(out).get("b1")!;
    assert.equal(b1.stop, "budget");
    assert.equal(b1.answer, null);
    assert.equal(b1.pathLengthSteps, 5);
  });

  test("when the time budget is spent, the agent is told so, and an agent that still acts ends its episode without an answer (stop: time)", async () => {
    const home = temporaryDir();
    const episodes = writeEpisodes(home, ["t1"]);
    const out = join(home, "run");
    const env = cliEnv(home, { WAYS: JSON.stringify({ t1: "slow" }), RESETS: join(home, "resets.txt") });
    const result = await runCli(["explore", "--episodes", episodes, "--agent", `exec:python3 ${scriptedAgent(home)}`, "--episode-time", "1", "--out", out, ...SMALL], env);
    assert.equal(result.code, 0, result.stderr);
    const t1 = records(out).get("t1")!;
    assert.equal(t1.stop, "time");
    assert.equal(t1.answer, null);
    assert.ok((t1.pathLengthSteps ?? 0) >= 1 && (t1.pathLengthSteps ?? 99) <= 4, `${t1.pathLengthSteps} actions in 1 s at 0.3 s or more each`);
  });

  test("an agent's answers are judged like a built-in explorer's: LLM-Match, efficiency, EXPRESS-Bench's C and reliability from its confidence", async () => {
    const home = temporaryDir();
    const episodes = join(home, "episodes.json");
    writeFileSync(episodes, JSON.stringify([{ question_id: "j1", question: "What colour is the sofa?", answer: "grey", scene: "home-0", gt_path_length: 2, gt_path_steps: 10 }]));
    await withModelServer(
      (request) => {
        const text = JSON.stringify(request.body);
        if (text.includes("Give two marks.")) return openAiReply("1, 4");
        if (text.includes("Your mark:")) return openAiReply("Your mark: 4");
        return openAiReply("unexpected");
      },
      async (server) => {
        const out = join(home, "run");
        const result = await runCli(
          ["explore", "--episodes", episodes, "--agent", `exec:python3 ${scriptedAgent(home)}`, "--judge", "openai/gpt-4o", "--judge-base-url", `${server.url}/v1`, "--out", out, ...SMALL],
          cliEnv(home, { RESETS: join(home, "resets.txt") }),
        );
        assert.equal(result.code, 0, result.stderr);
        assert.match(result.stdout, /LLM-Match C 75\.0 % \(n=1\)/);
        assert.match(result.stdout, /OpenEQA efficiency E \(steps\): /);
        assert.match(result.stdout, /EXPRESS-Bench: C 80\.0 %/);
        assert.match(result.stdout, /reliability \(EXPRESS-Bench\): ACE /, "the agent's confidence is the reliability figures' ceᵢ");
      },
    );
  });

  test("killed with SIGKILL and run again, it explores only the episodes not yet finished", async () => {
    const home = temporaryDir();
    const ids = Array.from({ length: 8 }, (_, i) => `k${i}`);
    const episodes = writeEpisodes(home, ids);
    const out = join(home, "run");
    const resets = join(home, "resets.txt");
    const args = ["explore", "--episodes", episodes, "--agent", `exec:python3 ${scriptedAgent(home)}`, "--out", out, ...SMALL];
    await killMidway(args, cliEnv(home, { RESETS: resets }), () => lines(join(out, "episodes.jsonl")).length >= 2);
    const done = new Set(records(out).keys());
    writeFileSync(resets, "");
    const resumed = await runCli(args, cliEnv(home, { RESETS: resets }));
    assert.equal(resumed.code, 0, resumed.stderr);
    assert.deepEqual(lines(resets).sort(), ids.filter((id) => !done.has(id)).sort(), "the agent is reset only for the episodes not finished");
    const summary = readJson<Summary>(join(out, "summary.json"));
    assert.equal(summary.counts.reused, done.size);
    assert.equal(summary.counts.finished, ids.length);
  });

  test("an agent that does not support the active kind is refused at initialize, naming what it supports", async () => {
    const home = temporaryDir();
    const episodes = writeEpisodes(home, ["x1"]);
    const result = await runCli(["explore", "--episodes", episodes, "--agent", `exec:python3 ${join(examples, "blind.py")}`, "--out", join(home, "run"), ...SMALL], cliEnv(home));
    assert.equal(result.code, 1, result.stderr);
    assert.match(result.stdout, /failed x1: agent exec:python3 .*blind\.py failed in initialize: initialize: the agent supports em-eqa, not active/);
  });
});

describe("eqa agent check (active agents)", () => {
  test("passes the active examples: the Python random walk and frontier agents and the TypeScript module", async () => {
    const home = temporaryDir();
    for (const [agent, count] of [[`exec:python3 ${join(examples, "random_walk.py")} --steps 8`, 8], [`exec:python3 ${join(examples, "frontier.py")}`, 8], [join(examples, "active-module.ts"), 4]] as const) {
      const result = await runCli(["agent", "check", "--agent", agent], cliEnv(home));
      assert.equal(result.code, 0, result.stdout + result.stderr);
      assert.match(result.stdout, /\(active\)\n/);
      assert.match(result.stdout, /pass {2}active: reset and step \(home-0\): \d+ action\(s\), .* then answered "A: a sofa"/);
      assert.match(result.stdout, /pass {2}active: step budget \(2 actions\): 2 action\(s\)/);
      assert.match(result.stdout, /pass {2}active: reply time: the slowest reply took \d+ ms of the 30000 ms allowed/);
      assert.match(result.stdout, new RegExp(`all ${count} checks passed`));
    }
  });

  test("fails a broken active agent with the reasons: an unknown action, an action past its budget, death on a line that is not JSON", async () => {
    const home = temporaryDir();
    const broken = join(home, "broken.py");
    writeFileSync(
      broken,
      `import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if "id" not in m:
        continue
    method = m["method"]
    if method == "initialize":
        r = {"name": "broken", "version": "0", "supports": ["active"]}
    elif method in ("reset", "step"):
        r = {"action": "fly"} if m["params"]["observation"]["step"] == 3 else {"action": "turn_left"}
    elif method == "shutdown":
        r = None
    else:
        r = {"ok": True}
    print(json.dumps({"jsonrpc": "2.0", "id": m["id"], "result": r}), flush=True)
    if method == "shutdown":
        break
`,
    );
    const result = await runCli(["agent", "check", "--agent", `exec:python3 ${broken}`, "--agent-timeout", "5"], cliEnv(home));
    assert.equal(result.code, 1, result.stdout + result.stderr);
    assert.match(result.stdout, /pass {2}active: initialize: broken 0/);
    assert.match(result.stdout, /FAIL {2}active: reset and step \(home-0\): agent broken failed in episode eqakit-check-explore at step 3: the reply to step names an unknown action "fly"/);
    assert.match(result.stdout, /FAIL {2}active: step budget \(2 actions\): 2 action\(s\), .*: with stepsLeft 0 the agent must answer or stop, it took an action/);
    assert.match(result.stdout, /FAIL {2}active: malformed input: after a line that is not JSON: the agent process exited \(exit code 1\); its stderr ends with:\n.*JSONDecodeError/s);
    assert.match(result.stdout, /6 of 7 checks failed/);
  });
});
