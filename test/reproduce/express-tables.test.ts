import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { loadActiveEpisodes } from "../../src/agents/index.js";
import { A_EQA_FULL_IDS_SHA256, expressDifferences, expressQuestionSetDifference, questionIdsSha256 } from "../../src/reproduce/index.js";
import { cliEnv, runCli } from "../helpers/cli.js";
import { writeHabitatStandIn } from "../helpers/habitat-standin.js";
import { jsonLines, killMidway } from "../helpers/kill.js";
import { openAiReply, withModelServer, type ReceivedRequest } from "../helpers/model-server.js";
import { fixturesDir, hmEqaDir, openEqaBenchmarkFile, openEqaSubsetFile, projectRoot, readRawBenchmark, temporaryDir } from "../helpers/paths.js";

/**
 * `eqa reproduce express-table-1` (A-EQA C′, E′) and `express-table-2` (HM-EQA accuracy and path
 * length) against a loopback VLM and judge, with Fine-EQA's reference mode exploring the built-in
 * homes for a few steps, and through `--env habitat` with a bridge whose Python serves the
 * built-in simulator in place of habitat-sim.
 */

const readJson = <T>(path: string): T => JSON.parse(readFileSync(path, "utf8")) as T;
const text = (request: ReceivedRequest): string => JSON.stringify(request.body);
const isJudgeCall = (request: ReceivedRequest): boolean => /Your mark:|Give two marks\./.test(text(request));

/** A VLM never sure enough to stop that answers "Yes, on the counter." or choice A, and a judge giving LLM-Match 4 and EAC 1, 4. */
function reply(request: ReceivedRequest) {
  const body = text(request);
  if (body.includes("Give two marks.")) return openAiReply("1, 4");
  if (body.includes("Your mark:")) return openAiReply("Your mark: 4");
  if (body.includes("Read the question and name the rooms")) return openAiReply("kitchen,living room");
  if (body.includes("You are given a QUESTION about a home and the IMAGE")) return openAiReply("No.");
  if (body.includes("Which labelled place would you walk to next")) return openAiReply("B");
  if (body.includes("worth exploring")) return openAiReply("Yes");
  if (body.includes("Which kind of room does this picture show?")) return openAiReply("E");
  if (body.includes("Which labelled place is in the")) return openAiReply("A");
  if (body.includes("Answer with the letter of one option only.")) return openAiReply("A: A");
  return openAiReply("A: Yes, on the counter.");
}

const QUESTIONS = ["Is there a kettle in the kitchen?", "Is there a sofa in the living room?"];

/** Two A-EQA-style episodes in homes 0 and 1, with answers and ground-truth path lengths in metres. */
function writeOpenEpisodes(dir: string, scene: (seed: number) => string = (seed) => `home-${seed}`, name = "a-eqa-episodes.json"): string {
  const episodes = [0, 1].map((seed) => ({ question_id: `a${seed}`, question: QUESTIONS[seed], answer: "Yes", scene: scene(seed), gt_path_length: 1.5 + seed }));
  const path = join(dir, name);
  writeFileSync(path, JSON.stringify(episodes));
  return path;
}

/** Two HM-EQA-style multiple-choice episodes: the VLM's choice A is right for the first, wrong for the second. */
function writeChoiceEpisodes(dir: string, scene: (seed: number) => string = (seed) => `home-${seed}`): string {
  const episodes = [0, 1].map((seed) => ({ question_id: `m${seed}`, question: QUESTIONS[seed], choices: ["Yes", "No"], answer: seed === 0 ? "A" : "B", scene: scene(seed) }));
  const path = join(dir, "hm-eqa-episodes.json");
  writeFileSync(path, JSON.stringify(episodes));
  return path;
}

function modelArgs(url: string, judge = true): string[] {
  return ["--model", "openai/gpt-4o-mini", "--model-base-url", `${url}/v1`, ...(judge ? ["--judge", "openai/gpt-4o", "--judge-base-url", `${url}/v1`] : []), "--max-steps", "3", "--width", "64", "--height", "48", "--image-size", "64", "--concurrency", "1", "--no-cache"];
}

interface TableJson {
  rows: { id: string; comparable: boolean; differences: string[]; cells: Record<string, { value: number; n: number; ci?: number; interval?: [number, number] }> }[];
  notes: string[];
}
interface ExploreRecordLine {
  questionId: string;
  pathLengthM: number;
  correct?: boolean;
}

describe("eqa reproduce express-table-1 and express-table-2", () => {
  test("table 1 on the built-in homes: C′ is LLM-Match's mean of (σ−1)/4 and E′ weights it by l/max(p, l) in metres (seed 003, Eqs. 5, 6), beside the paper's rows in Markdown, CSV, LaTeX and JSON, not comparable; a second run asks nothing", async () => {
    const dir = temporaryDir("eqakit-express-1-");
    const episodes = writeOpenEpisodes(dir);
    const out = join(dir, "table1");
    const env = cliEnv(dir, { OPENAI_API_KEY: "sk-test" });
    await withModelServer(reply, async (server) => {
      const args = ["reproduce", "express-table-1", "--episodes", episodes, "--env", "builtin", ...modelArgs(server.url), "--out", out];
      const dry = await runCli([...args.slice(0, -2), "--out", join(dir, "dry"), "--dry-run"], env);
      assert.equal(dry.code, 0, dry.stderr);
      assert.match(dry.stdout, /express-table-1: 1 row \(Fine-EQA reference mode on the built-in homes\)/);
      assert.equal(server.requests.length, 0);
      assert.equal(existsSync(join(dir, "dry")), false);

      const first = await runCli(args, env);
      assert.equal(first.code, 0, first.stderr);
      const calls = server.requests.length;
      assert.ok(server.requests.some(isJudgeCall) && server.requests.some((r) => !isJudgeCall(r)));
      assert.equal(server.requests.filter((r) => text(r).includes("Give two marks.")).length, 0, "C′ and E′ are LLM-Match's alone: no EAC call");
      assert.match(first.stdout, /\| OpenEQA w\/ GPT-4V \| 41\.8±3\.2\* \| 7\.5±0\.6\* \|/);

      const again = await runCli(args, env);
      assert.equal(again.code, 0, again.stderr);
      assert.equal(server.requests.length, calls, "the finished episodes and judgements are not asked again");
    });

    const records = jsonLines(join(out, "rows", "fine-eqa-reference", "episodes.jsonl")) as ExploreRecordLine[];
    assert.equal(records.length, 2);
    const gt: Record<string, number> = { a0: 1.5, a1: 2.5 };
    // every answer marked 4: (4 − 1)/4 = 75 %, and E′ weights each by its path ratio
    const ePrime = records.reduce((sum, r) => sum + 75 * (gt[r.questionId]! / Math.max(r.pathLengthM, gt[r.questionId]!)), 0) / records.length;
    const table = readJson<TableJson>(join(out, "table.json"));
    const row = table.rows[0]!;
    assert.equal(row.cells["c-prime"]?.value, 75);
    assert.equal(row.cells["c-prime"]?.n, 2);
    assert.ok(Math.abs(row.cells["e-prime"]!.value - ePrime) < 1e-9, `${row.cells["e-prime"]!.value} ≠ ${ePrime}`);
    // the ± is the bootstrap standard error over the episodes: none when every mark is the same
    assert.equal(row.cells["c-prime"]?.ci, 0);
    const interval = row.cells["e-prime"]!.interval!;
    assert.ok(row.cells["e-prime"]!.ci! >= 0 && interval[0] <= ePrime && ePrime <= interval[1]);
    assert.equal(row.comparable, false);
    assert.deepEqual(row.differences.slice(0, 3), [
      "built-in homes, not HM3D",
      `2 episode(s) of ${join(dir, "a-eqa-episodes.json")}, not OpenEQA's 557 A-EQA questions`,
      "judge openai/gpt-4o, the paper's was GPT-4 or GPT-4o-mini",
    ]);
    assert.ok(row.differences.includes("eqakit's prompts for Fine-EQA, not EXPRESS-Bench's (--prompts original)"));
    assert.match(table.notes.join(" "), /C′ is LLM-Match \(OpenEQA's prompt, compat mode\)/);

    const markdown = readFileSync(join(out, "table.md"), "utf8");
    assert.match(markdown, /\| Fine-EQA \| 43\.27 \| 29\.16 \|/);
    assert.match(markdown, new RegExp(`\\| openai/gpt-4o-mini \\| 75\\.00±0\\.00 \\| ${ePrime.toFixed(2)}±\\d+\\.\\d\\d \\| no \\|`));
    assert.match(markdown, /This run's rows: not comparable with the published rows: built-in homes, not HM3D; /);
    const csv = readFileSync(join(out, "table.csv"), "utf8").trim().split("\n");
    assert.equal(csv.length, 1 + 2 + 1);
    assert.match(csv[3]!, /^this run,This run: Fine-EQA \(reference mode\),openai\/gpt-4o-mini,false,75,/);
    const latex = readFileSync(join(out, "table.tex"), "utf8");
    assert.match(latex, /openai\/gpt-4o-mini\$\^\\dagger\$ & /);
    assert.match(latex, /\\bottomrule/);
    const summary = readJson<{ runs: Record<string, { answered: number; scored: number }> }>(join(out, "summary.json"));
    assert.deepEqual([summary.runs["fine-eqa-reference"]?.answered, summary.runs["fine-eqa-reference"]?.scored], [2, 2]);
  });

  test("table 2 on the built-in homes: accuracy is the share of replies naming the answer's letter and path length the mean path in metres, with no judge call, beside Explore-EQA's and Fine-EQA's rows, not comparable", async () => {
    const dir = temporaryDir("eqakit-express-2-");
    const episodes = writeChoiceEpisodes(dir);
    const out = join(dir, "table2");
    const env = cliEnv(dir, { OPENAI_API_KEY: "sk-test" });
    await withModelServer(reply, async (server) => {
      const result = await runCli(["reproduce", "express-table-2", "--episodes", episodes, "--env", "builtin", ...modelArgs(server.url), "--out", out], env);
      assert.equal(result.code, 0, result.stderr);
      assert.ok(server.requests.length > 0);
      assert.equal(server.requests.filter(isJudgeCall).length, 0, "accuracy needs no judge");
      assert.match(result.stderr, /express-table-2 needs no judge .*: --judge \(or EQA_JUDGE\) is not used/);
      assert.match(result.stdout, /\| Explore-EQA \| 50\.4 \| 93\.687 \|/);
    });
    const records = jsonLines(join(out, "rows", "fine-eqa-reference", "episodes.jsonl")) as ExploreRecordLine[];
    assert.deepEqual(records.map((r) => [r.questionId, r.correct]).sort(), [["m0", true], ["m1", false]]);
    const meanPath = (records[0]!.pathLengthM + records[1]!.pathLengthM) / 2;
    const row = readJson<TableJson>(join(out, "table.json")).rows[0]!;
    assert.deepEqual([row.cells.accuracy?.value, row.cells.accuracy?.n], [50, 2]);
    assert.ok(row.cells.accuracy!.ci! > 0, "one right and one wrong: a ± above 0");
    assert.ok(Math.abs(row.cells["path-length"]!.value - meanPath) < 1e-9);
    assert.equal(row.comparable, false);
    assert.equal(row.differences[0], "built-in homes, not HM3D");
    assert.match(row.differences[1]!, /not HM-EQA's 500 questions$/);
    const markdown = readFileSync(join(out, "table.md"), "utf8");
    assert.match(markdown, /\| Fine-EQA \| 56\.0 \| 54\.267 \|  \|/);
    assert.match(markdown, new RegExp(`\\| openai/gpt-4o-mini \\| 50\\.0±\\d+\\.\\d \\| ${meanPath.toFixed(3)}±\\d+\\.\\d{3} \\| no \\|`));
    for (const file of ["table.csv", "table.tex"]) assert.match(readFileSync(join(out, file), "utf8"), /Explore-EQA/);
  });

  for (const table of ["express-table-1", "express-table-2"]) {
    test(`killed with SIGKILL after its first episode and run again, ${table} does not ask the finished episode's questions again and ends with the table of an uninterrupted run`, async () => {
      const dir = temporaryDir("eqakit-express-kill-");
      const judged = table === "express-table-1";
      const episodes = judged ? writeOpenEpisodes(dir) : writeChoiceEpisodes(dir);
      const env = cliEnv(dir, { OPENAI_API_KEY: "sk-test" });
      await withModelServer(reply, async (server) => {
        const args = (out: string): string[] => ["reproduce", table, "--episodes", episodes, "--env", "builtin", ...modelArgs(server.url, judged), "--out", out];
        const whole = await runCli(args(join(dir, "whole")), env);
        assert.equal(whole.code, 0, whole.stderr);

        const out = join(dir, "resumed");
        const explored = join(out, "rows", "fine-eqa-reference", "episodes.jsonl");
        await killMidway(args(out), env, () => jsonLines(explored).length >= 1);
        const finished = (jsonLines(explored) as ExploreRecordLine[]).map((r) => QUESTIONS[Number(r.questionId.slice(1))]!);
        const before = server.requests.length;
        const resumed = await runCli(args(out), env);
        assert.equal(resumed.code, 0, resumed.stderr);
        const asked = server.requests.slice(before).filter((r) => !isJudgeCall(r));
        for (const question of finished) assert.equal(asked.filter((r) => text(r).includes(question)).length, 0, `${question} was explored again`);
        const cells = (run: string): unknown => readJson<TableJson>(join(dir, run, "table.json")).rows.map((r) => [r.id, r.cells, r.differences]);
        assert.deepEqual(cells("resumed"), cells("whole"));
      });
    });
  }

  test("what a run needs and is not here is named with how to get it, exit 2, before any call and before the run folder is made", async () => {
    const dir = temporaryDir("eqakit-express-missing-");
    const open = writeOpenEpisodes(dir);
    const hm3dOpen = writeOpenEpisodes(dir, (seed) => `val/0000${seed}-home${seed}`, "hm3d-episodes.json");
    const noPython = join(dir, "no-habitat-python");
    writeFileSync(noPython, "#!/bin/sh\necho \"ModuleNotFoundError: No module named 'habitat_sim'\" >&2\nexit 1\n");
    chmodSync(noPython, 0o755);
    const run = join(dir, "run");
    const env = cliEnv(dir, { OPENAI_API_KEY: "sk-test" });
    await withModelServer(reply, async (server) => {
      const refused = async (args: string[], ...patterns: RegExp[]): Promise<void> => {
        const result = await runCli(["reproduce", ...args, ...modelArgs(server.url), "--out", run], env);
        assert.equal(result.code, 2, result.stderr);
        for (const pattern of patterns) assert.match(result.stderr, pattern);
      };
      await refused(["express-table-1"], /needs the episodes/, /eqa data convert a-eqa/);
      await refused(["express-table-2", "--episodes", open], /multiple-choice episodes/, /questions\.csv/, /explore-eqa/);
      await refused(["express-table-2", "--episodes", join(hmEqaDir, "questions.csv"), "--env", "builtin"], /not a built-in home/, /--env habitat --scenes/);
      await refused(["express-table-1", "--episodes", hm3dOpen, "--env", "habitat"], /--scenes DIR/, /HM3D comes from Matterport/, /eqa env check --env habitat/);
      mkdirSync(join(dir, "hm3d", "val", "00000-home0"), { recursive: true });
      writeFileSync(join(dir, "hm3d", "val", "00000-home0", "home0.basis.glb"), "");
      await refused(["express-table-1", "--episodes", hm3dOpen, "--env", "habitat", "--scenes", join(dir, "hm3d"), "--bridge-python", noPython], /1 of the episodes' 2 HM3D scene\(s\) are not in .*: val\/00001-home1\/home1\.basis\.glb/, /cannot import habitat_sim: ModuleNotFoundError/, /--bridge-python/);
      await refused(["express-table-3", "--episodes", open, "--prompts", "original"], /EXPRESS-Bench's prompt file is missing/, /eqa data fetch express-bench/);
      assert.equal(server.requests.length, 0);
      assert.equal(existsSync(run), false);
    });
  });

  test("--env habitat passes --scenes and --bridge-python to the explore run: with a bridge Python serving the built-in simulator for each scene, table 2's row runs in 'HM3D' and says only what else differs", async () => {
    const dir = temporaryDir("eqakit-express-habitat-");
    const episodes = writeChoiceEpisodes(dir, (seed) => `val/0000${seed}-home${seed}`);
    const { scenes, python, calls: seen } = writeHabitatStandIn(dir, [0, 1]);
    const out = join(dir, "table2");
    await withModelServer(reply, async (server) => {
      const result = await runCli(["reproduce", "express-table-2", "--episodes", episodes, "--env", "habitat", "--scenes", scenes, "--bridge-python", python, ...modelArgs(server.url, false), "--out", out], cliEnv(dir, { OPENAI_API_KEY: "sk-test" }));
      assert.equal(result.code, 0, result.stderr);
    });
    const bridged = jsonLines(seen) as string[][];
    assert.equal(bridged.length, 2);
    for (const args of bridged) {
      assert.equal(args[0], join(projectRoot, "bridges", "habitat", "bridge.py"));
      assert.equal(args[args.indexOf("--scene-root") + 1], scenes);
    }
    const row = readJson<TableJson>(join(out, "table.json")).rows[0]!;
    assert.deepEqual([row.cells.accuracy?.value, row.cells.accuracy?.n], [50, 2]);
    assert.equal(row.differences.includes("built-in homes, not HM3D"), false);
    assert.match(row.differences[0]!, /not HM-EQA's 500 questions$/);
    assert.equal(readJson<{ settings: { env: string; scenes: string } }>(join(out, "summary.json")).settings.scenes, scenes);
  });
});

describe("expressQuestionSetDifference and expressDifferences", () => {
  const ids = (list: string[]) => list.map((questionId) => ({ questionId }));
  const bytes = new Uint8Array();

  test("OpenEQA v0's 557 HM3D question ids are A-EQA's full set, the 184 of open-eqa-v0-184-questions.json the GPT-4V row's subset (recognised by the SHA-256 of the sorted ids, in any order)", () => {
    const hm3d = readRawBenchmark().filter((q) => q.episode_history.startsWith("hm3d-")).map((q) => q.question_id);
    assert.equal(hm3d.length, 557);
    assert.equal(questionIdsSha256(hm3d.reverse()), A_EQA_FULL_IDS_SHA256);
    assert.equal(expressQuestionSetDifference("express-table-1", "a-eqa.json", bytes, ids(hm3d)), undefined);
    const subset = readJson<string[]>(openEqaSubsetFile);
    assert.equal(expressQuestionSetDifference("express-table-1", "a-eqa.json", bytes, ids(subset)), "the 184 questions of A-EQA's subset (the GPT-4V row's), not the full 557 Fine-EQA's row ran on");
    assert.equal(expressQuestionSetDifference("express-table-1", "a-eqa.json", bytes, ids(hm3d.slice(1))), "556 episode(s) of a-eqa.json, not OpenEQA's 557 A-EQA questions");
  });

  test("eqa data convert a-eqa --full writes every HM3D question of OpenEQA v0, the 557 that table 1 recognises as A-EQA's full set", async () => {
    const dir = temporaryDir("eqakit-express-full-");
    // one OpenEQA-format state file per HM3D episode history, written by the fixtures' make.py
    const histories = [...new Set(readRawBenchmark().filter((q) => q.episode_history.startsWith("hm3d-")).map((q) => q.episode_history))];
    const spec = Object.fromEntries(histories.map((h, k) => [h, [{ scene_id: `/hm3d/val/${String(800 + k).padStart(5, "0")}-${h.split("-hm3d-").pop()}/x.basis.glb`, position: [k, 0, 0], rotation: [1, 0, 0, 0] }]]));
    writeFileSync(join(dir, "states.json"), JSON.stringify(spec));
    execFileSync("python3", [join(fixturesDir, "openeqa-states", "make.py"), join(dir, "states.json"), join(dir, "frames")]);
    const out = join(dir, "a-eqa.json");
    const result = await runCli(["data", "convert", "a-eqa", "--states", join(dir, "frames"), "--benchmark", openEqaBenchmarkFile, "--full", "--out", out], cliEnv(dir));
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /wrote 557 A-EQA episodes in 63 HM3D scenes/);
    const episodes = await loadActiveEpisodes(out);
    assert.equal(expressQuestionSetDifference("express-table-1", out, readFileSync(out), episodes), undefined);
    const both = await runCli(["data", "convert", "a-eqa", "--states", join(dir, "frames"), "--benchmark", openEqaBenchmarkFile, "--full", "--subset", openEqaSubsetFile, "--out", out], cliEnv(dir));
    assert.equal(both.code, 2);
    assert.match(both.stderr, /--full/);
  });

  test("a run in HM3D on the benchmark's questions with EXPRESS-Bench's prompts, the reference's budget and observations and the paper's judge family differs in nothing", () => {
    const setup = { model: "openai/gpt-4o", env: "habitat", questionSet: undefined, promptSet: "original", mode: "compat" as const, maxSteps: null, observation: { width: 512, height: 512 } };
    assert.deepEqual(expressDifferences({ ...setup, table: "express-table-1", judge: "openai/gpt-4-0613" }), []);
    assert.deepEqual(expressDifferences({ ...setup, table: "express-table-1", judge: "openai/gpt-4o-mini" }), []);
    assert.deepEqual(expressDifferences({ ...setup, table: "express-table-2", judge: null }), []);
    assert.deepEqual(expressDifferences({ ...setup, table: "express-table-3", judge: "openai/gpt-4o-mini" }), []);
    assert.deepEqual(expressDifferences({ ...setup, table: "express-table-1", judge: "openai/gpt-4o", mode: "robust", maxSteps: 20 }), [
      "judge openai/gpt-4o, the paper's was GPT-4 or GPT-4o-mini",
      "LLM-Match robust mode, the paper's scoring is OpenEQA's (compat)",
      "a fixed budget of 20 steps, the reference's grows with the scene's area",
    ]);
  });
});
