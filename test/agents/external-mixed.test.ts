import { before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { cliEnv, runCli } from "../helpers/cli.js";
import { openAiReply, withModelServer } from "../helpers/model-server.js";
import { projectRoot, temporaryDir } from "../helpers/paths.js";
import { writePythonAgent } from "../helpers/python-agent.js";
import { buildMixedFixture, type MixedFixture } from "../helpers/mixed-set.js";

const exampleAgent = join(projectRoot, "examples", "mixed-agent", "agent.py");
const SMALL = ["--width", "64", "--height", "48", "--no-cache"];
const lines = (path: string): string[] => (existsSync(path) ? readFileSync(path, "utf8").split("\n").filter((l) => l !== "") : []);

interface Record {
  questionId: string;
  answer: string | null;
  stop: string | null;
  pathLengthSteps: number | null;
  llmMatch?: number | null;
  details: { log?: { message: string }[] };
  error: string | null;
}
const records = (out: string): Map<string, Record> => new Map(lines(join(out, "mixed.jsonl")).map((l) => JSON.parse(l) as Record).map((r) => [r.questionId, r]));

/** A Python agent on the client that writes each reset's history to $HISTORY_DIR/<episode>.json and answers $ANSWER at once. */
function recordingAgent(dir: string): string {
  return writePythonAgent(dir, "recording.py", { modules: ["json", "os", "sys"], names: ["Agent", "answer", "serve"], body: `class Recorder(Agent):
    name = "recorder"
    supports = ["mixed"]
    def reset(self, episode, observation):
        with open(os.path.join(os.environ["HISTORY_DIR"], episode["id"] + ".json"), "w") as f:
            json.dump(self.history, f)
        return answer(os.environ.get("ANSWER", "desk"))
    def step(self, observation):
        return answer("desk")
serve(Recorder())
` });
}

let fixture: MixedFixture;
before(async () => {
  fixture = await buildMixedFixture({ width: 64, height: 48 });
});

describe("an agent of the user's own on a Mixed EQA set (eqa explore --episodes SET/episodes.json --agent exec:…)", () => {
  test("reset carries the history: each day's frame folder, its frame count and the agent's own actions in the world frame", async () => {
    const home = temporaryDir();
    const out = join(home, "run");
    const result = await runCli(["explore", "--episodes", fixture.file, "--agent", `exec:python3 ${recordingAgent(home)}`, "--out", out, ...SMALL], cliEnv(home, { HISTORY_DIR: home }));
    assert.equal(result.code, 0, result.stderr);
    const history = JSON.parse(readFileSync(join(home, "past-where-candle.json"), "utf8")) as { days: { day: number; when: string; framesDir: string; frameCount: number; actions: { action: string; object: { type: string }; target?: { type: string; position: number[] } }[] }[] };
    assert.equal(history.days.length, 1);
    const day = history.days[0]!;
    assert.equal(day.when, "yesterday, morning");
    assert.equal(day.frameCount, readdirSync(day.framesDir).filter((n) => n.endsWith("-rgb.png")).length);
    assert.ok(day.frameCount > 10);
    const put = day.actions.find((a) => a.action === "put" && a.object.type === "candle");
    assert.equal(put?.target?.type, "desk");
    const desk = fixture.present.objects.find((o) => o.id === 42)!;
    const [x, , z] = put!.target!.position;
    assert.ok(x! >= desk.min[0] - 0.05 && x! <= desk.max[0] + 0.05 && z! >= desk.min[2] - 0.05 && z! <= desk.max[2] + 0.05, `the desk's position ${put!.target!.position} is where the desk stands in the world frame`);
    assert.ok(!JSON.stringify(history).includes("bed"), "nothing of what happened while it was away");
    const summary = JSON.parse(readFileSync(join(out, "summary.json"), "utf8")) as { counts: { correct: number; finished: number } };
    assert.equal(summary.counts.finished, 4);
    assert.equal(summary.counts.correct, 1, "desk is right on the past question only, scored exactly");
  });

  test("the example agent walks, answers from its history and is scored; a canonical answer is not judged, another is, and model calls are costed under their question", async () => {
    const home = temporaryDir();
    const out = join(home, "run");
    await withModelServer(
      (request) => (JSON.stringify(request.body).includes("one or two words") ? openAiReply("Bed.") : openAiReply("Your mark: 5")),
      async (server) => {
        const result = await runCli(["explore", "--episodes", fixture.file, "--agent", `exec:python3 ${exampleAgent}`, "--model", "openai/gpt-4o", "--model-base-url", `${server.url}/v1`, "--judge", "openai/gpt-4o-mini", "--judge-base-url", `${server.url}/v1`, "--out", out, ...SMALL], cliEnv(home));
        assert.equal(result.code, 0, result.stderr);
        const byId = records(out);
        assert.equal(byId.size, 4);
        for (const r of byId.values()) {
          assert.equal(r.error, null);
          assert.equal(r.answer, "bed");
          assert.equal(r.stop, "answered");
          assert.equal(r.pathLengthSteps, 6, "it looks around and walks a little first");
          assert.match(r.details.log?.[0]?.message ?? "", /1 day\(s\) remembered, \d+ frame\(s\)/);
        }
        // "bed" is the canonical answer of the present candle question: scored exactly, no judge call
        assert.equal(byId.get("present-where-candle")?.llmMatch, undefined);
        assert.equal(byId.get("past-where-candle")?.llmMatch, 5);
        const calls = lines(join(out, "calls.jsonl")).map((l) => JSON.parse(l) as { item?: string; role?: string });
        assert.equal(calls.length, server.requests.length, "every request the server received is in the ledger");
        assert.equal(calls.length, 4 + 3, "one agent call per episode, one judging per answer that is not the canonical value");
        assert.deepEqual(calls.filter((c) => c.role !== "judge").map((c) => c.item).sort(), [...byId.keys()].sort());
        assert.match(result.stdout, /cost/);
        const report = await runCli(["report", out, "--out", join(home, "report.html")], cliEnv(home));
        assert.equal(report.code, 0, report.stderr);
        assert.match(readFileSync(join(home, "report.html"), "utf8"), /present-where-candle/);
      },
    );
  });

  test("a module agent runs too, and an agent that does not support mixed is refused before the run, naming why", async () => {
    const home = temporaryDir();
    const module = join(home, "agent.mjs");
    writeFileSync(module, `export default { initialize() { return { name: "m", version: "1", supports: ["mixed"] }; }, reset(p) { return { answer: p.episode.history.days.length === 1 ? "desk" : null }; }, step() { return { stop: true }; } };\n`);
    const ran = await runCli(["explore", "--episodes", fixture.file, "--agent", module, "--out", join(home, "module"), ...SMALL], cliEnv(home));
    assert.equal(ran.code, 0, ran.stderr);
    assert.deepEqual([...records(join(home, "module")).values()].map((r) => r.answer), ["desk", "desk", "desk", "desk"]);
    const refused = await runCli(["explore", "--episodes", fixture.file, "--agent", `exec:python3 ${join(projectRoot, "examples", "agents", "random_walk.py")}`, "--out", join(home, "refused"), ...SMALL], cliEnv(home));
    assert.equal(refused.code, 2);
    assert.match(refused.stderr, /supports active, not mixed/);
    assert.ok(!existsSync(join(home, "refused", "mixed.jsonl")));
  });

  test("eqa agent check runs the mixed suite on the example agent: a generated set's episode with its history, then the robustness checks", async () => {
    const home = temporaryDir();
    const result = await runCli(["agent", "check", "--agent", `exec:python3 ${exampleAgent}`], cliEnv(home));
    assert.equal(result.code, 0, result.stdout + result.stderr);
    assert.match(result.stdout, /\(mixed\)/);
    assert.match(result.stdout, /pass {2}mixed: reset with a history \(1 day, \d+ frames, \d+ actions of its own\), steps in the present home and its answer: 6 action\(s\)/);
    assert.match(result.stdout, /pass {2}mixed: shutdown/);
    assert.match(result.stdout, /all 6 checks passed/);
  });

  test("eqa agent check fails the mixed suite of an agent that never ends its episode", async () => {
    const home = temporaryDir();
    const path = writePythonAgent(home, "walker.py", { modules: ["sys"], names: ["Agent", "serve"], body: `class W(Agent):\n    supports = ["mixed"]\n    def step(self, observation):\n        return "turn_left"\nserve(W())\n` });
    const result = await runCli(["agent", "check", "--agent", `exec:python3 ${path}`], cliEnv(home));
    assert.equal(result.code, 1);
    assert.match(result.stdout, /FAIL {2}mixed: reset with a history .*step budget: an agent ends its episode by answering or stopping/);
  });
});
