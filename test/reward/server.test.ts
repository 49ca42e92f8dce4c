import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { request } from "node:http";
import { UserError } from "../../src/core/index.js";
import { startRewardServer, type RunningRewardServer } from "../../src/reward/index.js";

interface Reply {
  status: number;
  body: Record<string, unknown>;
}

function post(url: string, body: string | Buffer, headers: Record<string, string> = {}, path = "/get_reward", method = "POST"): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = request(`${url}${path}`, { method, headers: { "content-type": "application/json", ...headers } }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(Buffer.concat(chunks).toString("utf8") || "{}") as Record<string, unknown> }));
    });
    req.on("error", reject);
    req.end(body);
  });
}

const PROMPT = "<|im_start|>user\nEvaluate the response…<|im_end|>\n<|im_start|>assistant\n";
const output = (score: number): string => `<critique>The trace is grounded.</critique><score>${score}</score><|im_end|>`;

describe("the reward server (OpenRLHF's remote reward protocol)", () => {
  let server: RunningRewardServer;
  before(async () => {
    server = await startRewardServer({ port: 0, maxBodyBytes: 4096, maxBatch: 4 });
  });
  after(() => server.close());

  test("rewards a batch as Eqs. 3-5: original and augmented evaluations, prompts stripped, chat markers ignored", async () => {
    const reply = await post(
      server.url,
      JSON.stringify({
        query: [PROMPT + output(8), PROMPT + output(2)],
        prompts: [PROMPT, PROMPT],
        labels: ["8", JSON.stringify({ score: 8, variant: "temporal" })],
      }),
    );
    assert.equal(reply.status, 200);
    // original: R_a 1 + R_f 1 + (0.3 temporal boost)/3; temporal: R_a 0.64 + R_f 1
    assert.deepEqual(reply.body.rewards, [2.1, 1.6400000000000001]);
    assert.deepEqual(reply.body.scores, reply.body.rewards);
    assert.deepEqual((reply.body.extra_logs as Record<string, unknown>).parsed_score, [8, 2]);
  });

  test("a query without prompts, and a bare score label", async () => {
    const reply = await post(server.url, JSON.stringify({ query: ["<critique>ok</critique><score>5</score>"], labels: ["5"] }));
    assert.equal(reply.status, 200);
    assert.deepEqual(reply.body.rewards, [2]);
  });

  test("malformed requests get a 400 with the reason, and the server goes on", async () => {
    const cases: [string, RegExp][] = [
      ["{not json", /not valid JSON/],
      ["[1, 2]", /must be a JSON object/],
      [JSON.stringify({ prompts: [] }), /"query" must be a list of strings/],
      [JSON.stringify({ query: ["a", 3], labels: ["1", "2"] }), /"query"\[1\] must be a string/],
      [JSON.stringify({ query: ["a"] }), /"labels" is missing/],
      [JSON.stringify({ query: ["a", "b"], labels: ["1"] }), /"labels" has 1 items but "query" has 2/],
      [JSON.stringify({ query: ["a"], labels: ["eleven"] }), /ground-truth score from 0 to 10/],
      [JSON.stringify({ query: ["a"], labels: ["{\"score\": 4, \"variant\": \"upside-down\"}"] }), /unknown variant/],
      [JSON.stringify({ query: ["a"], labels: ["{broken"] }), /not valid JSON/],
      [JSON.stringify({ query: ["a"], prompts: "p", labels: ["1"] }), /"prompts" must be a list/],
    ];
    for (const [body, reason] of cases) {
      const reply = await post(server.url, body);
      assert.equal(reply.status, 400, body);
      assert.match(String(reply.body.error), reason);
    }
    assert.equal((await post(server.url, "", {}, "/health", "GET")).status, 200);
  });

  test("oversized bodies and batches are refused (413), other paths and methods too", async () => {
    const big = JSON.stringify({ query: ["x".repeat(5000)], labels: ["1"] });
    const tooBig = await post(server.url, big);
    assert.equal(tooBig.status, 413);
    assert.match(String(tooBig.body.error), /4096/);
    const chunked = await new Promise<number>((resolve, reject) => {
      const req = request(`${server.url}/get_reward`, { method: "POST", headers: { "transfer-encoding": "chunked" } }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on("error", reject);
      for (let i = 0; i < 10; i++) req.write("x".repeat(1000));
      req.end();
    });
    assert.equal(chunked, 413, "a body without content-length is cut off too");
    const batch = await post(server.url, JSON.stringify({ query: ["a", "b", "c", "d", "e"], labels: ["1", "1", "1", "1", "1"] }));
    assert.equal(batch.status, 413);
    assert.match(String(batch.body.error), /at most 4/);
    assert.equal((await post(server.url, "{}", {}, "/nope")).status, 404);
    assert.equal((await post(server.url, "", {}, "/get_reward", "GET")).status, 405);
    assert.equal((await post(server.url, JSON.stringify({ query: ["<critique>a</critique><score>1</score>"], labels: ["1"] }))).status, 200);
  });
});

describe("reward server access", () => {
  test("binding beyond loopback without a token is refused", async () => {
    await assert.rejects(startRewardServer({ host: "0.0.0.0", port: 0 }), (e: unknown) => e instanceof UserError && /without a token/.test(e.message));
  });

  test("with a token, requests need the bearer token", async () => {
    const server = await startRewardServer({ host: "0.0.0.0", port: 0, token: "s3cret" });
    try {
      const url = server.url.replace("0.0.0.0", "127.0.0.1").replace("[::]", "127.0.0.1");
      const body = JSON.stringify({ query: ["<critique>a</critique><score>1</score>"], labels: ["1"] });
      assert.equal((await post(url, body)).status, 401);
      assert.equal((await post(url, body, { authorization: "Bearer wrong!" })).status, 401);
      assert.equal((await post(url, body, { authorization: "Bearer s3cret" })).status, 200);
    } finally {
      await server.close();
    }
  });
});
