import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import sharp from "sharp";
import { exploreFineEqaReference, parseLetterReply, parseReferenceRegions, type ReferenceMove, type RegionPointChoice, type ValueMapUpdate } from "../../src/agents/index.js";
import { ModelRuntime, resolveModel } from "../../src/models/index.js";
import { HouseholdEnvironment, generateHome, type EnvObservation } from "../../src/sim/index.js";
import { cliEnv, runCli } from "../helpers/cli.js";
import { openAiReply, withModelServer, type ReceivedRequest } from "../helpers/model-server.js";
import { temporaryDir } from "../helpers/paths.js";

const QUESTION = "Is there a kettle in the kitchen?";

/** The user text of an OpenAI chat request (text parts joined). */
function userText(request: ReceivedRequest): string {
  const body = request.body as { messages: { role: string; content: string | { type: string; text?: string }[] }[] };
  const user = [...body.messages].reverse().find((m) => m.role === "user")?.content ?? "";
  return typeof user === "string" ? user : user.filter((p) => p.type === "text").map((p) => p.text ?? "").join("");
}

/** What a request asks, from its prompt's words. */
function kind(request: ReceivedRequest): string {
  const text = userText(request);
  if (text.startsWith("Read the question and name the rooms")) return "regions";
  if (text.startsWith("You are given a QUESTION about a home and the IMAGE")) return "stop";
  if (text.startsWith("Which kind of room does this picture show?")) return "view-region";
  if (text.includes("Which labelled place would you walk to next")) return "direction";
  if (text.includes("worth exploring")) return "worth";
  if (text.includes("Which labelled place is in the")) return "region-point";
  if (text.startsWith("Answer the question in a few words with what is most likely")) return "blind";
  return "answer";
}

/** A VLM that is never sure: kitchen and living room are relevant, it would explore B, every view is a kitchen and its point A. */
function neverSure(request: ReceivedRequest) {
  switch (kind(request)) {
    case "regions":
      return openAiReply("kitchen,living room");
    case "stop":
      return openAiReply("No.");
    case "direction":
      return openAiReply("B");
    case "worth":
      return openAiReply("Yes");
    case "view-region":
      return openAiReply("E");
    case "region-point":
      return openAiReply("A");
    case "blind":
      return openAiReply("A: Yes, on the counter.");
    default:
      return openAiReply("?");
  }
}

interface Details {
  budget: number;
  observation: { width: number; height: number };
  valueUpdates: ValueMapUpdate[];
  regionPoints: RegionPointChoice[];
  moves: ReferenceMove[];
  finalMove: ReferenceMove | null;
  calls: { role: string }[];
}
interface Record_ {
  answer: string | null;
  answerSource: string;
  stop: string;
  frames: number;
  details: Details;
  error: string | null;
}

describe("eqa explore --agent fine-eqa:reference", () => {
  test("in the built-in simulator: 512×512 frames, a value map from the VLM's direction and worth replies, its region point followed, the last move made before the blind answer (EXPRESS-Bench main.py)", async () => {
    const dir = temporaryDir();
    const episodes = join(dir, "episodes.json");
    writeFileSync(episodes, JSON.stringify([{ question_id: "q1", question: QUESTION, scene: "home-1", start: { position: [8.925, 0, 3.425], yaw: 1.047 } }]));
    const out = join(dir, "run");
    await withModelServer(neverSure, async (server) => {
      const result = await runCli(
        ["explore", "--episodes", episodes, "--env", "builtin", "--agent", "fine-eqa:reference", "--model", "openai/gpt-4o-mini", "--model-base-url", `${server.url}/v1`, "--max-steps", "6", "--image-size", "128", "--out", out, "--no-cache"],
        cliEnv(dir, { OPENAI_API_KEY: "sk-test" }),
      );
      assert.equal(result.code, 0, result.stderr);
      assert.match(result.stdout, /eqa explore \(fine-eqa:reference, builtin\): 1\/1 episodes finished, 0 failed/);
      const record = JSON.parse(readFileSync(join(out, "episodes.jsonl"), "utf8").trim().split("\n")[0] as string) as Record_;
      assert.equal(record.error, null);
      const d = record.details;

      // The environment was asked for the reference's 512×512 observations.
      assert.deepEqual(d.observation, { width: 512, height: 512 });
      const first = await sharp(join(out, "frames", "q1", "00000-rgb.png")).metadata();
      assert.deepEqual([first.width, first.height], [512, 512]);
      assert.equal(record.frames, 6);

      // One stop check per step; never sure, so the budget runs out.
      const kinds = server.requests.map(kind);
      assert.equal(kinds[0], "regions");
      assert.equal(kinds.filter((k) => k === "stop").length, 6);
      assert.equal(record.stop, "budget");

      // The value map: SV = LSV·GSV with LSV one-hot on B times n/3 and GSV = exp(1/0.5)/3.
      assert.ok(d.valueUpdates.length > 0, "no view had candidate points");
      assert.equal(kinds.filter((k) => k === "direction").length, d.valueUpdates.length);
      for (const u of d.valueUpdates) {
        const n = u.candidates.length;
        assert.ok(n >= 2 && n <= 3);
        assert.equal(u.chosen, "B");
        assert.ok(Math.abs(u.gsv - Math.exp(2) / 3) < 1e-9);
        assert.deepEqual(u.values.map((v) => Number(v.toFixed(9))), u.candidates.map((_, i) => Number((i === 1 ? ((n / 3) * Math.exp(2)) / 3 : 0).toFixed(9))));
      }

      // The VLM's region point (A, in the kitchen, a relevant region) is a goal, and the agent goes there.
      const goals = d.regionPoints.filter((p) => p.goal);
      assert.ok(goals.length > 0);
      for (const p of d.regionPoints) assert.equal(p.letter, "A");
      const firstGoalMove = d.moves.find((m) => m.kind === "region");
      assert.ok(firstGoalMove, "no move to a region point");
      const goal = goals[0] as RegionPointChoice;
      assert.ok(Math.hypot(firstGoalMove.point[0] - goal.point[0], firstGoalMove.point[1] - goal.point[1]) < 0.5, `moved to ${firstGoalMove.point} for ${goal.point}`);
      // then the four looks: three left turns of 90°
      assert.ok(d.moves.some((m) => m.kind === "look"));

      // The last step's move is made, then the blind answer.
      assert.ok(d.finalMove);
      assert.equal(d.finalMove.step, d.budget - 1);
      assert.equal(d.moves.length, d.budget);
      const trajectory = JSON.parse(readFileSync(join(out, "trajectories", "q1.json"), "utf8")) as { steps: { position: number[] }[] };
      const last = trajectory.steps.at(-1)?.position as number[];
      assert.ok(Math.hypot((last[0] as number) - d.finalMove.point[0], (last[2] as number) - d.finalMove.point[1]) < 1e-9);
      assert.equal(kinds.at(-1), "blind");
      assert.equal(d.calls.at(-1)?.role, "blind-answer");
      assert.equal(record.answerSource, "blind");
      assert.equal(record.answer, "Yes, on the counter.");
    });
  });

  test("an unknown --agent still exits 2 and names the choices", async () => {
    const dir = temporaryDir();
    const episodes = join(dir, "episodes.json");
    writeFileSync(episodes, JSON.stringify([{ question_id: "q1", question: QUESTION, scene: "home-1" }]));
    const bad = await runCli(["explore", "--episodes", episodes, "--agent", "fine-eqa:ref"], cliEnv(dir));
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /fine-eqa:reference/);
  });
});

/** The built-in simulator with no depth: nothing is mapped, so no frontier is ever found. */
class DepthlessEnvironment extends HouseholdEnvironment {
  override async observe(): Promise<EnvObservation> {
    const obs = await super.observe();
    return { ...obs, depth: new Float32Array(obs.depth.length) };
  }
}

describe("exploreFineEqaReference", () => {
  test("with no frontier left it turns to a random heading and goes on to the budget, never stopping (tsdf.py find_next_pose)", async () => {
    await withModelServer(neverSure, async (server) => {
      const spec = resolveModel("openai/gpt-4o-mini", { baseURL: `${server.url}/v1`, env: { OPENAI_API_KEY: "sk-test" } });
      const vlm = new ModelRuntime({ maxRetries: 0, retryBaseMs: 5, timeoutMs: 10_000 }).model(spec, { role: "explorer" });
      const env = new DepthlessEnvironment(generateHome(1), { width: 64, height: 64, masks: false });
      await env.reset();
      const result = await exploreFineEqaReference(env, vlm, { question: QUESTION, framesDir: join(temporaryDir(), "frames"), maxSteps: 5, initClearanceM: 0, image: { maxSide: 64 } });
      assert.equal(result.stop, "budget");
      assert.equal(result.explorationSteps, 5);
      assert.deepEqual(result.moves.map((m) => m.kind), ["random", "random", "random", "random", "random"]);
      assert.equal(new Set(result.moves.map((m) => m.yaw.toFixed(6))).size, 5);
      // each new heading is the next view
      const teleports = result.steps.filter((s) => s.action === "teleport");
      assert.deepEqual(teleports.map((s) => s.state.yaw.toFixed(6)), result.moves.map((m) => m.yaw.toFixed(6)));
      assert.equal(result.valueUpdates.length, 0);
      assert.equal(result.answerSource, "blind");
    });
  });
});

describe("fine-eqa:reference reply parsing", () => {
  test("a letter among the candidates; regions split on commas without trimming, as main.py reads them", () => {
    assert.equal(parseLetterReply("B", 3), 1);
    assert.equal(parseLetterReply("C.", 3), 2);
    assert.equal(parseLetterReply("I would explore point A", 2), 0);
    assert.equal(parseLetterReply("D", 3), undefined);
    assert.equal(parseLetterReply(null, 3), undefined);
    assert.deepEqual(parseReferenceRegions("kitchen,living room"), [4, 6]);
    assert.deepEqual(parseReferenceRegions("kitchen, living room"), [4]);
    assert.deepEqual(parseReferenceRegions("unknown"), []);
  });
});
