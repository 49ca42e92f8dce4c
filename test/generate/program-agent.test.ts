import { test } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { loadTrajectoryLog, type TagQuestion } from "../../src/data/index.js";
import { openEpisode } from "../../src/episodes/index.js";
import { buildMemory } from "../../src/agents/index.js";
import { STRUCTURE_LABELS, actionHistory, answerWithPrograms, executeProgram, groundingPose, perceivedLog, tagAnswerContext, worldOf } from "../../src/generate/index.js";
import { temporaryDir } from "../helpers/paths.js";
import { copyRecording } from "../helpers/recordings.js";

test("the perceived log holds what the memory saw, where the ground truth has it, and no structure; programs run over it", async () => {
  const out = join(temporaryDir(), "rec");
  await copyRecording({ seed: 2, tasks: ["cool"], width: 128, height: 96 }, out);
  const truth = await loadTrajectoryLog(join(out, "trajectory.json"));
  const episode = await openEpisode(join(out, "frames"));
  const { graph } = await buildMemory(episode, { sampling: { kind: "every", step: 2 }, detector: null, ignoredMaskLabels: STRUCTURE_LABELS });
  const log = await perceivedLog(graph, episode, { id: truth.id, environment: truth.environment, cameraHeight: truth.cameraHeight });

  assert.equal(log.source, "perceived");
  assert.equal(log.steps.length, truth.steps.length, "one step per recorded frame");
  assert.equal(log.events.length, 0, "a memory has no events");
  assert.ok(log.objects.length >= 5);
  assert.ok(log.objects.every((o) => !(STRUCTURE_LABELS as readonly string[]).includes(o.type)));
  // the agent's poses are the recording's
  for (const i of [0, Math.floor(log.steps.length / 2), log.steps.length - 1]) {
    const [a, b] = [log.steps[i]!.agent, truth.steps[i]!.agent];
    assert.ok(Math.hypot(a.position[0] - b.position[0], a.position[1] - b.position[1], a.position[2] - b.position[2]) < 1e-3, `step ${i}`);
    assert.ok(Math.abs(Math.atan2(Math.sin(a.yaw - b.yaw), Math.cos(a.yaw - b.yaw))) < 1e-6);
  }
  // every perceived piece of furniture lies near a true one of its type (memory centres come from seen surfaces)
  const first = truth.steps[0]!.objects;
  const furniture = log.objects.filter((o) => truth.objects.some((t) => t.type === o.type && t.kind === "furniture"));
  assert.ok(furniture.length >= 5);
  assert.ok(log.objects.every((o) => log.steps[0]!.objects[o.id]!.position !== null), "only objects the memory placed");
  for (const seen of furniture) {
    const p = log.steps[0]!.objects[seen.id]!.position!;
    const truePositions = truth.objects.filter((t) => t.type === seen.type).flatMap((t) => { const q = first[t.id]?.position; return q ? [q] : []; });
    const nearest = Math.min(...truePositions.map((q) => Math.hypot(p[0] - q[0], p[2] - q[2])));
    assert.ok(nearest < 1.2, `${seen.id} is ${nearest.toFixed(2)} m from any true ${seen.type}`);
  }
  assert.ok(log.objects.some((o) => o.properties.colour !== undefined), "colours are named from the pixels seen");

  // a program over the perceived log: the fridge is seen, its state is unknown to a memory
  const seesFridge = executeProgram({ target: "fridge", filters: [], query: { type: "countObjects", modifier: null } }, log);
  assert.equal(seesFridge[0]?.value, truth.objects.filter((o) => o.type === "fridge").length);

  // with the action history, the perceived log has the agent's events and what they imply
  const actions = actionHistory(truth);
  assert.equal(actions.length, truth.events.length);
  const opened = actions.find((a) => a.action === "open")!;
  const openEvent = truth.events.find((e) => e.type === "open")!;
  assert.deepEqual(opened.object.position, worldOf(truth).groundedPositionNear(openEvent.object, openEvent.step), "positions in the grounding frame");
  const pose0 = (await episode.frame(0)).pose!;
  const grounded0 = groundingPose(truth, pose0);
  assert.ok(Math.hypot(grounded0[3]!, grounded0[7]!, grounded0[11]!) < 1e-3, "the first camera is at the grounding frame's origin");
  const context = await tagAnswerContext(truth, episode);
  assert.equal(context.poses.length, episode.frameCount);
  assert.deepEqual(context.actions, actions);
  const k = Math.floor(episode.frameCount / 2);
  const worldPose = (await episode.frame(k)).pose!;
  const g = context.toGrounding;
  const expected = [0, 1, 2].map((r) => g[r * 4]! * worldPose[3]! + g[r * 4 + 1]! * worldPose[7]! + g[r * 4 + 2]! * worldPose[11]! + g[r * 4 + 3]!);
  assert.ok(Math.hypot(expected[0]! - context.poses[k]![3]!, expected[1]! - context.poses[k]![7]!, expected[2]! - context.poses[k]![11]!) < 1e-5, "a frame's grounding pose is the world pose moved to the grounding frame");
  const withHistory = await perceivedLog(graph, episode, { id: truth.id, environment: truth.environment, cameraHeight: truth.cameraHeight, actions });
  assert.equal(withHistory.events.length, truth.events.length);
  const openType = truth.objects.find((o) => o.id === openEvent.object)!.type;
  const countOpen = { target: openType, filters: [], query: { type: "countTimes" as const, modifier: "open" } };
  assert.deepEqual(executeProgram(countOpen, withHistory).map((g) => g.value), executeProgram(countOpen, truth).map((g) => g.value));
  const openRightAfter = { target: openType, filters: [{ type: "moment" as const, key: "right_after", args: ["open", openType, 1] }], query: { type: "getState" as const, modifier: "open" } };
  assert.deepEqual(executeProgram(openRightAfter, withHistory).flatMap((g) => g.value), ["open"]);
  const openRightBefore = { ...openRightAfter, filters: [{ type: "moment" as const, key: "right_before", args: ["open", openType, 1] }] };
  assert.deepEqual(executeProgram(openRightBefore, withHistory).flatMap((g) => g.value), ["closed"]);

  // answerWithPrograms: a trajectory without a recording fails its questions alone
  const question = { question_id: "q1", trajectory: "elsewhere", program: { target: "fridge", filters: [], query: { type: "countObjects", modifier: null } } } as unknown as TagQuestion;
  const [missing] = await answerWithPrograms([question], new Map());
  assert.equal(missing?.answer, null);
  assert.match(missing?.error ?? "", /no recording of trajectory elsewhere/);
});
