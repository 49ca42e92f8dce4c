/**
 * The conformance suite every `Environment` must pass, in-process or over stdio:
 * `runConformance(env)` runs each check and returns one result per check (it never throws
 * for a failed check; it leaves the environment reset to its start).
 */
import { LOOK_STEP_DEG, MAX_PITCH_DEG, MOVE_STEP_M, TURN_STEP_DEG, type AgentState, type Environment, type EnvironmentInfo, type EnvObservation, type Point3 } from "./protocol.js";

export interface ConformanceResult {
  check: string;
  ok: boolean;
  message?: string;
}

class CheckFailed extends Error {}

function expect(condition: boolean, message: string): asserts condition {
  if (!condition) throw new CheckFailed(message);
}

const EPS = 1e-6;
const near = (a: number, b: number, eps = EPS): boolean => Math.abs(a - b) <= eps;
function angleNear(a: number, b: number, eps = 1e-6): boolean {
  const d = Math.atan2(Math.sin(a - b), Math.cos(a - b));
  return Math.abs(d) <= eps;
}
function sameState(a: AgentState, b: AgentState): boolean {
  return a.position.every((v, i) => near(v, b.position[i] as number)) && angleNear(a.yaw, b.yaw) && near(a.pitch, b.pitch);
}
const show = (s: AgentState): string => `(${s.position.map((v) => v.toFixed(3)).join(", ")}) yaw ${s.yaw.toFixed(4)} pitch ${s.pitch.toFixed(4)}`;

function checkObservation(obs: EnvObservation, cameraHeight: number): void {
  const n = obs.width * obs.height;
  expect(obs.camera.width === obs.width && obs.camera.height === obs.height, "camera size differs from the image size");
  expect(obs.camera.fx > 0 && obs.camera.fy > 0, "focal lengths must be positive");
  expect(obs.rgb.length === n * 3, `rgb has ${obs.rgb.length} bytes, expected ${n * 3}`);
  expect(obs.depth.length === n, `depth has ${obs.depth.length} values, expected ${n}`);
  let valid = 0;
  for (const d of obs.depth) {
    expect(Number.isFinite(d) && d >= 0, `depth values must be finite and ≥ 0, got ${d}`);
    if (d > 0) valid++;
  }
  expect(valid > 0, "depth is 0 everywhere");
  expect(obs.pose.length === 16, "pose must have 16 numbers");
  const p = obs.pose;
  // rotation orthonormal, last row 0 0 0 1
  for (let i = 0; i < 3; i++) {
    for (let j = 0; j < 3; j++) {
      const dot = (p[i] as number) * (p[j] as number) + (p[4 + i] as number) * (p[4 + j] as number) + (p[8 + i] as number) * (p[8 + j] as number);
      expect(near(dot, i === j ? 1 : 0, 1e-6), "the pose's rotation is not orthonormal");
    }
  }
  expect(near(p[12] as number, 0) && near(p[13] as number, 0) && near(p[14] as number, 0) && near(p[15] as number, 1), "the pose's last row must be 0 0 0 1");
  const s = obs.state;
  expect(near(p[3] as number, s.position[0], 1e-6) && near(p[7] as number, s.position[1] + cameraHeight, 1e-6) && near(p[11] as number, s.position[2], 1e-6), "the pose's translation is not the camera above the agent's position");
  // the camera looks along −z: forward = −(third column) = (−sin yaw·cos pitch, sin pitch, −cos yaw·cos pitch)
  const fwd = [-(p[2] as number), -(p[6] as number), -(p[10] as number)];
  expect(near(fwd[0] as number, -Math.sin(s.yaw) * Math.cos(s.pitch), 1e-6) && near(fwd[1] as number, Math.sin(s.pitch), 1e-6) && near(fwd[2] as number, -Math.cos(s.yaw) * Math.cos(s.pitch), 1e-6), "the pose does not look along the state's yaw and pitch");
  if (obs.masks) {
    expect(obs.masks.width === obs.width && obs.masks.height === obs.height && obs.masks.ids.length === n, "masks have the wrong size");
    for (const id of obs.masks.ids) if (id !== 0) expect(obs.masks.labels[String(id)] !== undefined, `mask id ${id} has no label`);
  }
}

function sameBytes(a: ArrayBufferView, b: ArrayBufferView): boolean {
  return Buffer.from(a.buffer, a.byteOffset, a.byteLength).equals(Buffer.from(b.buffer, b.byteOffset, b.byteLength));
}

/** Runs every check against `env`; an environment conforms when every result is ok. */
export async function runConformance(env: Environment): Promise<ConformanceResult[]> {
  const results: ConformanceResult[] = [];
  const info = await env.info();
  const start = await env.reset();
  const bounds = await env.bounds();
  const check = async (name: string, body: () => Promise<void>): Promise<void> => {
    try {
      await env.reset();
      await body();
      results.push({ check: name, ok: true });
    } catch (error) {
      results.push({ check: name, ok: false, message: error instanceof Error ? error.message : String(error) });
    }
  };

  await check("info", async () => {
    expect(info.name.length > 0 && info.sceneId.length > 0, "info needs a name and a scene id");
    expect(info.cameraHeight > 0, "the camera height must be positive");
  });
  await check("bounds contain the start", async () => {
    for (let i = 0; i < 3; i++) expect((bounds.min[i] as number) < (bounds.max[i] as number), "bounds: min must be below max");
    for (const i of [0, 2]) expect(start.position[i] as number >= (bounds.min[i] as number) && (start.position[i] as number) <= (bounds.max[i] as number), "the start lies outside the bounds");
    expect(await env.isNavigable(start.position), "the start is not navigable");
  });
  await check("reset is repeatable", async () => {
    await env.act({ type: "turn_left" });
    await env.act({ type: "move_forward" });
    const again = await env.reset();
    expect(sameState(again, start), `reset gave ${show(again)}, first ${show(start)}`);
  });
  await check("observation is well formed", async () => {
    checkObservation(await env.observe(), info.cameraHeight);
    await env.act({ type: "look_down" });
    checkObservation(await env.observe(), info.cameraHeight);
  });
  await check("observation is reproducible", async () => {
    const a = await env.observe();
    await env.act({ type: "turn_left" });
    await env.reset();
    const b = await env.observe();
    expect(sameBytes(a.rgb, b.rgb), "rgb differs for the same state");
    expect(sameBytes(a.depth, b.depth), "depth differs for the same state");
    if (a.masks && b.masks) expect(sameBytes(a.masks.ids, b.masks.ids), "masks differ for the same state");
  });
  await check("turns", async () => {
    const turnRad = (TURN_STEP_DEG * Math.PI) / 180;
    const left = await env.act({ type: "turn_left" });
    expect(left.success && angleNear(left.state.yaw, start.yaw + turnRad), `turn_left: expected yaw ${start.yaw + turnRad}, got ${left.state.yaw}`);
    const right = await env.act({ type: "turn_right" });
    expect(right.success && sameState(right.state, start), "turn_left then turn_right must restore the state");
    let s = start;
    for (let i = 0; i < 360 / TURN_STEP_DEG; i++) s = (await env.act({ type: "turn_right" })).state;
    expect(sameState(s, start), "a full turn must restore the state");
  });
  await check("looks and the pitch limit", async () => {
    const lookRad = (LOOK_STEP_DEG * Math.PI) / 180;
    const up = await env.act({ type: "look_up" });
    expect(up.success && near(up.state.pitch, start.pitch + lookRad), "look_up must raise the pitch by one step");
    await env.act({ type: "look_down" });
    let last = await env.act({ type: "look_up" });
    let steps = 0;
    while (last.success && steps < 100) {
      last = await env.act({ type: "look_up" });
      steps++;
    }
    expect(!last.success, "looking up must stop at a limit");
    expect(typeof last.reason === "string" && last.reason.length > 0, "a failed action must say why");
    expect(last.state.pitch <= (MAX_PITCH_DEG * Math.PI) / 180 + 1e-6, "the pitch went beyond the limit");
    const after = await env.observe();
    expect(sameState(after.state, last.state), "a failed look must leave the state unchanged");
  });
  await check("move forward, and failed moves change nothing", async () => {
    let state = start;
    let failed = false;
    for (let i = 0; i < 400 && !failed; i++) {
      const r = await env.act({ type: "move_forward" });
      if (r.success) {
        const dx = r.state.position[0] - state.position[0];
        const dz = r.state.position[2] - state.position[2];
        expect(near(Math.hypot(dx, dz), MOVE_STEP_M, 1e-6), `a move must cover ${MOVE_STEP_M} m, covered ${Math.hypot(dx, dz)}`);
        expect(near(dx, -Math.sin(state.yaw) * MOVE_STEP_M, 1e-6) && near(dz, -Math.cos(state.yaw) * MOVE_STEP_M, 1e-6), "a move must follow the heading");
        expect(await env.isNavigable(r.state.position), "a successful move ended off the navigable area");
        state = r.state;
      } else {
        failed = true;
        expect(sameState(r.state, state), `a failed move changed the state: ${show(state)} → ${show(r.state)}`);
        expect(typeof r.reason === "string" && r.reason.length > 0, "a failed move must say why");
        const obs = await env.observe();
        expect(sameState(obs.state, state), "the observed state changed after a failed move");
      }
      if (i % 7 === 6) state = (await env.act({ type: "turn_left" })).state;
    }
    expect(failed, "walking forward in a bounded scene must eventually hit something");
  });
  await check("teleport", async () => {
    const target: AgentState = { position: [...start.position] as Point3, yaw: start.yaw + 1, pitch: 0 };
    const ok = await env.act({ type: "teleport", state: target });
    expect(ok.success && sameState(ok.state, target), "teleport to a navigable pose must succeed");
    const outside: Point3 = [bounds.max[0] + 10, start.position[1], bounds.max[2] + 10];
    const bad = await env.act({ type: "teleport", state: { position: outside, yaw: 0, pitch: 0 } });
    expect(!bad.success && sameState(bad.state, ok.state), "teleport outside the scene must fail and change nothing");
  });
  await check("navigability and geodesic distance", async () => {
    const outside: Point3 = [bounds.max[0] + 10, start.position[1], bounds.max[2] + 10];
    expect(!(await env.isNavigable(outside)), "a point outside the bounds cannot be navigable");
    expect(near(await env.geodesicDistance(start.position, start.position), 0, 1e-9), "the distance from a point to itself must be 0");
    expect((await env.geodesicDistance(start.position, outside)) === Infinity, "the distance to a non-navigable point must be Infinity");
    // walk somewhere and compare
    const points: Point3[] = [start.position];
    for (let i = 0; i < 60; i++) {
      const r = await env.act({ type: i % 5 === 4 ? "turn_left" : "move_forward" });
      if (r.success && i % 5 !== 4) points.push(r.state.position);
    }
    for (const p of points.slice(1)) {
      const d = await env.geodesicDistance(start.position, p);
      const back = await env.geodesicDistance(p, start.position);
      const euclid = Math.hypot(p[0] - start.position[0], p[2] - start.position[2]);
      expect(Number.isFinite(d), "a point reached by walking must be reachable");
      expect(d >= euclid - 0.1, `geodesic ${d} is shorter than the straight line ${euclid}`);
      expect(Math.abs(d - back) <= 0.1, `geodesic distance must be symmetric: ${d} vs ${back}`);
    }
  });
  await env.reset();
  return results;
}

/**
 * The manipulation checks, for environments that handle objects (the built-in simulator): a
 * failed manipulation says why and changes neither the agent nor the view; picking up an object
 * in view and at hand succeeds (walking and turning until one is), reports a `pickup` event,
 * takes it out of the view, and a second pickup fails with the hands full. Leaves the
 * environment reset to its start state (objects stay where the checks left them).
 */
export async function runManipulationConformance(env: Environment): Promise<ConformanceResult[]> {
  const results: ConformanceResult[] = [];
  const check = async (name: string, body: () => Promise<void>): Promise<void> => {
    try {
      await body();
      results.push({ check: name, ok: true });
    } catch (error) {
      results.push({ check: name, ok: false, message: error instanceof Error ? error.message : String(error) });
    }
  };
  const start = await env.reset();
  await check("failed manipulations change nothing", async () => {
    const before = await env.observe();
    for (const action of [{ type: "pickup", object: 999_999 }, { type: "put", receptacle: 999_999 }, { type: "open", object: 999_999 }, { type: "break", object: 999_999 }] as const) {
      const r = await env.act(action);
      expect(!r.success, `${action.type} of an unknown object must fail`);
      expect(typeof r.reason === "string" && r.reason.length > 0, `a failed ${action.type} must say why`);
      expect(sameState(r.state, start), `a failed ${action.type} changed the state`);
    }
    const after = await env.observe();
    expect(sameBytes(before.rgb, after.rgb), "a failed manipulation changed the view");
  });
  await check("pick up an object in view", async () => {
    let picked: number | undefined;
    await env.act({ type: "look_down" });
    await env.act({ type: "look_down" });
    for (let i = 0; i < 300 && picked === undefined; i++) {
      const obs = await env.observe();
      const ids = Object.keys(obs.masks?.labels ?? {}).map(Number).filter((id) => id > 2);
      for (const id of ids) {
        const r = await env.act({ type: "pickup", object: id });
        if (r.success) {
          expect((r.events ?? []).some((e) => e.type === "pickup" && e.object === id), "a pickup must report a pickup event");
          picked = id;
          break;
        }
        expect(typeof r.reason === "string" && r.reason.length > 0, "a failed pickup must say why");
      }
      if (picked === undefined) {
        // walk ahead, turning away from walls, and glance around now and then
        const step = await env.act({ type: i % 9 === 8 ? "turn_left" : "move_forward" });
        if (!step.success) for (let k = 0; k < 1 + (i % 4); k++) await env.act({ type: "turn_right" });
      }
    }
    expect(picked !== undefined, "found no object to pick up while walking around");
    const obs = await env.observe();
    expect(obs.masks === undefined || !Array.from(obs.masks.ids).includes(picked), "a held object must leave the view");
    const visible = Object.keys(obs.masks?.labels ?? {}).map(Number).filter((id) => id > 2 && id !== picked);
    for (const id of visible) {
      const again = await env.act({ type: "pickup", object: id });
      expect(!again.success, "the hand holds one object: a second pickup must fail");
    }
  });
  await env.reset();
  return results;
}

/** What `eqa env check` found: the environment's own description, and one result per check. */
export interface EnvironmentCheck {
  /** null when the environment did not answer `info` (it did not start). */
  info: EnvironmentInfo | null;
  results: ConformanceResult[];
  /** Every check passed. */
  ok: boolean;
}

/**
 * Opens an environment, runs the conformance suite against it (and the manipulation checks when
 * asked) and closes it. An environment that does not start, or dies on its first request, is one
 * failed check, "the environment starts", with its error: the caller reports it like any other.
 */
export async function checkEnvironment(open: () => Environment | Promise<Environment>, options: { manipulation?: boolean } = {}): Promise<EnvironmentCheck> {
  let env: Environment | undefined;
  try {
    env = await open();
    const info = await env.info();
    const results = await runConformance(env);
    if (options.manipulation) results.push(...(await runManipulationConformance(env)));
    return { info, results, ok: results.every((r) => r.ok) };
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    return { info: null, results: [{ check: "the environment starts", ok: false, message }], ok: false };
  } finally {
    await env?.close().catch(() => undefined);
  }
}
