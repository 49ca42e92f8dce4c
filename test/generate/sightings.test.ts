import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { loadTrajectoryLog, type TagQuestion } from "../../src/data/index.js";
import { openEpisode } from "../../src/episodes/index.js";
import { buildTagDataset, checkSeenSet, maskSightings, SEEN_MIN_PIXELS, SEEN_RANGE } from "../../src/generate/index.js";
import { temporaryDir } from "../helpers/paths.js";
import { copyRecording } from "../helpers/recordings.js";

describe("maskSightings", () => {
  test("an object is seen at a step when its instance mask has enough pixels within range; questions refer only to objects seen, and record where", async () => {
    const out = join(temporaryDir(), "rec");
    await copyRecording({ seed: 2, tasks: ["cool"], width: 128, height: 96 }, out);
    const log = await loadTrajectoryLog(join(out, "trajectory.json"));
    const sightings = await maskSightings(log, join(out, "frames"));
    assert.ok(sightings && sightings.size > 5);

    // recount one frame's pixels by hand
    const episode = await openEpisode(join(out, "frames"));
    const step = Math.floor(log.steps.length / 2);
    const frame = await episode.frame(log.steps[step]!.frame!);
    for (const o of log.objects) {
      const maskId = Number(o.id.split("-").at(-1));
      let n = 0;
      for (let p = 0; p < frame.masks!.ids.length; p++) if (frame.masks!.ids[p] === maskId && frame.depth![p]! >= 0.1 && frame.depth![p]! <= SEEN_RANGE) n++;
      assert.equal(sightings.get(o.id)?.[step] === 1, n >= SEEN_MIN_PIXELS, `${o.id}: ${n} pixels`);
    }
    // the fridge the agent opened is in view when it opens it
    const open = log.events.find((e) => e.type === "open")!;
    assert.equal(sightings.get(open.object)?.[open.step], 1);

    const dataset = buildTagDataset([{ log, sightings }], { perTrajectory: 12, seed: 0 });
    assert.ok(dataset.questions.length > 3);
    assert.equal(dataset.stats.seen.neverSeen, 0);
    assert.equal(dataset.stats.seen.unrecorded, 0);
    for (const q of dataset.questions) {
      assert.ok(q.seen && q.seen.length > 0, q.question_id);
      for (const s of q.seen) {
        assert.ok(s.steps.length > 0 && s.steps.every((t) => t <= s.step), `${q.question_id}: ${s.object}`);
        assert.deepEqual(s.frames, s.steps.map((t) => log.steps[t]!.frame));
        assert.ok(s.steps.every((t) => sightings.get(s.object)?.[t] === 1 || log.steps[t]!.held === s.object), `${q.question_id}: ${s.object} seen in its frames`);
      }
    }
  });
});

describe("checkSeenSet", () => {
  test("counts objects with no sighting and answer objects no record accounts for", () => {
    const base = { question_id: "q", structured_answer: [{ predicate: "", objects: [{ type: "cup", position: [1, 0, -2] }], value: 1 }], grounded: null } as unknown as TagQuestion;
    const seen = { object: "cup-3", type: "cup", position: [1, 0, -2] as [number, number, number], step: 4, steps: [2, 4] };
    assert.deepEqual(checkSeenSet([{ ...base, seen: [seen] }]), { questions: 1, unrecorded: 0, objects: 1, neverSeen: 0, examples: [] });
    assert.equal(checkSeenSet([{ ...base, seen: [{ ...seen, steps: [] }] }]).neverSeen, 1);
    assert.equal(checkSeenSet([{ ...base, seen: [{ ...seen, position: [3, 0, -2] }] }]).neverSeen, 1);
    assert.equal(checkSeenSet([base]).unrecorded, 1);
  });
});
