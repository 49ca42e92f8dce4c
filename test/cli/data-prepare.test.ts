import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { cpSync, existsSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync, truncateSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { deflateSync } from "node:zlib";
import sharp from "sharp";
import { cliEnv, runCli } from "../helpers/cli.js";
import { killMidway } from "../helpers/kill.js";
import { temporaryDir } from "../helpers/paths.js";
import { writeSensFile, type SensFrameInput } from "../episodes/fixtures.js";

/** ScanNet's colour and depth intrinsics of scene0000_00, as float32 matrices. */
const INTRINSIC_COLOR = [1170.187988, 0, 647.75, 0, 0, 1170.187988, 483.75, 0, 0, 0, 1, 0, 0, 0, 0, 1];
const INTRINSIC_DEPTH = [571.623718, 0, 319.5, 0, 0, 571.623718, 239.5, 0, 0, 0, 1, 0, 0, 0, 0, 1];
/** The text numpy writes for them (`np.savetxt(f, row[np.newaxis], fmt="%f")` of float32 rows). */
const INTRINSIC_COLOR_TEXT = "1170.187988 0.000000 647.750000 0.000000\n0.000000 1170.187988 483.750000 0.000000\n0.000000 0.000000 1.000000 0.000000\n0.000000 0.000000 0.000000 1.000000\n";
const INTRINSIC_DEPTH_TEXT = "571.623718 0.000000 319.500000 0.000000\n0.000000 571.623718 239.500000 0.000000\n0.000000 0.000000 1.000000 0.000000\n0.000000 0.000000 0.000000 1.000000\n";
const IDENTITY_TEXT = "1.000000 0.000000 0.000000 0.000000\n0.000000 1.000000 0.000000 0.000000\n0.000000 0.000000 1.000000 0.000000\n0.000000 0.000000 0.000000 1.000000\n";
/** A pose with the values where Python's "%f" and JavaScript's toFixed part: ties (0.0078125 = 2^-7), -0, tiny negatives, -inf (ScanNet's lost tracking). */
const TRICKY_POSE = [0.0078125, -0.0078125, -0, 1.5, -1e-9, 0.1, -0.70710677, 2.2, 0.0000005, 0.0000015, 1, -3.25, -Infinity, -Infinity, -Infinity, -Infinity];
/** numpy 2.4's output for it, by `python3 -c "import numpy as np; …savetxt…"` on the float32 values. */
const TRICKY_POSE_TEXT = "0.007812 -0.007812 -0.000000 1.500000\n-0.000000 0.100000 -0.707107 2.200000\n0.000000 0.000002 1.000000 -3.250000\n-inf -inf -inf -inf\n";

function pose(index: number): number[] {
  return [1, 0, 0, index * 0.25, 0, 1, 0, -index / 3, 0, 0, 1, 1.5, 0, 0, 0, 1];
}

function depthValues(width: number, height: number, index: number): Uint16Array {
  const values = new Uint16Array(width * height);
  for (let i = 0; i < values.length; i++) values[i] = (i * 37 + index * 1009) % 65536;
  return values;
}

async function jpeg(width: number, height: number, index: number): Promise<Buffer> {
  const pixels = Buffer.alloc(width * height * 3);
  for (let y = 0; y < height; y++)
    for (let x = 0; x < width; x++) {
      const o = (y * width + x) * 3;
      pixels[o] = (x * 255) / width;
      pixels[o + 1] = (y * 255) / height;
      pixels[o + 2] = (x + y + index * 40) % 256;
    }
  return sharp(pixels, { raw: { width, height, channels: 3 } }).jpeg({ quality: 90 }).toBuffer();
}

interface Scan {
  scan: string;
  folder: "scans" | "scans_test";
  episode: string;
  count: number;
  color: [number, number];
  depth: [number, number];
  jpegs: Buffer[];
}

/** Scans made here: ScanNet's sizes for two short ones, a long one (603 frames) drawn small to stay quick. */
const SCANS: Scan[] = [
  { scan: "scene0001_00", folder: "scans", episode: "scannet-v0/000-scannet-scene0001_00", count: 5, color: [1296, 968], depth: [640, 480], jpegs: [] },
  { scan: "scene0002_00", folder: "scans", episode: "scannet-v0/001-scannet-scene0002_00", count: 603, color: [96, 72], depth: [64, 48], jpegs: [] },
  { scan: "scene0707_00", folder: "scans_test", episode: "scannet-v0/002-scannet-scene0707_00", count: 3, color: [1296, 968], depth: [640, 480], jpegs: [] },
];

function frameOf(scan: Scan, index: number): SensFrameInput {
  const [w, h] = scan.depth;
  const values = depthValues(w, h, index);
  return { pose: scan.scan === "scene0001_00" && index === 1 ? TRICKY_POSE : pose(index), color: scan.jpegs[index % scan.jpegs.length]!, depth: deflateSync(Buffer.from(values.buffer)) };
}

function writeScan(root: string, scan: Scan, extra: Partial<Parameters<typeof writeSensFile>[1]> = {}): string {
  const dir = join(root, scan.folder, scan.scan);
  mkdirSync(dir, { recursive: true });
  const path = join(dir, `${scan.scan}.sens`);
  writeSensFile(path, {
    colorWidth: scan.color[0], colorHeight: scan.color[1], depthWidth: scan.depth[0], depthHeight: scan.depth[1],
    intrinsicColor: INTRINSIC_COLOR, intrinsicDepth: INTRINSIC_DEPTH, count: scan.count, frames: (i) => frameOf(scan, i), ...extra,
  });
  return path;
}

function benchmarkFile(dir: string, episodes: string[]): string {
  const path = join(dir, "benchmark.json");
  const records = [...episodes, ...episodes, "hm3d-v0/003-hm3d-BFRyYbPCCPE"].map((episode_history, i) => ({ question_id: `q${i}`, question: "What is on the table?", answer: "a cup", category: "object recognition", episode_history }));
  writeFileSync(path, JSON.stringify(records));
  return path;
}

function files(dir: string): Map<string, Buffer> {
  const out = new Map<string, Buffer>();
  const walk = (d: string, prefix: string): void => {
    for (const name of readdirSync(d).sort()) {
      const full = join(d, name);
      if (statSync(full).isDirectory()) walk(full, `${prefix}${name}/`);
      else out.set(`${prefix}${name}`, readFileSync(full));
    }
  };
  walk(dir, "");
  return out;
}

function expectedNames(scan: Scan, rgbOnly: boolean): string[] {
  const names: string[] = rgbOnly ? [] : ["extrinsic_color.txt", "extrinsic_depth.txt", "intrinsic_color.txt", "intrinsic_depth.txt"];
  for (let i = 0; i < Math.min(600, scan.count); i++) {
    const stem = String(i).padStart(6, "0");
    names.push(...(rgbOnly ? [`${stem}-rgb.png`] : [`${stem}-depth.png`, `${stem}-rgb.png`, `${stem}.txt`]));
  }
  return names.map((n) => `${scan.episode}/${n}`).sort();
}

describe("eqa data prepare openeqa --scannet", () => {
  const home = temporaryDir();
  const root = join(home, "scannet");
  let benchmark = "";
  const frames = join(home, "frames");

  before(async () => {
    for (const scan of SCANS) {
      scan.jpegs = await Promise.all([0, 1, 2].map((i) => jpeg(scan.color[0], scan.color[1], i)));
      writeScan(root, scan);
    }
    benchmark = benchmarkFile(home, SCANS.map((s) => s.episode));
  });
  after(() => rmSync(home, { recursive: true, force: true }));

  test("writes the files OpenEQA's extract-frames.py writes: the first 600 frames, same names, pixels, depth values, pose and intrinsic text, nothing more", async () => {
    const result = await runCli(["data", "prepare", "openeqa", "--benchmark", benchmark, "--scannet", root, "--out", frames], cliEnv(home));
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /3 of 3 ScanNet episodes .*: 608 frames written, 0 kept from before/);
    // progress per scan as well as over all scans: off a terminal, a line each scan as it ends
    for (const scan of SCANS) assert.match(result.stderr, new RegExp(`^${scan.episode}: ${Math.min(scan.count, 600)}/${Math.min(scan.count, 600)} frames$`, "m"));
    const written = files(frames);
    assert.deepEqual([...written.keys()].sort(), SCANS.flatMap((s) => expectedNames(s, false)).sort());
    for (const scan of SCANS) {
      const at = (name: string): Buffer => written.get(`${scan.episode}/${name}`)!;
      assert.equal(at("intrinsic_color.txt").toString(), INTRINSIC_COLOR_TEXT);
      assert.equal(at("intrinsic_depth.txt").toString(), INTRINSIC_DEPTH_TEXT);
      assert.equal(at("extrinsic_color.txt").toString(), IDENTITY_TEXT);
      assert.equal(at("extrinsic_depth.txt").toString(), IDENTITY_TEXT);
      for (const index of [0, 1, Math.min(600, scan.count) - 1]) {
        const stem = String(index).padStart(6, "0");
        const frame = frameOf(scan, index);
        const colour = await sharp(at(`${stem}-rgb.png`)).raw().toBuffer({ resolveWithObject: true });
        const decoded = await sharp(frame.color).raw().toBuffer({ resolveWithObject: true });
        assert.deepEqual([colour.info.width, colour.info.height, colour.info.channels], [scan.color[0], scan.color[1], 3]);
        assert.ok(colour.data.equals(decoded.data), `${scan.scan} frame ${index}: the JPEG's decoded pixels`);
        const depth = await sharp(at(`${stem}-depth.png`)).toColourspace("grey16").raw({ depth: "ushort" }).toBuffer({ resolveWithObject: true });
        assert.deepEqual([depth.info.width, depth.info.height, depth.info.channels], [scan.depth[0], scan.depth[1], 1]);
        const values = new Uint16Array(depth.data.buffer, depth.data.byteOffset, depth.data.length / 2);
        assert.deepEqual(values, depthValues(scan.depth[0], scan.depth[1], index), `${scan.scan} frame ${index}: depth values`);
        const poseText = at(`${stem}.txt`).toString();
        if (scan.scan === "scene0001_00" && index === 1) assert.equal(poseText, TRICKY_POSE_TEXT);
        else assert.equal(poseText, `1.000000 0.000000 0.000000 ${(index * 0.25).toFixed(6)}\n0.000000 1.000000 0.000000 ${index === 0 ? "-0.000000" : Math.fround(-index / 3).toFixed(6)}\n0.000000 0.000000 1.000000 1.500000\n0.000000 0.000000 0.000000 1.000000\n`);
      }
    }
  });

  test("--rgb-only writes colour frames only, as the reference's flag", async () => {
    const out = join(home, "rgb-only");
    const result = await runCli(["data", "prepare", "openeqa", "--benchmark", benchmark, "--scannet", root, "--out", out, "--rgb-only"], cliEnv(home));
    assert.equal(result.code, 0, result.stderr);
    assert.deepEqual([...files(out).keys()].sort(), SCANS.flatMap((s) => expectedNames(s, true)).sort());
  });

  test("--png-compression 0 writes the same names, pixels, depth values and text as the default, in larger PNGs", async () => {
    const out = join(home, "stored");
    const result = await runCli(["data", "prepare", "openeqa", "--benchmark", benchmark, "--scannet", root, "--out", out, "--png-compression", "0"], cliEnv(home));
    assert.equal(result.code, 0, result.stderr);
    const stored = files(out);
    const whole = files(frames);
    assert.deepEqual([...stored.keys()].sort(), [...whole.keys()].sort());
    for (const [name, bytes] of whole) {
      const other = stored.get(name)!;
      if (name.endsWith(".txt")) {
        assert.ok(other.equals(bytes), `${name}: the same text`);
        continue;
      }
      if (!name.startsWith(SCANS[0]!.episode)) continue;
      if (name.endsWith("-rgb.png")) assert.ok(other.length > bytes.length, `${name}: stored, larger than at level 1`);
      const decode = (png: Buffer): Promise<Buffer> => (name.endsWith("-depth.png") ? sharp(png).toColourspace("grey16").raw({ depth: "ushort" }).toBuffer() : sharp(png).raw().toBuffer());
      assert.ok((await decode(other)).equals(await decode(bytes)), `${name}: the same decoded pixels`);
    }
    const refused = await runCli(["data", "prepare", "openeqa", "--benchmark", benchmark, "--scannet", root, "--out", out, "--png-compression", "10"], cliEnv(home));
    assert.equal(refused.code, 2);
    assert.match(refused.stderr, /--png-compression/);
  });

  test("a run killed with SIGKILL and run again writes the same files as an uninterrupted run", async () => {
    const out = join(home, "killed");
    const args = ["data", "prepare", "openeqa", "--benchmark", benchmark, "--scannet", root, "--out", out, "--concurrency", "1"];
    const long = join(out, SCANS[1]!.episode);
    await killMidway(args, cliEnv(home), () => existsSync(long) && readdirSync(long).length > 300);
    const resumed = await runCli(args, cliEnv(home));
    assert.equal(resumed.code, 0, resumed.stderr);
    assert.match(resumed.stdout, /kept from before/);
    assert.doesNotMatch(resumed.stdout, / 0 kept from before/);
    const again = files(out);
    const whole = files(frames);
    assert.deepEqual([...again.keys()].sort(), [...whole.keys()].sort());
    for (const [name, bytes] of whole) assert.ok(again.get(name)!.equals(bytes), `${name} differs after the resumed run`);
  });

  test("a truncated scan, a wrong version and a missing scan fail alone, named with file and frame (exit 1); the others are written", async () => {
    const broken = join(home, "broken");
    const scans: Scan[] = SCANS.map((s) => ({ ...s, scan: s.scan.replace("_00", "_01"), episode: s.episode.replace("_00", "_01") }));
    const truncated = writeScan(broken, scans[0]!);
    truncateSync(truncated, statSync(truncated).size - 1000); // inside the last (fifth) frame
    writeScan(broken, scans[1]!, { version: 5 });
    const missing = { ...scans[2]!, scan: "scene0708_01", episode: "scannet-v0/003-scannet-scene0708_01" };
    writeScan(broken, { ...scans[2]!, count: 2 });
    const bench = benchmarkFile(broken, [scans[0]!.episode, scans[1]!.episode, scans[2]!.episode, missing.episode]);
    const out = join(broken, "frames");
    const result = await runCli(["data", "prepare", "openeqa", "--benchmark", bench, "--scannet", broken, "--out", out], cliEnv(home));
    assert.equal(result.code, 1, result.stderr);
    assert.match(result.stdout, new RegExp(`${truncated.replaceAll("/", "\\/")}: frame 4 is cut short: the file ends inside its depth bytes`));
    assert.match(result.stdout, /scene0002_01\.sens: \.sens format version 5, expected 4/);
    assert.match(result.stdout, /scene0708_01\.sens is in neither [^\n]*\n  download it: python download-scannet\.py -o .* --id scene0708_01 --type \.sens/);
    assert.match(result.stdout, /1 of 4 ScanNet episodes .* 3 failed/);
    const written = [...files(out).keys()];
    assert.ok(written.includes(`${scans[2]!.episode}/000001-rgb.png`), "the good scan is written");
    assert.ok(written.includes(`${scans[0]!.episode}/000003-rgb.png`), "the truncated scan's frames before the cut are kept");
    assert.ok(!written.some((n) => n.endsWith(".tmp")), "no temporary file is left");
  });

  test("an output folder that is a file, a missing ScanNet root and no source are usage errors (exit 2)", async () => {
    const file = join(home, "a-file");
    writeFileSync(file, "");
    const onFile = await runCli(["data", "prepare", "openeqa", "--benchmark", benchmark, "--scannet", root, "--out", file], cliEnv(home));
    assert.equal(onFile.code, 2);
    assert.match(onFile.stderr, /a-file/);
    const noRoot = await runCli(["data", "prepare", "openeqa", "--benchmark", benchmark, "--scannet", join(home, "nowhere"), "--out", join(home, "x")], cliEnv(home));
    assert.equal(noRoot.code, 2);
    assert.match(noRoot.stderr, /nowhere, option --scannet: no such folder/);
    const nothing = await runCli(["data", "prepare", "openeqa", "--benchmark", benchmark, "--out", join(home, "x")], cliEnv(home));
    assert.equal(nothing.code, 2);
    assert.match(nothing.stderr, /--list/);
  });

  test("--list prints the scans with ScanNet's download command for each, and the HM3D scenes", async () => {
    const result = await runCli(["data", "prepare", "openeqa", "--benchmark", benchmark, "--list", "--scannet", "/data/scannet"], cliEnv(home));
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /^3 ScanNet scans/);
    for (const scan of SCANS) assert.match(result.stdout, new RegExp(`  ${scan.scan}  python download-scannet\\.py -o /data/scannet --id ${scan.scan} --type \\.sens`));
    assert.match(result.stdout, /1 HM3D scenes[^\n]*\n  BFRyYbPCCPE\n$/);
  });

  test("eqa data check openeqa finds every hole: a missing episode, a missing frame, an image that does not decode, and with --rgbd a missing pose and intrinsics", async () => {
    const subset = join(home, "scannet-subset.json");
    writeFileSync(subset, JSON.stringify(["q0", "q1", "q2"]));
    const complete = await runCli(["data", "check", "openeqa", "--benchmark", benchmark, "--subset", subset, "--frames", frames, "--rgbd"], cliEnv(home));
    assert.equal(complete.code, 0, complete.stdout + complete.stderr);
    assert.match(complete.stdout, /all 3 episodes complete .* \(608 frames\)/);

    const holes = join(home, "holes");
    cpSync(frames, holes, { recursive: true });
    const [a, b, c] = SCANS.map((s) => join(holes, s.episode));
    rmSync(join(a!, "000002-rgb.png"));
    const broken = join(b!, "000100-rgb.png");
    writeFileSync(broken, readFileSync(broken).subarray(0, 200));
    rmSync(join(c!, "000001.txt"));
    rmSync(join(c!, "intrinsic_depth.txt"));
    const rgb = await runCli(["data", "check", "openeqa", "--benchmark", benchmark, "--frames", holes], cliEnv(home));
    assert.equal(rgb.code, 1);
    assert.match(rgb.stdout, /hm3d-v0\/003-hm3d-BFRyYbPCCPE \(0 frames\):\n  its folder is missing/);
    assert.match(rgb.stdout, /scene0001_00 \(4 frames\):\n  frame 2: its colour image is missing/);
    assert.match(rgb.stdout, /scene0002_00 \(600 frames\):\n  frame 100: its colour image does not decode/);
    assert.match(rgb.stdout, /scene0707_00 \(3 frames\): complete\n/, "poses and intrinsics are not asked for without --rgbd");
    assert.match(rgb.stdout, /3 of 4 episodes missing or broken/);
    const rgbd = await runCli(["data", "check", "openeqa", "--benchmark", benchmark, "--frames", holes, "--rgbd"], cliEnv(home));
    assert.equal(rgbd.code, 1);
    assert.match(rgbd.stdout, /scene0707_00 \(3 frames\):\n  intrinsic_depth\.txt is missing\n  frame 1: its pose is missing/);
    assert.match(rgbd.stdout, /4 of 4 episodes missing or broken/);
  });
});
