import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { appendFileSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { UserError } from "../../src/core/index.js";
import { CALLS_FILE, ModelCallError, ModelRuntime, inRole, ledgerCost, mergeCallLedgers, readCallLedger, resolveModel, withCallContext } from "../../src/models/index.js";
import { ModelCallCache } from "../../src/store/index.js";
import { openAiReply, startModelServer, type ScriptedReply } from "../helpers/model-server.js";
import { temporaryDir } from "../helpers/paths.js";

const ENV = { OPENAI_API_KEY: "sk-test" };
const ask = (text: string): { messages: { role: "user"; content: string }[] } => ({ messages: [{ role: "user", content: text }] });

/** A reply cut by its token limit. */
function truncated(): ScriptedReply {
  const reply = openAiReply("half an ans");
  (reply.body as { choices: { finish_reason: string }[] }).choices[0]!.finish_reason = "length";
  return reply;
}

describe("the ledger of model calls", () => {
  test("every call the runtime makes is appended as it completes: role, item, endpoint, tokens, images, cached, status and reason", async () => {
    const dir = temporaryDir();
    const server = await startModelServer((request) => {
      const text = JSON.stringify(request.body);
      if (text.includes("fail")) return { status: 500, body: { error: { message: "overloaded" } } };
      if (text.includes("cut")) return truncated();
      return openAiReply("fine", { prompt_tokens: 20, completion_tokens: 4 });
    });
    const cache = await ModelCallCache.open(join(dir, "cache.sqlite"));
    try {
      const runtime = new ModelRuntime({ maxRetries: 0, retryBaseMs: 1, cache });
      runtime.usage.attach(join(dir, "run"));
      const spec = resolveModel("openai/gpt-4o", { baseURL: `${server.url}/v1`, env: ENV });
      const judge = runtime.model(spec, { role: "judge" });
      await withCallContext({ item: "q1" }, () => judge.complete({ messages: [{ role: "user", content: [{ type: "text", text: "look" }, { type: "image", data: new Uint8Array([1, 2, 3]), mediaType: "image/png" }] }] }));
      // the same request again: a cache hit, recorded as such
      await withCallContext({ item: "q1" }, () => judge.complete({ messages: [{ role: "user", content: [{ type: "text", text: "look" }, { type: "image", data: new Uint8Array([1, 2, 3]), mediaType: "image/png" }] }] }));
      await assert.rejects(inRole(judge, "stop-check").complete(ask("cut")), (e: unknown) => e instanceof ModelCallError && e.kind === "truncated");
      await assert.rejects(withCallContext({ item: "q2" }, () => judge.complete(ask("fail"))), ModelCallError);

      const ledger = readCallLedger(join(dir, "run"));
      assert.equal(server.requests.length, 3, "the cache hit sent nothing");
      assert.deepEqual(
        ledger.map((e) => [e.role, e.item ?? null, e.cached, e.status, e.promptTokens, e.images, e.mode]),
        [
          ["judge", "q1", false, "ok", 20, 1, "live"],
          ["judge", "q1", true, "ok", 20, 1, "live"],
          ["stop-check", null, false, "truncated", 10, 0, "live"],
          ["judge", "q2", false, "failed", 0, 0, "live"],
        ],
      );
      assert.ok(ledger.every((e) => e.format === 1 && e.model === "openai/gpt-4o" && e.endpoint === `${server.url}/v1`));
      assert.match(ledger[3]!.reason ?? "", /overloaded|500/);
      assert.ok(ledger[2]!.reason);

      // its cost: the hit is a hit, not a call; the cut reply was billed; the failure is counted apart, not billed
      const cost = ledgerCost(ledger, {});
      assert.deepEqual(cost.roles.map((r) => [r.role, r.calls, r.cacheHits, r.failed, r.promptTokens, r.images]), [
        ["judge", 1, 1, 1, 20, 1],
        ["stop-check", 1, 0, 0, 10, 0],
      ]);
      assert.equal(cost.total.calls + (cost.total.failed ?? 0), server.requests.length);
    } finally {
      cache.close();
      await server.close();
    }
  });

  test("a run resumed by another process appends to its ledger; a line cut by a kill is dropped first", async () => {
    const dir = temporaryDir();
    const server = await startModelServer(() => openAiReply("fine"));
    try {
      const spec = resolveModel("openai/gpt-4o", { baseURL: `${server.url}/v1`, env: ENV });
      const first = new ModelRuntime();
      first.usage.attach(dir);
      await first.model(spec, { role: "agent" }).complete(ask("one"));
      // a process killed while writing its second line
      appendFileSync(join(dir, CALLS_FILE), '{"format":1,"at":"2026-');
      const second = new ModelRuntime();
      second.usage.attach(dir);
      await second.model(spec, { role: "agent" }).complete(ask("two"));
      const ledger = readCallLedger(dir);
      assert.equal(ledger.length, 2);
      assert.equal(ledger.length, server.requests.length);
    } finally {
      await server.close();
    }
  });

  test("a line that is not a call is an error naming the file and the line", () => {
    const dir = temporaryDir();
    writeFileSync(join(dir, CALLS_FILE), `${JSON.stringify({ format: 1, at: "x", model: "openai/gpt-4o", role: "judge", endpoint: "e", mode: "live", cached: false, status: "ok", promptTokens: 1, completionTokens: 1, thinkingTokens: 0, images: 0, retries: 0, latencyMs: 1 })}\n{"format":1}\n`);
    assert.throws(
      () => readCallLedger(dir),
      (e: unknown) => e instanceof UserError && e.location.file === join(dir, CALLS_FILE) && e.location.line === 2 && /not a model call of ledger format 1/.test(e.message),
    );
    writeFileSync(join(dir, CALLS_FILE), "not json\n");
    assert.throws(() => readCallLedger(dir), (e: unknown) => e instanceof UserError && e.location.line === 1);
  });

  test("eqa merge's ledger holds every shard's calls once", async () => {
    const home = temporaryDir();
    const line = (role: string): string => `${JSON.stringify({ format: 1, at: "x", model: "openai/gpt-4o", role, endpoint: "e", mode: "live", cached: false, status: "ok", promptTokens: 5, completionTokens: 1, thinkingTokens: 0, images: 0, retries: 0, latencyMs: 1 })}\n`;
    const shards = [join(home, "a"), join(home, "b")];
    for (const [i, shard] of shards.entries()) {
      mkdirSync(shard);
      writeFileSync(join(shard, CALLS_FILE), line("agent") + (i === 1 ? line("judge") : ""));
    }
    const merged = join(home, "merged");
    mkdirSync(merged);
    const calls = await mergeCallLedgers(shards, merged);
    assert.equal(calls.length, 3);
    assert.equal(readFileSync(join(merged, CALLS_FILE), "utf8").trim().split("\n").length, 3);
    assert.deepEqual(ledgerCost(readCallLedger(merged), {}).roles.map((r) => [r.role, r.calls]), [["agent", 2], ["judge", 1]]);
  });
});
