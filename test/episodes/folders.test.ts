import assert from "node:assert/strict";
import { copyFileSync, mkdirSync, readFileSync, rmSync, truncateSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { before, describe, it } from "node:test";
import sharp from "sharp";
import { UserError, type Camera, type Frame, type Pose } from "../../src/core/index.js";
import { openEpisode, scannetPoseToEqakit } from "../../src/episodes/index.js";
import { temporaryDir } from "../helpers/paths.js";
import { HM3D, SCANNET, SCANNET_POSE_LOOKING_X, matrixText, writeDepth16, writeHm3dEpisode, writeRgb, writeScannetEpisode } from "./fixtures.js";

/** A depth pixel back-projected into eqakit's world: OpenGL camera axes, then the camera-to-world pose. */
function backProject(camera: Camera, pose: Pose, u: number, v: number, z: number): [number, number, number] {
  const camX = ((u - camera.cx) * z) / camera.fx;
  const camY = -((v - camera.cy) * z) / camera.fy;
  const camZ = -z;
  const p = [camX, camY, camZ, 1];
  const world = [0, 1, 2].map((r) => p.reduce((sum, value, c) => sum + pose[r * 4 + c]! * value, 0));
  return [world[0]!, world[1]!, world[2]!];
}

async function rejects(promise: Promise<unknown>, ...patterns: (string | RegExp)[]): Promise<string> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof UserError, `expected a UserError, got ${String(error)}`);
    for (const pattern of patterns) {
      if (typeof pattern === "string") assert.ok(error.message.includes(pattern), `"${error.message}" should mention ${pattern}`);
      else assert.match(error.message, pattern);
    }
    return error.message;
  }
  assert.fail("expected a UserError");
}

const root = temporaryDir("eqakit-episodes-");
const hm3dDir = join(root, "frames", "hm3d-v0", "000-hm3d-TEST");
const scannetDir = join(root, "frames", "scannet-v0", "002-scannet-scene0000_00");
let hm3dPoses: number[][] = [];

before(async () => {
  ({ poses: hm3dPoses } = await writeHm3dEpisode(hm3dDir));
  await writeScannetEpisode(scannetDir);
});

/** A copy of a fixture episode to damage. */
function copyEpisode(from: string, name: string, files: string[]): string {
  const dir = join(root, "damaged", name);
  mkdirSync(dir, { recursive: true });
  for (const file of files) copyFileSync(join(from, file), join(dir, file));
  return dir;
}

describe("HM3D frame folders", () => {
  it("opens the layout: kind, frame count, the fy correction in the notes", async () => {
    const episode = await openEpisode(hm3dDir, "hm3d-v0/000-hm3d-TEST");
    assert.equal(episode.kind, "hm3d");
    assert.equal(episode.id, "hm3d-v0/000-hm3d-TEST");
    assert.equal(episode.path, hm3dDir);
    assert.equal(episode.frameCount, HM3D.frames);
    assert.equal(episode.timestamps, undefined);
    assert.equal(episode.notes.length, 2, episode.notes.join("\n"));
    assert.match(episode.notes[0]!, /^intrinsic_color\.txt: fy 114\.17 is OpenEQA's linear-vfov approximation; corrected to 96\.00/);
    assert.match(episode.notes[1]!, /^intrinsic_depth\.txt: fy 114\.17/);
  });

  it("names a frame's colour file without reading it (what a report links to), as frame() names it", async () => {
    const episode = await openEpisode(hm3dDir);
    for (let i = 0; i < episode.frameCount; i++) assert.equal(episode.rgbPath!(i), (await episode.frame(i)).rgbPath);
    assert.throws(() => episode.rgbPath!(episode.frameCount), RangeError);
  });

  it("corrects the reference's fy to square pixels (fy = fx) and keeps the rest of the intrinsics", async () => {
    assert.ok(Math.abs(HM3D.fyReference - 114.17) < 0.01, `reference fy ${HM3D.fyReference}`);
    const episode = await openEpisode(hm3dDir);
    const frame = await episode.frame(0);
    assert.deepEqual(frame.camera, { width: 192, height: 108, fx: 96, fy: 96, cx: 96, cy: 54 });
    assert.deepEqual(frame.depthCamera, frame.camera);
  });

  it("the 1920×1080 case of the issue: fy ≈ 1141.7 becomes 960", async () => {
    const dir = join(root, "hm3d-fullsize");
    mkdirSync(dir, { recursive: true });
    const vfov = (Math.PI / 2) * (1080 / 1920);
    const fy = 1080 / Math.tan(vfov / 2) / 2;
    assert.equal(fy.toFixed(1), "1141.7");
    writeFileSync(join(dir, "intrinsic_color.txt"), matrixText([960, 0, 960, 0, 0, fy, 540, 0, 0, 0, 1, 0, 0, 0, 0, 1]));
    await writeRgb(join(dir, "00000-rgb.png"), 64, 36, 0);
    const episode = await openEpisode(dir, "hm3d-v0/fullsize");
    assert.match(episode.notes.join("\n"), /fy 1141\.73 is OpenEQA's linear-vfov approximation; corrected to 960\.00/);
    const frame = await episode.frame(0);
    assert.equal(frame.camera?.fy, 960);
  });

  it("leaves calibrated intrinsics alone", async () => {
    const dir = join(root, "hm3d-square");
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, "intrinsic_color.txt"), matrixText([96, 0, 96, 0, 0, 96, 54, 0, 0, 0, 1, 0, 0, 0, 0, 1]));
    await writeRgb(join(dir, "00000-rgb.png"), 192, 108, 0);
    const episode = await openEpisode(dir);
    assert.deepEqual(episode.notes, []);
    assert.equal((await episode.frame(0)).camera?.fy, 96);
  });

  it("reads depth in metres (value / 65535 × 10) and the pose as written", async () => {
    const episode = await openEpisode(hm3dDir);
    const frame = await episode.frame(2);
    assert.equal(frame.index, 2);
    assert.equal(frame.rgbPath, join(hm3dDir, "00002-rgb.png"));
    assert.ok(frame.depth);
    assert.equal(frame.depth.length, HM3D.width * HM3D.height);
    // the floor 1.5 m below, at row v: z = 1.5 · 96 / (v − 54); row 102 is 3 m away
    const z = frame.depth[102 * HM3D.width + 40]!;
    assert.ok(Math.abs(z - 3) <= 10 / 65535, `depth ${z}`);
    assert.equal(frame.depth[10 * HM3D.width + 40], 0, "above the horizon: unknown");
    assert.deepEqual(Array.from(frame.pose!), hm3dPoses[2]!.map((v) => Number(v.toFixed(6))));
  });

  it("back-projects every depth pixel onto the floor (y = 0) with the corrected camera and the pose", async () => {
    const episode = await openEpisode(hm3dDir);
    for (const index of [0, 3]) {
      const frame: Frame = await episode.frame(index);
      let checked = 0;
      let worst = 0;
      for (let v = 0; v < HM3D.height; v++) {
        for (let u = 0; u < HM3D.width; u += 7) {
          const z = frame.depth![v * HM3D.width + u]!;
          if (z === 0) continue;
          const [, y] = backProject(frame.camera!, frame.pose!, u, v, z);
          worst = Math.max(worst, Math.abs(y));
          checked++;
        }
      }
      assert.ok(checked > 500, `${checked} pixels`);
      assert.ok(worst < 0.002, `floor off by ${worst} m`);
    }
  });

  it("prepares frames in the order asked, duplicates included, each once", async () => {
    const episode = await openEpisode(hm3dDir);
    const images = await episode.images([3, 0, 3, 1]);
    assert.deepEqual(images.map((i) => i.index), [3, 0, 3, 1]);
    assert.equal(images[0]!.sha256, images[2]!.sha256);
    assert.notEqual(images[0]!.sha256, images[1]!.sha256);
    for (const image of images) {
      assert.equal(image.mediaType, "image/png");
      assert.deepEqual([image.width, image.height], [192, 108], "never enlarged");
    }
    const small = await episode.images([1], { maxSide: 64, format: "jpeg", quality: 70 });
    assert.deepEqual([small[0]!.width, small[0]!.height, small[0]!.mediaType], [64, 36, "image/jpeg"]);
    assert.deepEqual(await episode.images([]), []);
    await assert.rejects(episode.images([4]), RangeError);
    await assert.rejects(episode.frame(-1), RangeError);
  });
});

describe("ScanNet frame folders", () => {
  it("opens the layout, notes the conversion and the invalid pose", async () => {
    const episode = await openEpisode(scannetDir, "scannet-v0/002-scannet-scene0000_00");
    assert.equal(episode.kind, "scannet");
    assert.equal(episode.frameCount, 3);
    assert.equal(episode.notes.length, 2, episode.notes.join("\n"));
    assert.match(episode.notes[0]!, /converted from ScanNet's convention \(OpenCV camera axes, z-up world\) to eqakit's \(OpenGL camera axes, y-up world\)/);
    assert.match(episode.notes[1]!, /^1 of 3 frames have an invalid pose \(-inf or NaN\).*frames 1\)$/);
  });

  it("converts a known pose: camera at (1, 2, 1.4) z-up looking along +x becomes (1, 1.4, −2) looking along +x", async () => {
    const episode = await openEpisode(scannetDir);
    const frame = await episode.frame(0);
    // eqakit: camera right = world +z, up = +y, the camera looks along −z_cam = world +x
    const expected = [0, 0, -1, 1, 0, 1, 0, 1.4, 1, 0, 0, -2, 0, 0, 0, 1];
    const got = Array.from(frame.pose!);
    got.forEach((value, i) => assert.ok(Math.abs(value - expected[i]!) < 1e-9, `pose ${got.join(",")}`));
    // a point 3 m straight ahead: (4, 2, 1.4) in ScanNet's world, (4, 1.4, −2) in eqakit's
    const ahead = backProject(frame.camera!, frame.pose!, frame.camera!.cx, frame.camera!.cy, 3);
    ahead.forEach((value, i) => assert.ok(Math.abs(value - [4, 1.4, -2][i]!) < 1e-9, `ahead ${ahead.join(",")}`));
    // the same transform, stated: W · T · diag(1, −1, −1, 1)
    assert.deepEqual(Array.from(scannetPoseToEqakit(SCANNET_POSE_LOOKING_X(1, 2, 1.4))), got);
  });

  it("a lost pose (-inf) is null, and the frame is still an image", async () => {
    const episode = await openEpisode(scannetDir);
    const frame = await episode.frame(1);
    assert.equal(frame.pose, null);
    assert.ok(frame.depth);
    const [image] = await episode.images([1]);
    assert.equal(image!.index, 1);
  });

  it("reads depth in millimetres at the depth camera's own size and intrinsics", async () => {
    const episode = await openEpisode(scannetDir);
    const frame = await episode.frame(2);
    assert.deepEqual(frame.camera, { width: SCANNET.rgbWidth, height: SCANNET.rgbHeight, ...SCANNET.color });
    assert.deepEqual(frame.depthCamera, { width: SCANNET.depthWidth, height: SCANNET.depthHeight, ...SCANNET.depth });
    assert.equal(frame.depth!.length, SCANNET.depthWidth * SCANNET.depthHeight);
    // row 59: z = 1.4 · 72.5 / (59 − 29.9) = 3.488 m, stored as 3488 mm
    const z = frame.depth![59 * SCANNET.depthWidth + 10]!;
    assert.ok(Math.abs(z - 3.488) < 1e-6, `depth ${z}`);
    let worst = 0;
    for (let v = 31; v < SCANNET.depthHeight; v++) {
      for (let u = 0; u < SCANNET.depthWidth; u += 5) {
        const depth = frame.depth![v * SCANNET.depthWidth + u]!;
        if (depth === 0) continue;
        const [, y] = backProject(frame.depthCamera!, frame.pose!, u, v, depth);
        worst = Math.max(worst, Math.abs(y));
      }
    }
    assert.ok(worst < 0.005, `floor (ScanNet z = 0) should be eqakit's y = 0, off by ${worst} m`);
  });

  it("finds the kind from six-digit names when the id does not say", async () => {
    const episode = await openEpisode(scannetDir, "my-scan");
    assert.equal(episode.kind, "scannet");
  });
});

describe("folders of plain images", () => {
  it("takes .png/.jpg files in natural name order, with no geometry", async () => {
    const dir = join(root, "photos");
    mkdirSync(dir, { recursive: true });
    for (const [name, seed] of [["img10.jpg", 10], ["img2.png", 2], ["img1.jpg", 1]] as const) {
      const file = join(dir, name);
      await writeRgb(join(dir, "tmp.png"), 40, 30, seed);
      await sharp(join(dir, "tmp.png")).toFormat(name.endsWith(".jpg") ? "jpeg" : "png").toFile(file);
    }
    rmSync(join(dir, "tmp.png"));
    writeFileSync(join(dir, "notes.txt"), "not a frame");
    const episode = await openEpisode(dir);
    assert.equal(episode.kind, "images");
    assert.equal(episode.id, "photos");
    assert.equal(episode.frameCount, 3);
    const frames = await Promise.all([0, 1, 2].map((i) => episode.frame(i)));
    assert.deepEqual(frames.map((f) => f.rgbPath), ["img1.jpg", "img2.png", "img10.jpg"].map((n) => join(dir, n)));
    assert.deepEqual(frames[0], { index: 0, rgbPath: join(dir, "img1.jpg") });
    const images = await episode.images([2, 0]);
    assert.deepEqual(images.map((i) => [i.index, i.width, i.height]), [[2, 40, 30], [0, 40, 30]]);
  });
});

describe("bad episodes: the error names the episode and the file", () => {
  it("a missing folder", async () => {
    const missing = join(root, "frames", "hm3d-v0", "999-hm3d-MISSING");
    await rejects(openEpisode(missing, "hm3d-v0/999-hm3d-MISSING"), "episode hm3d-v0/999-hm3d-MISSING", missing, "no episode folder or video");
  });

  it("an empty folder", async () => {
    const empty = join(root, "empty-episode");
    mkdirSync(empty, { recursive: true });
    writeFileSync(join(empty, "intrinsic_color.txt"), "1 0 0\n0 1 0\n0 0 1\n");
    await rejects(openEpisode(empty, "hm3d-v0/empty"), "episode hm3d-v0/empty", empty, "has no frames");
  });

  it("a truncated colour frame fails when it is decoded", async () => {
    const dir = copyEpisode(hm3dDir, "truncated", ["00000-rgb.png", "00001-rgb.png"]);
    const file = join(dir, "00001-rgb.png");
    truncateSync(file, Math.floor(readFileSync(file).length / 2));
    const episode = await openEpisode(dir, "hm3d-v0/truncated");
    assert.equal((await episode.images([0]))[0]!.index, 0);
    await rejects(episode.images([0, 1]), "episode hm3d-v0/truncated, frame 1", file, "cannot read the image");
  });

  it("a frame that is not an image fails at opening", async () => {
    const dir = copyEpisode(hm3dDir, "garbage", ["00000-rgb.png"]);
    const file = join(dir, "00001-rgb.png");
    writeFileSync(file, "this is not a PNG");
    await rejects(openEpisode(dir, "hm3d-v0/garbage"), "episode hm3d-v0/garbage", file);
  });

  it("an HM3D depth image whose size differs from its colour frame", async () => {
    const dir = copyEpisode(hm3dDir, "depth-size", ["00000-rgb.png", "00000-depth.png", "00001-rgb.png"]);
    const file = join(dir, "00001-depth.png");
    await writeDepth16(file, 96, 54, new Uint16Array(96 * 54));
    await rejects(openEpisode(dir, "hm3d-v0/depth-size"), "episode hm3d-v0/depth-size", file, "96×54", "00001-rgb.png is 192×108");
  });

  it("a ScanNet depth image whose size differs from the episode's other depth images", async () => {
    const dir = copyEpisode(scannetDir, "scannet-depth-size", ["000000-rgb.png", "000000-depth.png", "000001-rgb.png"]);
    const file = join(dir, "000001-depth.png");
    await writeDepth16(file, 40, 30, new Uint16Array(40 * 30));
    await rejects(openEpisode(dir, "scannet-v0/bad"), "episode scannet-v0/bad", file, "40×30", "other depth images are 80×60");
  });

  it("an 8-bit depth image", async () => {
    const dir = copyEpisode(hm3dDir, "depth-8bit", ["00000-rgb.png"]);
    const file = join(dir, "00000-depth.png");
    await sharp({ create: { width: 192, height: 108, channels: 3, background: "#808080" } }).png().toFile(file);
    await rejects(openEpisode(dir, "hm3d-v0/depth-8bit"), file, "not a 16-bit grey image");
  });

  it("a pose file that is 3×4", async () => {
    const dir = copyEpisode(hm3dDir, "pose-3x4", ["00000-rgb.png", "00000.txt", "00001-rgb.png"]);
    const file = join(dir, "00001.txt");
    writeFileSync(file, matrixText(hm3dPoses[1]!, 3, 4));
    await rejects(openEpisode(dir, "hm3d-v0/pose-3x4"), "episode hm3d-v0/pose-3x4", file, "3×4 matrix, not a 4×4");
  });

  it("a pose file with a ragged row or a word", async () => {
    const dir = copyEpisode(hm3dDir, "pose-ragged", ["00000-rgb.png"]);
    const file = join(dir, "00000.txt");
    writeFileSync(file, "1 0 0 0\n0 1 0\n0 0 1 0\n0 0 0 1\n");
    await rejects(openEpisode(dir, "hm3d-v0/pose-ragged"), file, "line 2 has 3 numbers");
    writeFileSync(file, "1 0 0 0\n0 1 0 zero\n0 0 1 0\n0 0 0 1\n");
    await rejects(openEpisode(dir, "hm3d-v0/pose-ragged"), file, 'line 2: "zero" is not a number');
  });

  it("depth or poses for only some frames", async () => {
    const dir = copyEpisode(hm3dDir, "partial", ["00000-rgb.png", "00000-depth.png", "00000.txt", "00001-rgb.png", "00001.txt"]);
    await rejects(openEpisode(dir, "hm3d-v0/partial"), "episode hm3d-v0/partial", join(dir, "00001-depth.png"), "1 of 2 frames have no depth image");
  });

  it("is a file given where a folder is expected: taken as a video, and refused as one", async () => {
    const file = join(root, "not-a-video.mp4");
    writeFileSync(file, "hello");
    await rejects(openEpisode(file, "assets/not-a-video"), "episode assets/not-a-video", file);
  });
});
