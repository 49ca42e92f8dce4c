import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { generateHome } from "../../src/sim/index.js";
import { cliEnv, runCli } from "../helpers/cli.js";
import { openAiReply, startModelServer, withModelServer, type ReceivedRequest } from "../helpers/model-server.js";
import { temporaryDir } from "../helpers/paths.js";
import { openAiBatchEmulator } from "../helpers/provider-emulators.js";
import { ledgerCost, readCallLedger } from "../../src/models/index.js";

/**
 * `eqa reproduce express-table-3` against a loopback VLM and judge on two episodes in the
 * built-in homes: Fine-EQA's reference mode explores a few steps, the EAC judge gives marks, and
 * the table holds the paper's three rows and this run's row, marked not comparable.
 */

const readJson = <T>(path: string): T => JSON.parse(readFileSync(path, "utf8")) as T;

/** A VLM never sure enough to stop, and a judge giving every answer the marks 1 and 4. */
function reply(request: ReceivedRequest) {
  const text = JSON.stringify(request.body);
  if (text.includes("Give two marks.")) return openAiReply("1, 4");
  if (text.includes("Your mark:")) return openAiReply("Your mark: 4");
  if (text.includes("Read the question and name the rooms")) return openAiReply("kitchen,living room");
  if (text.includes("You are given a QUESTION about a home and the IMAGE")) return openAiReply("No.");
  if (text.includes("Which labelled place would you walk to next")) return openAiReply("B");
  if (text.includes("worth exploring")) return openAiReply("Yes");
  if (text.includes("Which kind of room does this picture show?")) return openAiReply("E");
  if (text.includes("Which labelled place is in the")) return openAiReply("A");
  return openAiReply("A: Yes, on the counter.");
}

function writeEpisodes(dir: string): string {
  const episodes = [0, 1].map((seed) => {
    const home = generateHome(seed);
    return { question_id: `e${seed}`, question: "Is there a kettle in the kitchen?", answer: "Yes", scene: `home-${seed}`, goal_position: [home.start.position[0], 0, home.start.position[2]], gt_path_length: 2 };
  });
  const path = join(dir, "episodes.json");
  writeFileSync(path, JSON.stringify(episodes));
  return path;
}

describe("eqa reproduce express-table-3", () => {
  test("on the built-in homes: the paper's rows and this run's Fine-EQA reference row, not comparable (built-in homes, not HM3D), in Markdown, CSV and LaTeX; a second run resumes without a call", async () => {
    const dir = temporaryDir("eqakit-reproduce-express-");
    const episodes = writeEpisodes(dir);
    const out = join(dir, "table3");
    const env = cliEnv(dir, { OPENAI_API_KEY: "sk-test" });
    await withModelServer(reply, async (server) => {
      const args = ["reproduce", "express-table-3", "--episodes", episodes, "--env", "builtin", "--model", "openai/gpt-4o-mini", "--model-base-url", `${server.url}/v1`, "--judge", "openai/gpt-4o", "--judge-base-url", `${server.url}/v1`, "--max-steps", "3", "--width", "64", "--height", "48", "--image-size", "64", "--concurrency", "1", "--no-cache", "--out", out];

      const dry = await runCli([...args.slice(0, -2), "--out", join(dir, "dry"), "--dry-run"], env);
      assert.equal(dry.code, 0, dry.stderr);
      assert.match(dry.stdout, /express-table-3: 1 row \(Fine-EQA reference mode on the built-in homes\)/);
      assert.equal(server.requests.length, 0);
      assert.equal(existsSync(join(dir, "dry")), false);

      const first = await runCli(args, env);
      assert.equal(first.code, 0, first.stderr);
      const calls = server.requests.length;
      assert.ok(calls > 0);
      assert.match(first.stdout, /Janus-Pro-7B \| 39\.88 \| 63\.35 \| 20\.86 \| 6\.18 \|/);
      // the table's cost, printed after it and written in the summary: every request the server received, once
      const cost = readJson<{ cost: { total: { calls: number; failed: number; dollars: number | null } } }>(join(out, "summary.json")).cost;
      assert.deepEqual([cost.total.calls, cost.total.failed], [calls, 0]);
      assert.ok(cost.total.dollars !== null && cost.total.dollars > 0);
      const printedTotal = first.stdout.slice(first.stdout.indexOf("**Table 3")).split("\n").find((l) => /^\s+total\s+\d/.test(l))?.trim().split(/\s{2,}/);
      assert.deepEqual(printedTotal?.slice(1, 3), [String(calls), "0"], first.stdout);

      const again = await runCli(args, env);
      assert.equal(again.code, 0, again.stderr);
      assert.equal(server.requests.length, calls, "the finished episodes and judgements are not asked again");
    });

    type Express = { c: number; cStar: number; ePath: number; dT: number; nScored: number };
    const express = readJson<{ judged: { express: Express } }>(join(out, "rows", "fine-eqa-reference", "summary.json")).judged.express;
    assert.equal(express.nScored, 2);
    const summary = readJson<{ kind: string; runs: Record<string, { answered: number; failed: number; scored: number }> }>(join(out, "summary.json"));
    assert.equal(summary.kind, "reproduce");
    assert.deepEqual({ ...summary.runs["fine-eqa-reference"], dollars: undefined }, { answered: 2, failed: 0, scored: 2, dollars: undefined });
    const table = readJson<{ rows: { id: string; comparable: boolean; differences: string[]; cells: Record<string, { value: number; ci?: number; interval?: [number, number] }> }[] }>(join(out, "table.json"));
    assert.equal(table.rows.length, 1);
    const row = table.rows[0]!;
    assert.equal(row.comparable, false);
    assert.ok(row.differences.includes("built-in homes, not HM3D"));
    assert.ok(row.differences.some((d) => d.startsWith("judge openai/gpt-4o,")), "the paper's judge was GPT-4o-mini");
    assert.deepEqual([row.cells.c?.value, row.cells["c-star"]?.value, row.cells["e-path"]?.value, row.cells["d-t"]?.value], [express.c, express.cStar, express.ePath, express.dT]);

    const markdown = readFileSync(join(out, "table.md"), "utf8");
    assert.match(markdown, /\| GPT-4o-mini \| 40\.55 \| 63\.95 \| 16\.22 \| 6\.43 \|  \|/);
    const mine = markdown.split("\n").find((l) => l.startsWith("| openai/gpt-4o-mini |"));
    assert.ok(mine, markdown);
    // each value with its ± (the bootstrap standard error over the episodes)
    assert.match(mine, new RegExp(`\\| ${express.c.toFixed(2)}±\\d+\\.\\d\\d \\| ${express.cStar.toFixed(2)}±\\d+\\.\\d\\d \\| ${express.ePath.toFixed(2)}±\\d+\\.\\d\\d \\| ${express.dT.toFixed(2)}±\\d+\\.\\d\\d \\| no \\|$`));
    assert.ok(["c", "c-star", "e-path", "d-t"].every((id) => typeof row.cells[id]?.ci === "number" && row.cells[id]?.interval !== undefined), JSON.stringify(row.cells));
    assert.match(markdown, /This run's rows: not comparable with the published rows: built-in homes, not HM3D; /);

    const csv = readFileSync(join(out, "table.csv"), "utf8").trim().split("\n");
    assert.equal(csv.length, 1 + 3 + 1);
    assert.match(csv[4]!, /^this run,This run: Fine-EQA \(reference mode\),openai\/gpt-4o-mini,false,/);
    assert.match(csv[1]!, /^published,,Janus-Pro-7B,,39\.88,,63\.35,,20\.86,,6\.18,$/);

    const latex = readFileSync(join(out, "table.tex"), "utf8");
    assert.match(latex, /openai\/gpt-4o-mini\$\^\\dagger\$ & /);
    assert.match(latex, /built-in homes, not HM3D/);
    assert.match(latex, /\\bottomrule/);
  });

  test("--batch: Fine-EQA explores live, then the judge's LLM-Match and EAC requests go as one batch; the row's figures are a live run's and each batch reply is billed once", async () => {
    const dir = temporaryDir("eqakit-reproduce-express-");
    const episodes = writeEpisodes(dir);
    const env = cliEnv(dir, { OPENAI_API_KEY: "sk-test" });
    const args = (url: string, out: string, extra: string[] = []): string[] => ["reproduce", "express-table-3", "--episodes", episodes, "--env", "builtin", "--model", "openai/gpt-4o-mini", "--model-base-url", `${url}/v1`, "--judge", "openai/gpt-4o", "--judge-base-url", `${url}/v1`, "--max-steps", "3", "--width", "64", "--height", "48", "--image-size", "64", "--concurrency", "1", "--no-cache", "--out", out, ...extra];
    const liveOut = join(dir, "live");
    await withModelServer(reply, async (server) => {
      const live = await runCli(args(server.url, liveOut), env);
      assert.equal(live.code, 0, live.stderr);
    });
    const isJudge = (text: string): boolean => text.includes("Give two marks.") || text.includes("Your mark:");
    const emulator = openAiBatchEmulator({ answer: (body) => (JSON.stringify(body).includes("Give two marks.") ? "1, 4" : "Your mark: 4") });
    let liveJudgeCalls = 0;
    const server = await startModelServer((request, index) => {
      if (request.path !== "/v1/chat/completions") return emulator.script(request, index);
      if (isJudge(JSON.stringify(request.body))) liveJudgeCalls++;
      return reply(request);
    });
    try {
      const out = join(dir, "batched");
      const result = await runCli(args(server.url, out, ["--batch", "--batch-poll-seconds", "0.05"]), env);
      assert.equal(result.code, 0, result.stderr);
      assert.equal(liveJudgeCalls, 0);
      // the two episodes' EAC requests (each with its own last frame) and their LLM-Match requests (the same question, answer and reply: one request)
      assert.deepEqual([...emulator.batches.values()].map((b) => b.customIds.length), [3]);
      const judged = (d: string): unknown => readJson<{ judged: { express: unknown; llmMatch: unknown } }>(join(d, "rows", "fine-eqa-reference", "summary.json")).judged;
      const row = (d: string): unknown => readJson<{ rows: { cells: unknown }[] }>(join(d, "table.json")).rows.map((r) => r.cells);
      assert.deepEqual(row(out), row(liveOut));
      const ledger = ledgerCost(readCallLedger(join(out, "rows", "fine-eqa-reference")));
      assert.deepEqual(ledger.roles.filter((r) => r.role.startsWith("judge")).map((r) => [r.role, r.calls, r.cacheHits]), [["judge (batch)", 3, 0], ["judge", 0, 4]]);
      const figures = (d: string): unknown => { const j = judged(d) as { express: unknown; llmMatch: unknown }; return [j.express, j.llmMatch]; };
      assert.deepEqual(figures(out), figures(liveOut));
      const requests = server.requests.length;
      const again = await runCli(args(server.url, out, ["--batch", "--batch-poll-seconds", "0.05"]), env);
      assert.equal(again.code, 0, again.stderr);
      assert.equal(server.requests.length, requests, "a finished row calls no model and submits no batch");
    } finally {
      await server.close();
    }
  });

  test("HM3D through the Habitat bridge without --scenes and a missing episodes file are refused with exit 2 before any call, naming what to get", async () => {
    const dir = temporaryDir("eqakit-reproduce-express-");
    const episodes = writeEpisodes(dir);
    await withModelServer(reply, async (server) => {
      const common = ["--model", "openai/gpt-4o-mini", "--model-base-url", `${server.url}/v1`, "--judge", "openai/gpt-4o-mini", "--judge-base-url", `${server.url}/v1`, "--out", join(dir, "run")];
      const habitat = await runCli(["reproduce", "express-table-3", "--episodes", episodes, "--env", "habitat", ...common], cliEnv(dir, { OPENAI_API_KEY: "sk-test" }));
      assert.equal(habitat.code, 2);
      assert.match(habitat.stderr, /--scenes DIR, your HM3D folder/);
      assert.match(habitat.stderr, /eqa env check --env habitat/);
      const none = await runCli(["reproduce", "express-table-3", ...common], cliEnv(dir, { OPENAI_API_KEY: "sk-test" }));
      assert.equal(none.code, 2);
      assert.match(none.stderr, /--episodes/);
      assert.equal(server.requests.length, 0);
      assert.equal(existsSync(join(dir, "run")), false);
    });
  });

  test("--batch is refused before any call where there is no judge to batch: express-table-2 and eqa explore without --judge (exit 2)", async () => {
    const dir = temporaryDir("eqakit-reproduce-express-");
    const episodes = writeEpisodes(dir);
    await withModelServer(reply, async (server) => {
      const env = cliEnv(dir, { OPENAI_API_KEY: "sk-test" });
      const model = ["--model", "openai/gpt-4o-mini", "--model-base-url", `${server.url}/v1`];
      const table2 = await runCli(["reproduce", "express-table-2", "--episodes", episodes, ...model, "--batch", "--out", join(dir, "t2")], env);
      assert.equal(table2.code, 2, table2.stderr);
      assert.match(table2.stderr, /express-table-2 has no judge calls to send as a batch/);
      const explore = await runCli(["explore", "--episodes", episodes, "--env", "builtin", "--agent", "fine-eqa:reference", ...model, "--batch", "--out", join(dir, "x")], env);
      assert.equal(explore.code, 2, explore.stderr);
      assert.match(explore.stderr, /--batch sends the judge's calls as one batch/);
      assert.equal(server.requests.length, 0);
      assert.equal(existsSync(join(dir, "t2")), false);
      assert.equal(existsSync(join(dir, "x")), false);
    });
  });
});
