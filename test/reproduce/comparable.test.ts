import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { loadQuestionSelection } from "../../src/data/index.js";
import { resolveModel } from "../../src/models/index.js";
import { OPENEQA_V0_SHA256, openEqaDifferences } from "../../src/reproduce/index.js";
import { openEqaBenchmarkFile, openEqaSubsetFile } from "../helpers/paths.js";

/** When an OpenEQA row of `eqa reproduce` counts as comparable with the paper's rows. */
describe("openEqaDifferences", () => {
  const model = (name: string) => resolveModel(name, { flag: "--judge", baseURL: "http://127.0.0.1:9/v1" });

  test("OpenEQA v0's 1,636 questions, a GPT-4 judge and the reference's scoring: nothing differs", async () => {
    const selection = await loadQuestionSelection({ benchmark: openEqaBenchmarkFile, defaultBenchmark: openEqaBenchmarkFile });
    assert.equal(selection.benchmark.sha256, OPENEQA_V0_SHA256);
    for (const judge of ["openai/gpt-4", "openai/gpt-4-0613", "openai/gpt-4-turbo"]) assert.deepEqual(openEqaDifferences({ selection, judgeSpec: model(judge), mode: "compat" }), [], judge);
  });

  test("a subset, another judge family and robust scoring are each named", async () => {
    const selection = await loadQuestionSelection({ benchmark: openEqaBenchmarkFile, subset: openEqaSubsetFile, defaultBenchmark: openEqaBenchmarkFile });
    assert.deepEqual(openEqaDifferences({ selection, judgeSpec: model("openai/gpt-4o"), mode: "robust" }), [
      `184 of OpenEQA v0's 1,636 questions (subset ${openEqaSubsetFile})`,
      "judge openai/gpt-4o, the paper's was GPT-4",
      "LLM-Match robust mode, the paper's scoring is the reference's (compat)",
    ]);
    assert.deepEqual(openEqaDifferences({ selection, judgeSpec: model("openai/gpt-4.1"), mode: "compat" }).slice(1), ["judge openai/gpt-4.1, the paper's was GPT-4"]);
  });
});
