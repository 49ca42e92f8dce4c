import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { ActiveEpisode } from "../../src/agents/index.js";
import { aEqaDifferences, aEqaQuestionSet } from "../../src/reproduce/index.js";
import { resolveModel } from "../../src/models/index.js";
import { cliEnv, runCli } from "../helpers/cli.js";
import { writeHabitatStandIn } from "../helpers/habitat-standin.js";
import { jsonLines, killMidway } from "../helpers/kill.js";
import { openAiReply, startModelServer, withModelServer, type ReceivedRequest } from "../helpers/model-server.js";
import { openEqaBenchmarkFile, openEqaSubsetFile, readRawBenchmark, temporaryDir } from "../helpers/paths.js";
import { writeSceneEpisode } from "../agents/scene-fixture.js";
import { startOpenAiBatchServer } from "../helpers/provider-emulators.js";
import { ledgerCost, readCallLedger } from "../../src/models/index.js";

/**
 * OpenEQA's A-EQA rows (`eqa reproduce openeqa-table-5`, and the A-EQA columns of Table II with
 * `--episodes`) on the built-in homes against a loopback model server: each family's row is a
 * frontier exploration with the family's agent answering from the recorded frames, judged with
 * LLM-Match alone.
 */

const readJson = <T>(path: string): T => JSON.parse(readFileSync(path, "utf8")) as T;

function bodyText(request: ReceivedRequest): string {
  return JSON.stringify(request.body);
}

/** The judge gives 4, force-a-guess keeps, a captioner describes, every agent answers "yes". */
function reply(request: ReceivedRequest): string {
  const text = bodyText(request);
  if (text.includes("Your mark")) return "Your mark: 4";
  if (text.includes("Proposed Answer:")) return "Action: keep";
  if (text.includes("image_url") && !text.includes("User Query")) return "A sofa beside a wooden table.";
  return "A: yes";
}

/** Two episodes in two built-in homes (or the scenes `scene(seed)` names), with categories and ground-truth path lengths in steps and metres. */
function writeEpisodes(dir: string, scene = (seed: number): string => `home-${seed}`): string {
  const episodes = [
    { question_id: "q0", question: "Is there a kettle in the kitchen?", answer: "Yes", category: "object recognition", scene: scene(0), gt_path_length: 3, gt_path_steps: 4 },
    { question_id: "q1", question: "What colour is the sofa?", answer: "Blue", category: "attribute recognition", scene: scene(1), gt_path_length: 2, gt_path_steps: 2 },
  ];
  const path = join(dir, "episodes.json");
  writeFileSync(path, JSON.stringify(episodes));
  return path;
}

/** Two EM-EQA questions of one HM3D episode, drawn as a small synthetic scene: the flags that run them. */
async function writeEmEqaQuestions(dir: string): Promise<string[]> {
  const raw = readRawBenchmark();
  const hm3d = raw.find((q) => q.episode_history.startsWith("hm3d-v0/"))!.episode_history;
  const subset = join(dir, "subset.json");
  writeFileSync(subset, JSON.stringify(raw.filter((q) => q.episode_history === hm3d).slice(0, 2).map((q) => q.question_id)));
  const frames = join(dir, "frames");
  await writeSceneEpisode(join(frames, hm3d), { layout: "hm3d", views: 4 });
  return ["--benchmark", openEqaBenchmarkFile, "--subset", subset, "--frames", frames];
}

/** OpenAI's batch API answering as `reply` does, counting the LLM-Match requests asked live. */
function args(table: string, episodes: string, url: string, out: string, extra: string[] = []): string[] {
  return ["reproduce", table, "--episodes", episodes, "--env", "builtin", "--model", "openai/gpt-4o", "--model-base-url", `${url}/v1`, "--judge", "openai/gpt-4o", "--judge-base-url", `${url}/v1`, "--max-steps", "6", "--width", "64", "--height", "48", "--image-size", "64", "--concurrency", "1", "--no-cache", "--out", out, ...extra];
}

interface TableJson {
  table: string;
  rows: { id: string; runDir: string; comparable: boolean; differences: string[]; failed: number; cells: Record<string, { value: number; ci?: number; change?: number; n: number }> }[];
  notes: string[];
}

describe("eqa reproduce openeqa-table-5", () => {
  test("on the built-in homes: every family explores and answers, Table V is written in Markdown, CSV, LaTeX and JSON beside the published rows, not comparable (built-in homes, not HM3D); --dry-run names calls and dollars first; a second run makes no call", async () => {
    const dir = temporaryDir("eqakit-reproduce-aeqa-");
    const episodes = writeEpisodes(dir);
    const out = join(dir, "table5");
    const env = cliEnv(dir, { OPENAI_API_KEY: "sk-test" });
    await withModelServer((request) => openAiReply(reply(request)), async (server) => {
      const dry = await runCli(args("openeqa-table-5", episodes, server.url, out, ["--captioner", "openai/gpt-4o-mini", "--captioner-base-url", `${server.url}/v1`, "--dry-run"]), env);
      assert.equal(dry.code, 0, dry.stderr);
      assert.equal(server.requests.length, 0);
      assert.equal(existsSync(out), false, "a dry run writes nothing");
      assert.match(dry.stdout, /openeqa-table-5: 5 A-EQA row\(s\) on 2 episode\(s\) \(the built-in homes\)/);
      assert.match(dry.stdout, /agent +openai\/gpt-4o +\d+ +0 +\d+ +\d+ +\$\d/, "the answering agent's calls are priced");
      assert.match(dry.stdout, /judge +openai\/gpt-4o +10 +0 +\d+ +\d+ +\$\d/, "one LLM-Match request per episode and row");
      assert.match(dry.stdout, /stand-in recording of 7 blank 64×48 frames/);
      assert.match(dry.stdout, /captioner +openai\/gpt-4o-mini +14 +0 +\d+ +\d+ +\$\d/, "the socratic row captions the 7 frames of each episode's stand-in recording");
      assert.match(dry.stdout, /row a-eqa-vlm: 2 episode\(s\), 0 already explored, 2 to explore and judge/);

      const captioner = ["--captioner", "openai/gpt-4o-mini", "--captioner-base-url", `${server.url}/v1`];
      const first = await runCli(args("openeqa-table-5", episodes, server.url, out, captioner), env);
      assert.equal(first.code, 0, first.stderr);
      const calls = server.requests.length;
      assert.ok(calls > 0);
      // the multi-frame VLM answers from up to K = 75 frames of what it recorded (here 7 at most: 6 steps)
      const vlmCall = server.requests.find((r) => bodyText(r).includes("User Query") && bodyText(r).includes("image_url"));
      assert.ok(vlmCall, "the vlm row sends the recorded frames");
      assert.ok(!server.requests.some((r) => bodyText(r).includes("Give two marks.")), "no EAC call: LLM-Match alone");
      assert.match(first.stdout, /\| 1 GPT-4 \| \*\*25\.3\*\* \| \*\*28\.4\*\* \|/);

      assert.ok(server.requests.some((r) => bodyText(r).includes('"model":"gpt-4o-mini"') && bodyText(r).includes("image_url")), "the socratic row's frames are described by --captioner");
      const again = await runCli(args("openeqa-table-5", episodes, server.url, out, captioner), env);
      assert.equal(again.code, 0, again.stderr);
      assert.equal(server.requests.length, calls, "finished explorations, answers and judgements are not asked again");
    });

    // the report shows the table with this run's rows
    const report = join(dir, "report.html");
    const reported = await runCli(["report", out, "--out", report], env);
    assert.equal(reported.code, 0, reported.stderr);
    const page = readFileSync(report, "utf8");
    assert.match(page, /Category-level Performance on A-EQA/);
    assert.match(page, /w\/ Sparse Voxel Map/);

    const table = readJson<TableJson>(join(out, "table.json"));
    assert.equal(table.table, "openeqa-table-5");
    assert.deepEqual(table.rows.map((r) => [r.id, r.runDir]), ["blind", "socratic", "conceptgraph", "svm", "vlm"].map((f) => [f, join("rows", `a-eqa-${f}`)]));
    for (const row of table.rows) {
      // every answer judged 4: (4 − 1)/4 · 100 = 75, per category over one episode each and overall over two
      assert.deepEqual([row.cells["object-recognition"]?.value, row.cells["attribute-recognition"]?.value, row.cells["llm-match"]?.value, row.cells["llm-match"]?.n], [75, 75, 75, 2], row.id);
      assert.equal(row.cells["spatial-understanding"], undefined, "a category without episodes has no number");
      assert.equal(row.comparable, false);
      assert.deepEqual(row.differences.slice(0, 2), ["built-in homes, not HM3D", `2 episode(s) of ${episodes}, not OpenEQA's A-EQA questions (the 184 of its subset, or all 557)`]);
      assert.ok(row.differences.includes("judge openai/gpt-4o, the paper's was GPT-4"));
    }
    const explore = readJson<{ config: { answerer: { agent: string; sampling?: { count: number } } } }>(join(out, "rows", "a-eqa-vlm", "summary.json"));
    assert.equal(explore.config.answerer.sampling?.count, 75, "the multi-frame VLM samples K = 75 frames in A-EQA");
    const blind = readJson<{ metrics: { pathLength: { meanSteps: number } } }>(join(out, "rows", "a-eqa-blind", "summary.json"));
    assert.ok(blind.metrics.pathLength.meanSteps <= 1, "the blind row does not explore");

    const markdown = readFileSync(join(out, "table.md"), "utf8");
    assert.match(markdown, /\| 9 GPT-4V\* \| 34\.0 \| 34\.3 \| 51\.5 \| 39\.5 \| 51\.9 \| 45\.6 \| 36\.6 \| 41\.8±3\.2 \|  \|/);
    // equal values: each the best of this run's rows in its column, so bold
    assert.match(markdown, /\| openai\/gpt-4o \| \*\*75\.0±0\.0\*\* \| – \| \*\*75\.0±0\.0\*\* \| – \| – \| – \| – \| \*\*75\.0±0\.0\*\* \| no \|/);
    assert.match(markdown, /This run's rows: not comparable with the published rows: built-in homes, not HM3D; 2 episode\(s\) of /);
    assert.match(markdown, /frontier exploration from each episode's start/);
    const csv = readFileSync(join(out, "table.csv"), "utf8").trim().split("\n");
    assert.equal(csv.length, 1 + 14 + 5);
    assert.match(csv.at(-1)!, /^this run,This run: Multi-Frame VLMs,openai\/gpt-4o,false,75,0,,,75,0,/);
    const latex = readFileSync(join(out, "table.tex"), "utf8");
    assert.match(latex, /openai\/gpt-4o\$\^\\dagger\$ & /);
    assert.match(latex, /\\toprule/);
    const summary = readJson<{ kind: string; runs: Record<string, { answered: number; failed: number; scored: number }> }>(join(out, "summary.json"));
    assert.equal(summary.kind, "reproduce");
    assert.deepEqual(Object.keys(summary.runs), ["a-eqa-blind", "a-eqa-socratic", "a-eqa-conceptgraph", "a-eqa-svm", "a-eqa-vlm"]);
    assert.deepEqual({ ...summary.runs["a-eqa-vlm"] }, { ...summary.runs["a-eqa-vlm"], answered: 2, failed: 0, scored: 2 });
  });

  /** Rows blind, socratic and vlm run to their end once, against a server of their own: the requests it received are the uninterrupted run's. */
  let uninterrupted: Promise<{ out: string; total: number }> | undefined;
  const uninterruptedRows = ["--rows", "blind,socratic,vlm"];
  function uninterruptedRun(): Promise<{ out: string; total: number }> {
    uninterrupted ??= (async () => {
      const dir = temporaryDir("eqakit-reproduce-aeqa-");
      const whole = await startModelServer((request) => openAiReply(reply(request)));
      const out = join(dir, "whole");
      try {
        const done = await runCli(args("openeqa-table-5", writeEpisodes(dir), whole.url, out, uninterruptedRows), cliEnv(dir, { OPENAI_API_KEY: "sk-test" }));
        assert.equal(done.code, 0, done.stderr);
      } finally {
        await whole.close();
      }
      return { out, total: whole.requests.length };
    })();
    return uninterrupted;
  }

  test("killed with SIGKILL midway and run again, it repeats no finished call and ends with the table of an uninterrupted run", async () => {
    const dir = temporaryDir("eqakit-reproduce-aeqa-");
    const episodes = writeEpisodes(dir);
    const rows = uninterruptedRows;
    const { out: wholeOut, total } = await uninterruptedRun();
    const server = await startModelServer(async (request) => {
      await new Promise((r) => setTimeout(r, 5));
      return openAiReply(reply(request));
    });
    try {
      const out = join(dir, "resumed");
      const env = cliEnv(dir, { OPENAI_API_KEY: "sk-test" });
      await killMidway(args("openeqa-table-5", episodes, server.url, out, rows), env, () => server.requests.length >= total / 2);
      const resumed = await runCli(args("openeqa-table-5", episodes, server.url, out, rows), env);
      assert.equal(resumed.code, 0, resumed.stderr);
      // an episode is recorded once answered, its judgement once judged: at most the episode in flight is asked again
      const perEpisode = Math.ceil(total / 6);
      assert.ok(server.requests.length <= total + perEpisode, `${server.requests.length} requests, an uninterrupted run makes ${total}`);
      const table = (d: string): unknown => readJson<TableJson>(join(d, "table.json")).rows.map((r) => [r.id, r.cells]);
      assert.deepEqual(table(out), table(wholeOut));
    } finally {
      await server.close();
    }
  });

  test("--batch: each row explores and answers live, then its LLM-Match requests go as one batch; the table is a live run's and each batch reply is billed once", async () => {
    const dir = temporaryDir("eqakit-reproduce-aeqa-");
    const episodes = writeEpisodes(dir);
    const env = cliEnv(dir, { OPENAI_API_KEY: "sk-test" });
    const rows = ["--rows", "blind,vlm"];
    // the live rows: those of the uninterrupted run (each row is a run of its own, the same beside other rows)
    const { out: liveOut } = await uninterruptedRun();
    const { emulator, server, liveJudgeCalls } = await startOpenAiBatchServer(reply, (request) => bodyText(request).includes("Your mark"));
    try {
      const out = join(dir, "batched");
      const result = await runCli(args("openeqa-table-5", episodes, server.url, out, [...rows, "--batch", "--batch-poll-seconds", "0.05"]), env);
      assert.equal(result.code, 0, result.stderr);
      assert.equal(liveJudgeCalls(), 0);
      // one batch per row, each with the row's two episodes' LLM-Match requests
      assert.deepEqual([...emulator.batches.values()].map((b) => b.customIds.length), [2, 2]);
      const table = (d: string): unknown => readJson<TableJson>(join(d, "table.json")).rows.filter((r) => r.id !== "socratic").map((r) => [r.id, r.cells, r.failed]);
      assert.deepEqual(table(out), table(liveOut));
      for (const row of ["a-eqa-blind", "a-eqa-vlm"]) {
        const cost = ledgerCost(readCallLedger(join(out, "rows", row)));
        assert.deepEqual(cost.roles.filter((r) => r.role.startsWith("judge")).map((r) => [r.role, r.calls, r.cacheHits]), [["judge (batch)", 2, 0], ["judge", 0, 2]], row);
      }
      const requests = server.requests.length;
      const again = await runCli(args("openeqa-table-5", episodes, server.url, out, [...rows, "--batch", "--batch-poll-seconds", "0.05"]), env);
      assert.equal(again.code, 0, again.stderr);
      assert.equal(server.requests.length, requests, "a finished table calls no model and submits no batch");
    } finally {
      await server.close();
    }
  });

  test("--env habitat without --scenes and episodes without answers are refused before any call (exit 2)", async () => {
    const dir = temporaryDir("eqakit-reproduce-aeqa-");
    const episodes = writeEpisodes(dir);
    const unanswered = join(dir, "unanswered.json");
    writeFileSync(unanswered, JSON.stringify([{ question_id: "q0", question: "Is there a sofa?", scene: "home-0" }]));
    await withModelServer((request) => openAiReply(reply(request)), async (server) => {
      const env = cliEnv(dir, { OPENAI_API_KEY: "sk-test" });
      const habitat = await runCli(args("openeqa-table-5", episodes, server.url, join(dir, "run")).map((a) => (a === "builtin" ? "habitat" : a)), env);
      assert.equal(habitat.code, 2, habitat.stderr);
      assert.match(habitat.stderr, /--scenes/);
      const none = await runCli(args("openeqa-table-5", unanswered, server.url, join(dir, "run")), env);
      assert.equal(none.code, 2, none.stderr);
      assert.match(none.stderr, /answer/);
      assert.equal(server.requests.length, 0);
      assert.equal(existsSync(join(dir, "run")), false);
    });
  });

  test("--env habitat passes --scenes and --bridge-python to each row's explore run: with a bridge Python serving the built-in simulator, the rows run in 'HM3D' and say only what else differs", async () => {
    const dir = temporaryDir("eqakit-reproduce-aeqa-");
    const episodes = writeEpisodes(dir, (seed) => `val/0000${seed}-home${seed}`);
    const { scenes, python, calls: seen } = writeHabitatStandIn(dir, [0, 1]);
    const out = join(dir, "table5");
    await withModelServer((request) => openAiReply(reply(request)), async (server) => {
      const habitat = args("openeqa-table-5", episodes, server.url, out, ["--rows", "vlm", "--scenes", scenes, "--bridge-python", python]).map((a) => (a === "builtin" ? "habitat" : a));
      const result = await runCli(habitat, cliEnv(dir, { OPENAI_API_KEY: "sk-test" }));
      assert.equal(result.code, 0, result.stderr);
    });
    const bridged = jsonLines(seen) as string[][];
    assert.equal(bridged.length, 2, "one bridge process per scene");
    for (const a of bridged) assert.equal(a[a.indexOf("--scene-root") + 1], scenes);
    const row = readJson<TableJson>(join(out, "table.json")).rows[0]!;
    assert.deepEqual([row.cells["llm-match"]?.value, row.cells["llm-match"]?.n], [75, 2]);
    assert.equal(row.differences.includes("built-in homes, not HM3D"), false);
    assert.match(row.differences[0]!, /^2 episode\(s\) of .*, not OpenEQA's A-EQA questions/);
  });

  test("without --episodes it is refused before any call (exit 2), naming how to make the episodes", async () => {
    const dir = temporaryDir("eqakit-reproduce-aeqa-");
    await withModelServer((request) => openAiReply(reply(request)), async (server) => {
      const result = await runCli(["reproduce", "openeqa-table-5", "--model", "openai/gpt-4o", "--model-base-url", `${server.url}/v1`, "--judge", "openai/gpt-4o", "--judge-base-url", `${server.url}/v1`, "--out", join(dir, "run")], cliEnv(dir, { OPENAI_API_KEY: "sk-test" }));
      assert.equal(result.code, 2);
      assert.match(result.stderr, /--episodes/);
      assert.match(result.stderr, /eqa data convert a-eqa/);
      assert.equal(server.requests.length, 0);
      assert.equal(existsSync(join(dir, "run")), false);
    });
  });
});

describe("eqa reproduce openeqa-table-2 --episodes", () => {
  /** Table II's blind and vlm rows run live once: the first test checks them, the --batch test compares its table with theirs. */
  let live: Promise<string> | undefined;
  function liveTable2(): Promise<string> {
    live ??= (async () => {
      const dir = temporaryDir("eqakit-reproduce-aeqa-");
      const episodes = writeEpisodes(dir);
      const emEqa = await writeEmEqaQuestions(dir);
      const out = join(dir, "table2");
      await withModelServer((request) => openAiReply(reply(request)), async (server) => {
        const result = await runCli(args("openeqa-table-2", episodes, server.url, out, ["--rows", "blind,vlm", ...emEqa]), cliEnv(dir, { OPENAI_API_KEY: "sk-test" }));
        assert.equal(result.code, 0, result.stderr);
      });
      return out;
    })();
    return live;
  }

  test("fills the A-EQA columns: C for every row, E (Eq. 2, in steps) for all but the blind row, beside the EM-EQA columns", async () => {
    const out = await liveTable2();
    const table = readJson<TableJson>(join(out, "table.json"));
    const [blind, vlm] = table.rows;
    assert.equal(blind!.cells["a-eqa-c"]?.value, 75);
    assert.equal(blind!.cells["a-eqa-e"], undefined, "the paper prints no E for blind LLMs");
    assert.deepEqual([blind!.cells["em-hm3d"]?.value, vlm!.cells["em-all"]?.value], [75, 75], "the EM-EQA columns are run too");
    assert.equal(vlm!.cells["a-eqa-c"]?.value, 75);
    const summary = readJson<{ counts: unknown }>(join(out, "rows", "a-eqa-vlm", "summary.json"));
    assert.ok(summary.counts);
    // E = mean of 75 · l / max(p, l), with p the steps each exploration took
    const predictions = readJson<{ question_id: string; path_length_steps: number }[]>(join(out, "rows", "a-eqa-vlm", "predictions.json"));
    const gt: Record<string, number> = { q0: 4, q1: 2 };
    const expected = predictions.reduce((a, p) => a + (75 * gt[p.question_id]!) / Math.max(p.path_length_steps, gt[p.question_id]!), 0) / predictions.length;
    assert.ok(Math.abs(vlm!.cells["a-eqa-e"]!.value - expected) < 1e-9, `${vlm!.cells["a-eqa-e"]!.value} vs ${expected}`);
    assert.ok(vlm!.differences.includes("A-EQA: built-in homes, not HM3D"));
    const markdown = readFileSync(join(out, "table.md"), "utf8");
    assert.match(markdown, /path lengths in steps, atomic actions as the paper counts them/);
    assert.doesNotMatch(markdown, /no A-EQA numbers/);
  });

  test("--batch: the A-EQA rows' LLM-Match requests go as a batch per row and the EM-EQA rows' as one more; the table is a live run's", async () => {
    const dir = temporaryDir("eqakit-reproduce-aeqa-");
    const episodes = writeEpisodes(dir);
    const emEqa = await writeEmEqaQuestions(dir);
    const env = cliEnv(dir, { OPENAI_API_KEY: "sk-test" });
    const rows = ["--rows", "blind,vlm", ...emEqa];
    const liveOut = await liveTable2();
    const { emulator, server, liveJudgeCalls } = await startOpenAiBatchServer(reply, (request) => bodyText(request).includes("Your mark"));
    try {
      const out = join(dir, "batched");
      const result = await runCli(args("openeqa-table-2", episodes, server.url, out, [...rows, "--batch", "--batch-poll-seconds", "0.05"]), env);
      assert.equal(result.code, 0, result.stderr);
      assert.equal(liveJudgeCalls(), 0);
      // a batch for each A-EQA row's two episodes, then one for the EM-EQA rows' four answers
      assert.deepEqual([...emulator.batches.values()].map((b) => b.customIds.length), [2, 2, 4]);
      const table = (d: string): unknown => readJson<TableJson>(join(d, "table.json")).rows.map((r) => [r.id, r.cells, r.failed]);
      assert.deepEqual(table(out), table(liveOut));
    } finally {
      await server.close();
    }
  });
});

describe("eqa reproduce openeqa-table-3 --episodes", () => {
  test("fills A-EQA with force-a-guess and A-EQA (w/o guess) from each agent's own answers where the blind guess replaced them, none for the blind row", async () => {
    const dir = temporaryDir("eqakit-reproduce-aeqa-");
    const episodes = writeEpisodes(dir);
    const emEqa = await writeEmEqaQuestions(dir);
    const out = join(dir, "table3");
    // the VLM abstains, force-a-guess replaces it with the blind answer; the judge marks an abstention 1 and an answer 4
    const abstaining = (request: ReceivedRequest): string => {
      const text = bodyText(request);
      if (text.includes("Your mark")) return text.includes("I cannot tell") ? "Your mark: 1" : "Your mark: 4";
      if (text.includes("Proposed Answer:")) return text.includes("I cannot tell") ? "Action: guess" : "Action: keep";
      if (text.includes("image_url")) return "A: I cannot tell";
      return "A: yes";
    };
    await withModelServer((request) => openAiReply(abstaining(request)), async (server) => {
      const dry = await runCli(args("openeqa-table-3", episodes, server.url, join(dir, "dry"), ["--rows", "blind,vlm", ...emEqa, "--dry-run"]), cliEnv(dir, { OPENAI_API_KEY: "sk-test" }));
      assert.equal(dry.code, 0, dry.stderr);
      assert.match(dry.stdout, /row a-eqa-vlm: 2 episode\(s\), 0 already explored, 2 to explore and judge with and without force-a-guess/);
      assert.equal(server.requests.length, 0);
      const result = await runCli(args("openeqa-table-3", episodes, server.url, out, ["--rows", "blind,vlm", ...emEqa]), cliEnv(dir, { OPENAI_API_KEY: "sk-test" }));
      assert.equal(result.code, 0, result.stderr);
    });
    const table = readJson<TableJson>(join(out, "table.json"));
    const [blind, vlm] = table.rows;
    assert.deepEqual([blind!.cells["a-eqa"]?.value, blind!.cells["a-eqa-without-guess"]], [75, undefined]);
    assert.deepEqual([vlm!.cells["a-eqa"]?.value, vlm!.cells["a-eqa-without-guess"]?.value, vlm!.cells["a-eqa-without-guess"]?.change], [75, 0, -75]);
    assert.equal(vlm!.cells["a-eqa"]?.ci, undefined, "Table III prints no ±");
    const markdown = readFileSync(join(out, "table.md"), "utf8");
    assert.match(markdown, /\| openai\/gpt-4o \| [^|]+ \| [^|]+ \| \*?\*?75\.0\*?\*? \| \*?\*?0\.0 \(-75\.0\)\*?\*? \| no \|/);
    assert.match(markdown, /rows\/a-eqa-<row>-without-guess/);
    assert.ok(existsSync(join(out, "rows", "a-eqa-vlm-without-guess", "judgements.jsonl")));
  });
});

describe("aEqaDifferences", () => {
  test("OpenEQA's A-EQA questions (the 184 of its subset, or all 557 HM3D ones) in HM3D with a GPT-4 judge and compat scoring are comparable; other episodes, homes, judges or modes say what differs", () => {
    const subset = new Set(JSON.parse(readFileSync(openEqaSubsetFile, "utf8")) as string[]);
    const episodes: ActiveEpisode[] = readRawBenchmark()
      .filter((q) => subset.has(q.question_id))
      .map((q) => ({ questionId: q.question_id, question: q.question, answer: q.answer, category: q.category, scene: "val/00853-5cdEh9F2hJL", start: { position: [0, 0, 0], yaw: 0, pitch: 0 } }));
    assert.equal(episodes.length, 184);
    assert.equal(aEqaQuestionSet(episodes), "subset");
    const base = { episodesFile: "a-eqa.json", episodes, env: "habitat" as const, model: resolveModel("openai/gpt-4o", { baseURL: "http://127.0.0.1:9/v1" }), judgeSpec: resolveModel("openai/gpt-4-0613", { baseURL: "http://127.0.0.1:9/v1" }), mode: "compat" as const };
    assert.deepEqual(aEqaDifferences(base), []);
    assert.deepEqual(aEqaDifferences({ ...base, episodes: [...episodes].reverse() }), [], "the order of the episodes does not matter");
    const full: ActiveEpisode[] = readRawBenchmark()
      .filter((q) => q.episode_history.startsWith("hm3d-v0/"))
      .map((q) => ({ questionId: q.question_id, question: q.question, answer: q.answer, category: q.category, scene: "val/00853-5cdEh9F2hJL" }));
    assert.equal(aEqaQuestionSet(full), "full");
    assert.deepEqual(aEqaDifferences({ ...base, episodes: full }), []);
    assert.deepEqual(aEqaDifferences({ ...base, episodes: episodes.slice(1) }), ["183 episode(s) of a-eqa.json, not OpenEQA's A-EQA questions (the 184 of its subset, or all 557)"]);
    assert.deepEqual(aEqaDifferences({ ...base, env: "builtin", judgeSpec: resolveModel("openai/gpt-4o", { baseURL: "http://127.0.0.1:9/v1" }), mode: "robust" }), [
      "built-in homes, not HM3D",
      "judge openai/gpt-4o, the paper's was GPT-4",
      "LLM-Match robust mode, the paper's scoring is the reference's (compat)",
    ]);
  });
});
