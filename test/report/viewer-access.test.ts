import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { request } from "node:http";
import { join } from "node:path";
import { isLoopbackHost, type Question } from "../../src/core/index.js";
import { startViewer } from "../../src/report/index.js";
import { cliEnv, runCli } from "../helpers/cli.js";
import { temporaryDir } from "../helpers/paths.js";
import { writeBenchmark, writeRun } from "./fixtures.js";

/** A folder holding one answered run (an empty folder is refused: it holds no run to view). */
function runFolder(): string {
  const dir = temporaryDir();
  const questions: Question[] = [{ questionId: "q", question: "What is on the table?", answer: "a cup", category: "object recognition", episodeHistory: "hm3d-v0/000-fake" }];
  writeBenchmark(join(dir, "benchmark.json"), questions);
  writeRun(join(dir, "run"), { benchmark: join(dir, "benchmark.json"), questions, answers: [{ id: "q", answer: "a cup" }] });
  return join(dir, "run");
}

const TOKEN = "0123456789abcdef-viewer";

function get(url: string, headers: Record<string, string> = {}): Promise<{ status: number; location: string; cookie: string; body: string }> {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const req = request({ host: u.hostname, port: u.port, path: `${u.pathname}${u.search}`, headers }, (res) => {
      let body = "";
      res.on("data", (d: Buffer) => (body += d.toString()));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, location: String(res.headers.location ?? ""), cookie: String(res.headers["set-cookie"]?.[0] ?? ""), body }));
    });
    req.on("error", reject);
    req.end();
  });
}

describe("eqa view access", () => {
  test("loopback addresses are told apart from the rest", () => {
    for (const host of ["127.0.0.1", "127.8.9.1", "localhost", "::1", "[::1]", "::ffff:127.0.0.1"]) assert.ok(isLoopbackHost(host), host);
    for (const host of ["0.0.0.0", "::", "192.168.1.4", "example.com", "128.0.0.1", "::ffff:10.0.0.1"]) assert.ok(!isLoopbackHost(host), host);
  });

  test("binding beyond loopback without --token exits 2 and says how to give one", async () => {
    const home = temporaryDir();
    const result = await runCli(["view", home, "--host", "0.0.0.0", "--port", "0"], cliEnv(home));
    assert.equal(result.code, 2, result.stderr);
    assert.match(result.stderr, /--host.*no token guards them/);
    assert.match(result.stderr, /--token/);
    const short = await runCli(["view", home, "--host", "0.0.0.0", "--port", "0", "--token", "short"], cliEnv(home));
    assert.equal(short.code, 2, short.stderr);
    assert.match(short.stderr, /--token.*fewer than 16/);
  });

  test("with a token, every request needs it: bearer header, or the printed URL once, which sets a cookie and drops the token from the address", async () => {
    const viewer = await startViewer({ runDirs: [runFolder()], host: "0.0.0.0", port: 0, token: TOKEN });
    try {
      const base = viewer.url.replace("0.0.0.0", "127.0.0.1");
      assert.match(viewer.openUrl, new RegExp(`\\?token=${TOKEN}$`));
      for (const path of ["/", "/api/runs", "/runs/0/files/summary.json"]) {
        const refused = await get(`${base}${path}`);
        assert.equal(refused.status, 401, path);
        assert.doesNotMatch(refused.body, /<html/i);
      }
      assert.equal((await get(`${base}/api/runs`, { authorization: "Bearer not-the-token-at-all" })).status, 401);
      const rating = await fetch(`${base}/api/runs/0/ratings`, { method: "POST", headers: { "content-type": "application/json", "x-eqa-view": "rate" }, body: JSON.stringify({ questionId: "q", score: 5, reviewer: "mallory" }) });
      assert.equal(rating.status, 401, "a rating needs the token too");
      assert.equal((await get(`${base}/api/runs`, { authorization: `Bearer ${TOKEN}` })).status, 200);
      const wrongQuery = await get(`${base}/?token=wrong-token-wrong-token`);
      assert.equal(wrongQuery.status, 401);

      const first = await get(`${base}/?token=${TOKEN}`);
      assert.equal(first.status, 303);
      assert.equal(first.location, "/", "the token leaves the address bar");
      assert.doesNotMatch(first.cookie, new RegExp(TOKEN), "the cookie holds no token");
      const cookie = first.cookie.split(";")[0]!;
      assert.equal((await get(`${base}/api/runs`, { cookie })).status, 200);
      assert.equal((await get(`${base}/api/runs`, { cookie: `${cookie.split("=")[0]}=forged` })).status, 401);
      assert.equal((await get(`${base}/api/runs`, { authorization: `Bearer ${TOKEN}`, host: "anything.example" })).status, 200, "beyond loopback the token, not the Host, guards it");
    } finally {
      await viewer.close();
    }
  });

  test("on loopback without a token, a foreign Host header is refused and the local names are served", async () => {
    const viewer = await startViewer({ runDirs: [runFolder()], port: 0 });
    try {
      assert.equal((await get(`${viewer.url}/api/runs`)).status, 200);
      assert.equal((await get(`${viewer.url}/api/runs`, { host: "localhost" })).status, 200);
      assert.equal((await get(`${viewer.url}/api/runs`, { host: "rebound.example" })).status, 403);
    } finally {
      await viewer.close();
    }
  });
});
