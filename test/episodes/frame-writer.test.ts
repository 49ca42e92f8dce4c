import { test } from "node:test";
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { FrameFolderWriter, hm3dDepthValues, openEpisode } from "../../src/episodes/index.js";
import { HouseholdEnvironment } from "../../src/sim/index.js";
import { temporaryDir } from "../helpers/paths.js";

test("simulator observations written by FrameFolderWriter open as an HM3D-style episode with depth, poses and masks", async () => {
  const env = HouseholdEnvironment.fromSeed(3, { width: 64, height: 48 });
  const dir = join(await temporaryDir(), "frames");
  const writer = new FrameFolderWriter(dir);
  const first = env.observeNow();
  await writer.write(first);
  env.actNow({ type: "turn_left" });
  const second = env.observeNow();
  await writer.write(second);
  assert.equal(writer.frames, 2);

  const episode = await openEpisode(dir);
  assert.equal(episode.kind, "hm3d");
  assert.equal(episode.frameCount, 2);
  const frame = await episode.frame(1);
  assert.ok(frame.depth && frame.pose && frame.masks);
  for (let i = 0; i < 16; i++) assert.ok(Math.abs((frame.pose[i] as number) - (second.pose[i] as number)) < 1e-6);
  // depth within the 16-bit encoding's step (10 m / 65535)
  let worst = 0;
  for (let i = 0; i < second.depth.length; i++) worst = Math.max(worst, Math.abs((frame.depth[i] as number) - (second.depth[i] as number)));
  assert.ok(worst < 10 / 65535 + 1e-6, `depth off by ${worst}`);
  assert.deepEqual(Array.from(frame.masks.ids), Array.from(second.masks!.ids));
  const labels = JSON.parse(await readFile(join(dir, "instance_labels.json"), "utf8")) as Record<string, string>;
  for (const [id, label] of Object.entries({ ...first.masks!.labels, ...second.masks!.labels })) assert.equal(labels[id], label);
});

test("hm3dDepthValues is OpenEQA's (depth / 10 * 65535).astype(np.uint16) on float32 metres, 10 m and beyond held at 65535", () => {
  const metres = Float32Array.from([0.15274280309677124, 0.16357670724391937, 0.3054856061935425, 9.99999, 10, 0, Number.NaN, -1, 12.5]);
  // numpy 2.4.6 gives 1001, 1072, 2002, 65534, 65535, 0 for the first six (float32 steps; in double the first three are one less);
  // NaN and negative depth are unknown (0); numpy wraps 12.5 m around to 16382, eqakit holds it at the largest value
  assert.deepEqual(Array.from(hm3dDepthValues(metres)), [1001, 1072, 2002, 65534, 65535, 0, 0, 0, 65535]);
});
