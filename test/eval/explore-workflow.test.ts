import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { sceneOpener, type ActiveEpisode } from "../../src/agents/index.js";
import { exploreAndJudge, planExploreWorkflow, type ExploreWorkflowOptions } from "../../src/eval/index.js";
import { CallPlan, ModelRuntime, readCallLedger, resolveModel } from "../../src/models/index.js";
import { openAiReply, withModelServer } from "../helpers/model-server.js";
import { temporaryDir } from "../helpers/paths.js";

/**
 * `exploreAndJudge`, the workflow `eqa explore` and `eqa reproduce`'s explore rows run, called as
 * a library function: the frontier explorer on two built-in homes, the blind agent answering, a
 * judge giving LLM-Match marks, against a loopback model server.
 */

const EPISODES: ActiveEpisode[] = [
  { questionId: "q0", question: "Is there a kettle in the kitchen?", answer: "Yes", scene: "home-0", gtPathLengthM: 2 },
  { questionId: "q1", question: "What colour is the sofa?", answer: "Blue", scene: "home-1", gtPathLengthM: 3 },
];

function options(url: string, outDir: string): ExploreWorkflowOptions {
  const model = resolveModel("openai/gpt-4o-mini", { baseURL: `${url}/v1`, env: { OPENAI_API_KEY: "sk-test" } });
  const judge = resolveModel("openai/gpt-4o", { baseURL: `${url}/v1`, env: { OPENAI_API_KEY: "sk-test" } });
  const observation = { width: 64, height: 48 };
  return {
    episodes: EPISODES,
    episodesFile: "episodes.json",
    explorer: "frontier",
    openScene: sceneOpener({ env: "builtin", ...observation, timeoutMs: 10_000, bridgePython: "python3" }),
    env: "builtin",
    observation,
    model,
    answerer: { agent: "blind", model, forceGuess: false },
    judge: { spec: judge, mode: "robust", eac: false },
    maxSteps: 5,
    image: { maxSide: 64, format: "png" },
    concurrency: 1,
    outDir,
    promptSet: "eqakit",
    callSettings: {},
  };
}

describe("exploreAndJudge", () => {
  test("explores, answers and judges every episode, returns the figures and the cost from the run's ledger, and resumes without a call", async () => {
    await withModelServer((request) => openAiReply(JSON.stringify(request.body).includes("Your mark") ? "Your mark: 4" : "A: yes"), async (server) => {
      const outDir = join(temporaryDir("eqakit-explore-workflow-"), "run");
      const stages = new Set<string>();
      const runtime = new ModelRuntime({ maxRetries: 0, retryBaseMs: 5, timeoutMs: 10_000 });
      const run = await exploreAndJudge({ ...options(server.url, outDir), onProgress: (stage) => stages.add(stage) }, runtime);
      assert.equal(run.exitCode, 0);
      assert.equal(run.runDir, outDir);
      assert.deepEqual([...stages], ["exploring", "judging"]);
      assert.deepEqual([run.summary.counts.finished, run.summary.counts.failed, run.records.length], [2, 0, 2]);
      assert.deepEqual([run.scores?.judged, run.scores?.llmMatch.n, run.scores?.llmMatch.correctness], [2, 2, 75]);
      // two answers and two judgements, each once in the ledger and the cost
      assert.equal(server.requests.length, 4);
      assert.equal(readCallLedger(outDir).length, 4);
      assert.deepEqual([run.cost.total.calls, run.cost.total.failed], [4, 0]);
      for (const file of ["episodes.jsonl", "predictions.json", "summary.json", "judgements.jsonl"]) assert.ok(existsSync(join(outDir, file)), file);

      const again = await exploreAndJudge(options(server.url, outDir), new ModelRuntime({ maxRetries: 0, timeoutMs: 10_000 }));
      assert.equal(server.requests.length, 4, "a resumed run makes no call");
      assert.deepEqual([again.summary.counts.reused, again.scores?.llmMatch.correctness, again.exitCode], [2, 75, 0]);
    });
  });

  test("planExploreWorkflow counts the answering agent's and the judge's calls of every episode without starting an environment or calling a model", async () => {
    await withModelServer(() => openAiReply("A: yes"), async (server) => {
      const outDir = join(temporaryDir("eqakit-explore-workflow-"), "run");
      const plan = new CallPlan();
      const { episodes, explorer, model, answerer, judge, maxSteps, image, observation } = options(server.url, outDir);
      const notes = await planExploreWorkflow({ episodes, explorer, model, answerer, judge, maxSteps, image, observation, outDir }, plan);
      assert.equal(server.requests.length, 0);
      assert.equal(existsSync(outDir), false);
      assert.deepEqual(plan.roles().map((r) => [r.role, r.calls]), [["agent", 2], ["judge", 2]]);
      assert.equal(notes[0], `2 episode(s): 0 already explored in ${outDir}, 2 to explore`);
    });
  });
});
