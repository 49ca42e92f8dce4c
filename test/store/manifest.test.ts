import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { UserError } from "../../src/core/index.js";
import { RUN_MANIFEST_FILE, RUN_MANIFEST_FORMAT, checkRun, firstDifferingSetting, inferRunKind, openRun, readRunManifest, resultSettings, runInputPath, withRunCommandLine } from "../../src/store/index.js";
import { temporaryDir } from "../helpers/paths.js";
import { treeSnapshot } from "../helpers/tree.js";

describe("openRun", () => {
  test("writes manifest.json with the kind, settings and their hash, and every input by absolute path and SHA-256, copying small ones in", async () => {
    const root = temporaryDir();
    const predictions = join(root, "my-predictions.json");
    writeFileSync(predictions, '[{"question_id":"q1","answer":"a mug"}]\n');
    const run = await openRun({ dir: join(root, "run"), kind: "llm-match", settings: { judge: "openai/gpt-4o", mode: "robust" }, inputs: [{ name: "predictions", path: predictions, copy: true }, { name: "frames", path: root }] });
    const manifest = readRunManifest(run.path)!;
    assert.equal(manifest.format, RUN_MANIFEST_FORMAT);
    assert.equal(manifest.kind, "llm-match");
    assert.deepEqual(manifest.settings, { judge: "openai/gpt-4o", mode: "robust" });
    assert.match(manifest.settingsHash, /^[0-9a-f]{64}$/);
    const [file, folder] = manifest.inputs;
    assert.deepEqual({ ...file, sha256: file!.sha256?.length }, { name: "predictions", path: predictions, type: "file", sha256: 64, bytes: 40, copy: "inputs/predictions.json" });
    assert.deepEqual(folder, { name: "frames", path: root, type: "directory", sha256: null, bytes: null, copy: null });
    assert.equal(readFileSync(join(run.path, "inputs", "predictions.json"), "utf8"), readFileSync(predictions, "utf8"));
  });

  test("refuses a folder of another kind, or of the same kind with other settings, naming the first differing setting and changing nothing", async () => {
    const dir = join(temporaryDir(), "run");
    const run = await openRun({ dir, kind: "explore", settings: resultSettings({ explorer: "frontier", vlm: { name: "openai/gpt-4o", baseURL: "http://127.0.0.1:1" } }) });
    writeFileSync(run.file("summary.json"), '{"kind":"explore"}\n');
    writeFileSync(run.file("summary.json.123.tmp"), "partial");
    const before = treeSnapshot(dir);
    await assert.rejects(openRun({ dir, kind: "llm-match", settings: {} }), (e: unknown) => e instanceof UserError && e.message.includes(dir) && /kind explore, not llm-match/.test(e.message));
    await assert.rejects(openRun({ dir, kind: "explore", settings: { explorer: "fine-eqa", vlm: { name: "openai/gpt-4o" } } }), (e: unknown) => e instanceof UserError && /explorer is "frontier" there, "fine-eqa" now/.test(e.message));
    assert.deepEqual(treeSnapshot(dir), before);
    // the same settings resume, whatever the endpoint's address (not a setting)
    await openRun({ dir, kind: "explore", settings: resultSettings({ explorer: "frontier", vlm: { name: "openai/gpt-4o", baseURL: "http://127.0.0.1:2" }, concurrency: 3 }) });
  });

  test("names a changed judge as the user gave it, with the flag that resumes, not by a field of its description", async () => {
    const dir = join(temporaryDir(), "run");
    const judge = (name: string, provider: string, family: string, options?: Record<string, unknown>) => ({ name, provider, model: name.slice(provider.length + 1), baseURL: "http://127.0.0.1:1", family, ...(options ? { options } : {}) });
    await openRun({ dir, kind: "llm-match", settings: resultSettings({ judge: judge("openai/gpt-4o", "openai", "openai-compatible"), mode: "robust" }) });
    const refusal = async (settings: Record<string, unknown>): Promise<UserError> => {
      try {
        await openRun({ dir, kind: "llm-match", settings: resultSettings(settings) });
      } catch (error) {
        if (error instanceof UserError) return error;
        throw error;
      }
      throw new Error("not refused");
    };
    const other = await refusal({ judge: judge("anthropic/claude-sonnet-4-5", "anthropic", "anthropic"), mode: "robust" });
    assert.match(other.message, /\(the judge is openai\/gpt-4o there, anthropic\/claude-sonnet-4-5 now\)/);
    assert.doesNotMatch(other.message, /family/);
    assert.match(other.hint ?? "", /run with --judge openai\/gpt-4o to resume/);
    const optioned = await refusal({ judge: judge("openai/gpt-4o", "openai", "openai-compatible", { reasoning: "high" }), mode: "robust" });
    assert.match(optioned.message, /the judge openai\/gpt-4o is set up otherwise: its options\.reasoning is not set there, "high" now/);
    // a judge where the folder's run had none
    const structured = join(temporaryDir(), "run");
    await openRun({ dir: structured, kind: "tag-structured", settings: { judge: null } });
    await assert.rejects(openRun({ dir: structured, kind: "tag-structured", settings: { judge: judge("openai/gpt-4o", "openai", "openai-compatible") } }), (e: unknown) => e instanceof UserError && /the judge is not set there, openai\/gpt-4o now/.test(e.message) && /run without --judge to resume/.test(e.hint ?? ""));
    // eqa run keeps its stages apart: the score stage's judge
    const nested = join(temporaryDir(), "run");
    await openRun({ dir: nested, kind: "run", settings: { score: { judge: judge("openai/gpt-4o", "openai", "openai-compatible") } } });
    await assert.rejects(openRun({ dir: nested, kind: "run", settings: { score: { judge: judge("openai/gpt-4o-mini", "openai", "openai-compatible") } } }), (e: unknown) => e instanceof UserError && /the judge \(score\.judge\) is openai\/gpt-4o there, openai\/gpt-4o-mini now/.test(e.message));
  });

  test("refuses a question set that reuses the folder's ids for other questions, naming the first and how to go on; a subset or a larger set of the same questions resumes", async () => {
    const root = temporaryDir();
    const dir = join(root, "run");
    const question = (id: string, text: string) => ({ id, content: { question_id: id, question: text, answer: "a mug" } });
    const questionsFile = join(root, "questions.json");
    writeFileSync(questionsFile, "[]\n");
    const items = (list: ReturnType<typeof question>[]) => ({ noun: "question", input: "questions", flag: "--questions", file: "questions.json", list });
    const contract = (list: ReturnType<typeof question>[]) => ({ dir, kind: "answer-tag" as const, settings: {}, inputs: [{ name: "questions", path: questionsFile, copy: true }], items: items(list) });
    await openRun(contract([question("q01", "What is on the table?"), question("q02", "Where was the mug?")]));
    assert.deepEqual(Object.keys(readRunManifest(dir)!.items ?? {}), ["q01", "q02"]);
    // a subset, then a larger set of the same questions: resumed, the folder remembering all of them
    await openRun(contract([question("q02", "Where was the mug?")]));
    await openRun(contract([question("q01", "What is on the table?"), question("q03", "How many cups?")]));
    assert.deepEqual(Object.keys(readRunManifest(dir)!.items ?? {}), ["q01", "q02", "q03"]);
    const before = treeSnapshot(dir);
    await assert.rejects(
      openRun(contract([question("q01", "What is on the table?"), question("q02", "Where is the cup?"), question("q03", "How many mugs?")])),
      (e: unknown) =>
        e instanceof UserError &&
        e.location.id === "q02" &&
        /holds a run of kind answer-tag over other questions: the question of this id in questions\.json is not the one there \(and 1 more of the 3\): nothing was written/.test(e.message) &&
        e.hint!.includes(`give --out a new folder for it, or give --questions ${join(dir, "inputs", "questions.json")} to resume`),
    );
    assert.deepEqual(treeSnapshot(dir), before);
  });

  test("checks a folder written before manifests by its summary's kind or its record files, and resumes one of the same kind", async () => {
    const root = temporaryDir();
    const scored = join(root, "scored");
    mkdirSync(scored);
    writeFileSync(join(scored, "summary.json"), '{"kind":"llm-match","config":{}}\n');
    const before = treeSnapshot(scored);
    assert.throws(() => checkRun({ dir: scored, kind: "answer", settings: {} }), /kind llm-match, not answer/);
    assert.deepEqual(treeSnapshot(scored), before);
    await openRun({ dir: scored, kind: "llm-match", settings: { mode: "robust" } });
    assert.equal(readRunManifest(scored)?.kind, "llm-match");

    const answered = join(root, "answered");
    mkdirSync(answered);
    writeFileSync(join(answered, "traces.jsonl"), "");
    assert.equal(inferRunKind(answered), "answer");
    const tag = join(root, "tag");
    mkdirSync(tag);
    writeFileSync(join(tag, "judgements.jsonl"), '{"questionId":"q","inputKey":"k","groundedScore":1}\n');
    assert.equal(inferRunKind(tag), "tag-structured");
    assert.equal(inferRunKind(join(root, "missing")), undefined);
    const empty = join(root, "empty");
    mkdirSync(empty);
    assert.equal(checkRun({ dir: empty, kind: "answer", settings: {} }), undefined);
  });

  test("refuses a file in the folder's place and a manifest it cannot read", async () => {
    const root = temporaryDir();
    writeFileSync(join(root, "file"), "x");
    assert.throws(() => checkRun({ dir: join(root, "file"), kind: "answer", settings: {} }), UserError);
    mkdirSync(join(root, "bad"));
    writeFileSync(join(root, "bad", RUN_MANIFEST_FILE), '{"format":"other"}');
    assert.throws(() => checkRun({ dir: join(root, "bad"), kind: "answer", settings: {} }), /is not an eqakit run manifest/);
  });
});

describe("runInputPath", () => {
  test("reads the run's copy of an input after the original moved, and a summary's relative path from the folder the command ran in", async () => {
    const root = temporaryDir();
    const predictions = join(root, "p.json");
    writeFileSync(predictions, "[]\n");
    const run = await openRun({ dir: join(root, "run"), kind: "llm-match", settings: {}, inputs: [{ name: "predictions", path: predictions, copy: true }] });
    renameSync(predictions, join(root, "moved.json"));
    assert.equal(runInputPath(run.path, "predictions", "p.json"), join(run.path, "inputs", "predictions.json"));

    const old = join(root, "old");
    mkdirSync(old);
    writeFileSync(join(old, "commands.jsonl"), `${JSON.stringify({ command: "eqa score", cwd: root, exitCode: 0 })}\n`);
    assert.equal(runInputPath(old, "predictions", "moved.json"), join(root, "moved.json"));
    assert.equal(runInputPath(old, "predictions", "nowhere.json"), undefined);
  });
});

describe("firstDifferingSetting", () => {
  test("names the first differing leaf by its dotted path", () => {
    assert.deepEqual(firstDifferingSetting({ judge: { name: "a", temperature: 0.2 }, mode: "robust" }, { judge: { name: "a", temperature: 0.5 }, mode: "robust" }), { path: "judge.temperature", was: 0.2, now: 0.5 });
    assert.equal(firstDifferingSetting({ a: [1, 2] }, { a: [1, 2] }), undefined);
  });
});

describe("withRunCommandLine", () => {
  test("a run opened within it names the command line; one opened by library code after it, or beside it, names none", async () => {
    const root = temporaryDir();
    const scoped = withRunCommandLine(["score", "--judge", "openai/gpt-4o"], async () => {
      await new Promise((resolve) => setTimeout(resolve, 5));
      return openRun({ dir: join(root, "cli"), kind: "llm-match", settings: {} });
    });
    const beside = openRun({ dir: join(root, "beside"), kind: "llm-match", settings: {} });
    await Promise.all([scoped, beside]);
    await openRun({ dir: join(root, "after"), kind: "llm-match", settings: {} });
    assert.equal(readRunManifest(join(root, "cli"))?.command, "eqa score --judge openai/gpt-4o");
    assert.equal(readRunManifest(join(root, "beside"))?.command, null);
    assert.equal(readRunManifest(join(root, "after"))?.command, null);
  });
});
