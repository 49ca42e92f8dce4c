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
    // scores: the totals over their largest value 2 + μ = 2.3, in [0, 1] for OpenRLHF's dynamic filtering
    assert.deepEqual(reply.body.scores, [2.1 / 2.3, 1.6400000000000001 / 2.3]);
    assert.deepEqual(reply.body.full_group, [true, true]);
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
      [JSON.stringify({ query: ["a"], labels: ["0x7"] }), /ground-truth score from 0 to 10/],
      [JSON.stringify({ query: ["a"], labels: ["1e1"] }), /ground-truth score from 0 to 10/],
      [JSON.stringify({ query: ["a"], labels: ["Infinity"] }), /ground-truth score from 0 to 10/],
      [JSON.stringify({ query: ["a"], labels: ["{\"score\": 4, \"group_prompts\": 0}"] }), /"group_prompts" that is not a whole number of at least 1/],
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
    assert.match(String(tooBig.body.error), /at most 4096 are accepted \(--max-body-bytes\)/);
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

/** Sends a request with a raw Host header (Node's client would otherwise set it from the URL). */
function postWithHost(url: string, host: string, body: string, headers: Record<string, string> = {}): Promise<Reply> {
  return post(url, body, { host, ...headers });
}

describe("reward server and DNS rebinding", () => {
  test("without a token, a request whose Host is not loopback gets 403; loopback names are served", async () => {
    const server = await startRewardServer({ port: 0 });
    try {
      const body = JSON.stringify({ query: ["<critique>a</critique><score>1</score>"], labels: ["1"] });
      const port = new URL(server.url).port;
      const refused = await postWithHost(server.url, `attacker.example:${port}`, body);
      assert.equal(refused.status, 403);
      assert.match(String(refused.body.error), /host attacker\.example:\d+ are refused: the server has no token/);
      assert.equal((await postWithHost(server.url, "10.0.0.5", body)).status, 403);
      for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`, "localhost"]) assert.equal((await postWithHost(server.url, host, body)).status, 200, host);
    } finally {
      await server.close();
    }
  });

  test("with a token, any Host is served to a client that sends the token", async () => {
    const server = await startRewardServer({ port: 0, token: "s3cret" });
    try {
      const body = JSON.stringify({ query: ["<critique>a</critique><score>1</score>"], labels: ["1"] });
      assert.equal((await postWithHost(server.url, "gpu-node-7:5000", body, { authorization: "Bearer s3cret" })).status, 200);
      assert.equal((await postWithHost(server.url, "gpu-node-7:5000", body)).status, 401);
    } finally {
      await server.close();
    }
  });
});

describe("reward server under a megabyte completion", () => {
  test("a 1 MB completion full of tags is answered, and another client's small request is answered meanwhile", async () => {
    const server = await startRewardServer({ port: 0, maxBodyBytes: 4 * 1024 * 1024 });
    try {
      const huge = JSON.stringify({ query: [`${PROMPT}<critique>a</critique>${"<score>".repeat((1 << 20) / 7)}`], prompts: [PROMPT], labels: ["7"] });
      const small = JSON.stringify({ query: [PROMPT + output(7)], prompts: [PROMPT], labels: ["7"] });
      const started = Date.now();
      const hugeReply = post(server.url, huge);
      const smallReplies: number[] = [];
      for (let i = 0; i < 5; i++) {
        const t = Date.now();
        const reply = await post(server.url, small);
        assert.equal(reply.status, 200);
        smallReplies.push(Date.now() - t);
      }
      const big = await hugeReply;
      assert.equal(big.status, 200);
      assert.deepEqual((big.body.extra_logs as Record<string, unknown>).format_reward, [0]);
      // quadratic parsing held the event loop 18 s for such a body; linear parsing takes milliseconds
      assert.ok(Date.now() - started < 5000, `the whole exchange took ${Date.now() - started} ms`);
      assert.ok(Math.max(...smallReplies) < 2000, `small requests took ${smallReplies.join(", ")} ms`);
    } finally {
      await server.close();
    }
  });
});

describe("vision-language queries", () => {
  // Chat templates as the trainer renders the prompt (one placeholder per image) and as it
  // decodes the sequence it generated from (the placeholder expanded into the image's tokens).
  const question = "Evaluate the agent's response to: Where is the black backpack?\nVideo Frames (attached):";
  const families: { name: string; prompt: (images: string) => string; image: string; expanded: (n: number) => string }[] = [
    {
      name: "Qwen2-VL",
      prompt: (images) => `<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n<|im_start|>user\n${question}${images}<|im_end|>\n<|im_start|>assistant\n`,
      image: "<|vision_start|><|image_pad|><|vision_end|>",
      expanded: (n) => `<|vision_start|>${"<|image_pad|>".repeat(n)}<|vision_end|>`,
    },
    {
      name: "Qwen2.5-VL",
      prompt: (images) => `<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n<|im_start|>user\n${images}${question}<|im_end|>\n<|im_start|>assistant\n`,
      image: "<|vision_start|><|image_pad|><|vision_end|>",
      expanded: (n) => `<|vision_start|>${"<|image_pad|>".repeat(n)}<|vision_end|>`,
    },
    {
      name: "LLaVA-1.5",
      prompt: (images) => `USER: ${images}\n${question} ASSISTANT:`,
      image: "<image>",
      expanded: (n) => "<image>".repeat(n),
    },
    {
      name: "InternVL2.5",
      prompt: (images) => `<|im_start|>system\n你是书生·万象，英文名是InternVL。<|im_end|>\n<|im_start|>user\n${images}\n${question}<|im_end|>\n<|im_start|>assistant\n`,
      image: "<image>",
      expanded: (n) => `<img>${"<IMG_CONTEXT>".repeat(n)}</img>`,
    },
  ];
  const outputs = [
    "<critique>The agent found the backpack by the chair.</critique><score>7</score>",
    "<critique>\nGrounded in frames 2 and 4.\n</critique>\n<score>9</score>",
    "Looks fine. <critique>ok</critique><score>3</score>",
    "<critique>cut off",
  ];

  test("R_f and R_a of a batch whose images were expanded into pad tokens equal those of its text-only twin, for four VLM families", async () => {
    const server = await startRewardServer({ port: 0 });
    try {
      const textOnly = await post(server.url, JSON.stringify({ query: outputs, labels: outputs.map(() => "7") }));
      assert.equal(textOnly.status, 200);
      const want = textOnly.body.extra_logs as Record<string, number[]>;
      assert.deepEqual(want.format_reward, [1, 1, 0, 0]);
      for (const family of families) {
        const images = family.image.repeat(5);
        const prompt = family.prompt(images);
        const expandedPrompt = family.prompt(Array.from({ length: 5 }, (_, i) => family.expanded(64 + 97 * i)).join(""));
        const end = family.name === "LLaVA-1.5" ? "</s>" : "<|im_end|>";
        const queries = outputs.map((o) => `${expandedPrompt}${o}${end}`);
        for (const prompts of [outputs.map(() => prompt), undefined]) {
          const reply = await post(server.url, JSON.stringify({ query: queries, ...(prompts ? { prompts } : {}), labels: outputs.map(() => "7") }));
          assert.equal(reply.status, 200, family.name);
          const got = reply.body.extra_logs as Record<string, number[]>;
          const how = `${family.name}, ${prompts ? "with" : "without"} prompts`;
          assert.deepEqual(got.format_reward, want.format_reward, how);
          assert.deepEqual(got.accuracy_reward, want.accuracy_reward, how);
          assert.deepEqual(reply.body.rewards, textOnly.body.rewards, how);
        }
      }
    } finally {
      await server.close();
    }
  });
});

describe("grouping samples sent one by one", () => {
  const variants = ["original", "temporal", "spatial", "reasoning"] as const;
  // the originals score 8 against a ground truth of 8 (R_a 1), the perturbed versions 2 (R_a 0.64): every contrast fires
  const sample = (variant: string, k: number): { query: string; label: string } => ({
    query: `${PROMPT.replace("Evaluate", `Evaluate (${variant} view)`)}${output(variant === "original" ? 8 : 2 - (k % 2))}`,
    label: JSON.stringify({ score: 8, variant, group: "q17#0", group_prompts: 4 }),
  });

  test("--group-size 8: an instance's 4 prompts × 8 samples, each its own concurrent request, all get their group's contrasts", async () => {
    const server = await startRewardServer({ port: 0, groupSize: 8, groupTimeoutMs: 20_000 });
    try {
      const samples = variants.flatMap((v) => Array.from({ length: 8 }, (_, k) => sample(v, k)));
      const started = Date.now();
      const replies = await Promise.all(samples.map((s) => post(server.url, JSON.stringify({ query: [s.query], labels: [s.label] }))));
      assert.ok(Date.now() - started < 10_000, "answered when the group was complete, not at the timeout");
      const batch = await startRewardServer({ port: 0 });
      try {
        const together = await post(batch.url, JSON.stringify({ query: samples.map((s) => s.query), labels: samples.map((s) => s.label) }));
        replies.forEach((reply, i) => {
          assert.equal(reply.status, 200);
          assert.deepEqual(reply.body.full_group, [true]);
          assert.deepEqual((reply.body.extra_logs as Record<string, number[]>).full_group, [1]);
          assert.deepEqual(reply.body.rewards, [(together.body.rewards as number[])[i]], `sample ${i} as in one batch`);
        });
      } finally {
        await batch.close();
      }
      const originals = replies.slice(0, 8).map((r) => (r.body.extra_logs as Record<string, number[]>).contrastive_reward![0]);
      assert.deepEqual(originals, Array(8).fill(0.3), "every original sample gets the contrast term (3 × 0.3 / 3)");
      assert.deepEqual(replies.slice(0, 8).map((r) => (r.body.rewards as number[])[0]), Array(8).fill(2.3));
    } finally {
      await server.close();
    }
  });

  test("a group of 8 samples of one prompt, keyed by the prompt (images collapsed), is answered together; requests may carry several groups' samples", async () => {
    const server = await startRewardServer({ port: 0, groupSize: 8, groupTimeoutMs: 20_000 });
    try {
      const prompt = (pads: number): string => `<|im_start|>user\n<|vision_start|>${"<|image_pad|>".repeat(pads)}<|vision_end|>Evaluate.<|im_end|>\n<|im_start|>assistant\n`;
      const requests = Array.from({ length: 8 }, (_, k) => ({ query: [prompt(64) + output(k % 3 === 0 ? 8 : 5)], prompts: [prompt(1)], labels: ["8"] }));
      // a TRL-like slice of two processes: 3 samples in one request, 5 in the other
      const slices = [
        { query: requests.slice(0, 3).flatMap((r) => r.query), prompts: requests.slice(0, 3).flatMap((r) => r.prompts), labels: ["8", "8", "8"] },
        { query: requests.slice(3).flatMap((r) => r.query), prompts: requests.slice(3).flatMap((r) => r.prompts), labels: Array(5).fill("8") },
      ];
      const [one, two] = await Promise.all(slices.map((b) => post(server.url, JSON.stringify(b))));
      assert.deepEqual([...(one!.body.full_group as boolean[]), ...(two!.body.full_group as boolean[])], Array(8).fill(true));
      const singles = await Promise.all(requests.map((r) => post(server.url, JSON.stringify(r))));
      assert.deepEqual(singles.map((r) => (r.body.full_group as boolean[])[0]), Array(8).fill(true));
    } finally {
      await server.close();
    }
  });

  test("an incomplete group is answered when its timeout passes, its rewards marked full_group false", async () => {
    const server = await startRewardServer({ port: 0, groupSize: 8, groupTimeoutMs: 300 });
    try {
      const samples = [sample("original", 0), sample("original", 1), sample("temporal", 0)];
      const started = Date.now();
      const replies = await Promise.all(samples.map((s) => post(server.url, JSON.stringify({ query: [s.query], labels: [s.label] }))));
      assert.ok(Date.now() - started >= 250);
      for (const reply of replies) {
        assert.equal(reply.status, 200);
        assert.deepEqual(reply.body.full_group, [false]);
      }
      // the contrast over what arrived: the originals against the one temporal sample
      const contrast = (replies[0]!.body.extra_logs as Record<string, number[]>).contrastive_reward![0]!;
      assert.ok(Math.abs(contrast - 0.3 / 3) < 1e-12, `contrast ${contrast}: the temporal boost alone`);
    } finally {
      await server.close();
    }
  });
});
