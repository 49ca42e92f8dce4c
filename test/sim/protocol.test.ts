import { describe, test, after } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { createInterface } from "node:readline";
import { EnvironmentError, HouseholdEnvironment, StdioEnvironment, agentPose, runConformance, serveEnvironment, type Action, type ActResult, type Environment, type WireObservation } from "../../src/sim/index.js";
import { projectRoot } from "../helpers/paths.js";

const SERVER = join(projectRoot, "src", "sim", "server-main.ts");

function server(args: string[], timeoutMs = 20_000): StdioEnvironment {
  return new StdioEnvironment({ command: process.execPath, args: ["--import", "tsx", SERVER, "--seed", "3", "--width", "96", "--height", "72", ...args], cwd: projectRoot, timeoutMs });
}

function failures(results: { check: string; ok: boolean; message?: string }[]): string[] {
  return results.filter((r) => !r.ok).map((r) => `${r.check}: ${r.message}`);
}

describe("conformance suite", () => {
  test("the household simulator passes in-process", async () => {
    for (const seed of [3, 11]) {
      const env = HouseholdEnvironment.fromSeed(seed, { width: 96, height: 72 });
      const results = await runConformance(env);
      assert.ok(results.length >= 10);
      assert.deepEqual(failures(results), []);
    }
  });

  test("catches an environment whose failed moves still move", async () => {
    class Slippery extends HouseholdEnvironment {
      override async act(action: Action): Promise<ActResult> {
        const result = this.actNow(action);
        if (result.success || action.type !== "move_forward") return result;
        const [x, y, z] = result.state.position;
        return { ...result, state: { ...result.state, position: [x + 0.1, y, z] } };
      }
    }
    const env = new Slippery(HouseholdEnvironment.fromSeed(3).home, { width: 48, height: 36 });
    const failed = failures(await runConformance(env));
    assert.equal(failed.length, 1, failed.join("\n"));
    assert.match(failed[0] ?? "", /^move forward, and failed moves change nothing: a failed move changed the state/);
  });

  test("the household simulator passes over stdio, with the same frames", async () => {
    const remote = server([]);
    try {
      const results = await runConformance(remote);
      assert.deepEqual(failures(results), []);
      const local = HouseholdEnvironment.fromSeed(3, { width: 96, height: 72 });
      await remote.reset();
      await remote.act({ type: "turn_left" });
      local.actNow({ type: "turn_left" });
      const a = await remote.observe();
      const b = local.observeNow();
      assert.deepEqual(a.state, b.state);
      assert.ok(Buffer.from(a.rgb).equals(Buffer.from(b.rgb)));
      assert.ok(Buffer.from(a.depth.buffer).equals(Buffer.from(b.depth.buffer)));
      assert.ok(a.masks && b.masks && Buffer.from(a.masks.ids.buffer).equals(Buffer.from(b.masks.ids.buffer)));
      assert.deepEqual(a.masks?.labels, b.masks?.labels);
      assert.deepEqual(Array.from(a.pose), Array.from(b.pose));
    } finally {
      await remote.close();
    }
  });
});

describe("stdio client errors", () => {
  const started: StdioEnvironment[] = [];
  after(async () => {
    for (const env of started) await env.close();
  });

  async function failsWith(env: StdioEnvironment, kind: string, pattern: RegExp): Promise<void> {
    started.push(env);
    await env.reset();
    await assert.rejects(env.observe(), (error: unknown) => {
      assert.ok(error instanceof EnvironmentError, String(error));
      assert.equal(error.kind, kind);
      assert.match(error.message, pattern);
      return true;
    });
    // later calls fail fast with the same error
    await assert.rejects(env.bounds(), EnvironmentError);
  }

  test("a hanging process times out", async () => {
    await failsWith(server(["--hang-on", "observe"], 4000), "timeout", /observe got no reply in 4000 ms/);
  });
  test("a dying process is reported with its exit", async () => {
    await failsWith(server(["--die-on", "observe"]), "exited", /exited \(code 3\)/);
  });
  test("a malformed message is reported", async () => {
    await failsWith(server(["--garbage-on", "observe"]), "malformed", /not JSON on stdout/);
  });
  test("a command that cannot start", async () => {
    const env = new StdioEnvironment({ command: join(projectRoot, "no-such-environment"), timeoutMs: 5000 });
    await assert.rejects(env.info(), (error: unknown) => error instanceof EnvironmentError && (error.kind === "spawn" || error.kind === "exited"));
  });
});

describe("stdio server", () => {
  test("answers bad requests with JSON-RPC errors and goes on", async () => {
    const input = new PassThrough();
    const output = new PassThrough();
    const env = HouseholdEnvironment.fromSeed(2, { width: 32, height: 24 });
    const served = serveEnvironment(env, input, output);
    const replies = createInterface({ input: output })[Symbol.asyncIterator]();
    const next = async (): Promise<Record<string, unknown>> => JSON.parse(String((await replies.next()).value)) as Record<string, unknown>;
    input.write("{not json\n");
    assert.equal(((await next()).error as { code: number }).code, -32700);
    input.write(`${JSON.stringify({ jsonrpc: "2.0", id: 1, method: "fly" })}\n`);
    let reply = await next();
    assert.deepEqual([reply.id, (reply.error as { code: number }).code], [1, -32601]);
    input.write(`${JSON.stringify({ jsonrpc: "2.0", id: 2, method: "act", params: { action: { type: "jump" } } })}\n`);
    reply = await next();
    assert.deepEqual([reply.id, (reply.error as { code: number }).code], [2, -32602]);
    input.write(`${JSON.stringify({ jsonrpc: "2.0", id: 3, method: "reset", params: { start: { position: [-50, 0, -50], yaw: 0, pitch: 0 } } })}\n`);
    reply = await next();
    assert.equal((reply.error as { code: number; message: string }).code, -32000);
    assert.match((reply.error as { message: string }).message, /not navigable/);
    input.write(`${JSON.stringify({ jsonrpc: "2.0", id: 4, method: "geodesic_distance", params: { from: [0, 0, 0], to: [-50, 0, -50] } })}\n`);
    reply = await next();
    assert.deepEqual(reply, { jsonrpc: "2.0", id: 4, result: null });
    input.write(`${JSON.stringify({ jsonrpc: "2.0", id: 5, method: "close" })}\n`);
    reply = await next();
    assert.deepEqual(reply, { jsonrpc: "2.0", id: 5, result: null });
    await served;
  });

  test("observe_pose renders the camera placed at a pose and leaves the agent where it is; an environment without it answers unknown method", async () => {
    const serve = (env: Environment): { call: (id: number, method: string, params?: object) => Promise<Record<string, unknown>>; served: Promise<void> } => {
      const input = new PassThrough();
      const output = new PassThrough();
      const served = serveEnvironment(env, input, output);
      const replies = createInterface({ input: output })[Symbol.asyncIterator]();
      const call = async (id: number, method: string, params: object = {}): Promise<Record<string, unknown>> => {
        input.write(`${JSON.stringify({ jsonrpc: "2.0", id, method, params })}\n`);
        return JSON.parse(String((await replies.next()).value)) as Record<string, unknown>;
      };
      return { call, served };
    };
    const household = HouseholdEnvironment.fromSeed(2, { width: 32, height: 24 });
    const { call, served } = serve(household);
    const cameraHeight = ((await call(1, "info")).result as { cameraHeight: number }).cameraHeight;
    const here = (await call(2, "observe")).result as WireObservation;
    const turned = agentPose({ ...here.state, yaw: here.state.yaw + 1.2 }, cameraHeight);
    const there = (await call(3, "observe_pose", { pose: Array.from(turned) })).result as WireObservation;
    assert.deepEqual(there.pose, Array.from(turned));
    assert.deepEqual(there.state, here.state);
    assert.notEqual(there.rgb, here.rgb);
    const same = (await call(4, "observe_pose", { pose: here.pose })).result as WireObservation;
    assert.deepEqual([same.rgb, same.depth], [here.rgb, here.depth]);
    assert.equal(((await call(5, "observe_pose", { pose: [1, 2, 3] })).error as { code: number }).code, -32602);
    await call(6, "close");
    await served;

    const plain = HouseholdEnvironment.fromSeed(2, { width: 32, height: 24 });
    const bare: Environment = {
      info: () => plain.info(),
      reset: (start) => plain.reset(start),
      observe: () => plain.observe(),
      act: (action) => plain.act(action),
      isNavigable: (point) => plain.isNavigable(point),
      geodesicDistance: (from, to) => plain.geodesicDistance(from, to),
      bounds: () => plain.bounds(),
      close: () => plain.close(),
    };
    const without = serve(bare);
    assert.equal(((await without.call(1, "observe_pose", { pose: here.pose })).error as { code: number }).code, -32601);
    await without.call(2, "close");
    await without.served;
  });
});
