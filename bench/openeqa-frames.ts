/**
 * `eqa data prepare openeqa --scannet` beside a Python port of OpenEQA's own extraction
 * (bench/openeqa_scannet_reference.py: SensorData.py's reading, extract-frames.py's writing), on
 * the same generated `.sens` of ScanNet's sizes (1296×968 JPEG colour, 640×480 zlib depth), each
 * in its own process, timed from spawn to exit with its peak resident memory (`/usr/bin/time`);
 * then eqakit again with `--png-compression 0` (uncompressed PNGs: less CPU, more disk); then
 * the outputs compared with the port's (names, text bytes, decoded pixels and depth values); then eqakit
 * alone (and the port, unless --no-reference-big) on a `.sens` of about 2 GB for peak memory.
 *
 * The colour frames are real: frames of OpenEQA's HM3D demo video from ../shared/data, scaled to
 * 1296×968 (synthetic gradients when it is missing); depth is a smooth synthetic surface in
 * millimetres. Files are made once in the system's temp folder and reused.
 *
 * usage: openeqa-frames.ts [--frames 1500] [--big-gb 2] [--no-reference-big] [--quick]
 */
import { execFileSync, spawn, spawnSync } from "node:child_process";
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync, writeSync } from "node:fs";
import { createHash } from "node:crypto";
import { loadavg, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { deflateSync } from "node:zlib";
import sharp from "sharp";
import { extractVideoFrames } from "../src/episodes/index.js";

const root = resolve(fileURLToPath(import.meta.url), "..", "..");
const argv = process.argv.slice(2);
const flag = (name: string, fallback: number): number => {
  const at = argv.indexOf(name);
  return at >= 0 ? Number(argv[at + 1]) : fallback;
};
const quick = argv.includes("--quick");
const FRAMES = flag("--frames", quick ? 700 : 1500);
const BIG_GB = flag("--big-gb", quick ? 0 : 2);
const referenceBig = !argv.includes("--no-reference-big");
/**
 * The Python that runs the port: EQAKIT_BENCH_PYTHON, else the first of these that has numpy and
 * Pillow (the port then decodes and writes the colour frames as the reference does, through
 * Pillow), else the first that has numpy (the port's shortcuts, faster than the reference).
 */
function choosePython(): string {
  if (process.env.EQAKIT_BENCH_PYTHON) return process.env.EQAKIT_BENCH_PYTHON;
  const candidates = ["python3", "/usr/bin/python3"];
  const has = (python: string, modules: string): boolean => spawnSync(python, ["-c", `import ${modules}`], { stdio: "ignore" }).status === 0;
  return candidates.find((p) => has(p, "numpy, PIL")) ?? candidates.find((p) => has(p, "numpy")) ?? "python3";
}
const PYTHON = choosePython();
const [CW, CH, DW, DH] = [1296, 968, 640, 480];
const work = join(tmpdir(), "eqakit-bench-openeqa-frames-v1");

const INTRINSIC_COLOR = [1170.187988, 0, 647.75, 0, 0, 1170.187988, 483.75, 0, 0, 0, 1, 0, 0, 0, 0, 1];
const INTRINSIC_DEPTH = [571.623718, 0, 319.5, 0, 0, 571.623718, 239.5, 0, 0, 0, 1, 0, 0, 0, 0, 1];

/** Distinct colour JPEGs (their decoded pixels saved for the port) and depth blobs, cycled over the frames. */
async function sources(): Promise<{ jpegs: Buffer[]; depths: Buffer[]; pixels: string }> {
  const dir = join(work, "sources");
  const pixels = join(work, "pixels");
  mkdirSync(pixels, { recursive: true });
  const video = join(root, "..", "shared", "data", "openeqa", "open-eqa-hm3d-demo.mp4");
  const jpegs: Buffer[] = [];
  if (!existsSync(join(dir, "done"))) {
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    if (existsSync(video)) await extractVideoFrames(video, dir, { every: 5, maxFrames: 32 });
    writeFileSync(join(dir, "done"), "");
  }
  const frames = readdirSync(dir).filter((n) => n.endsWith("-rgb.png")).sort();
  const count = frames.length > 0 ? frames.length : 16;
  for (let i = 0; i < count; i++) {
    const image = frames.length > 0
      ? sharp(join(dir, frames[i]!)).resize(CW, CH, { fit: "fill" })
      : sharp(Buffer.from(Array.from({ length: CW * CH * 3 }, (_, k) => ((k % (CW * 3)) / 11 + Math.floor(k / (CW * 3)) / 7 + i * 9) & 255)), { raw: { width: CW, height: CH, channels: 3 } });
    const jpeg = await image.jpeg({ quality: 92 }).toBuffer();
    jpegs.push(jpeg);
    const raw = await sharp(jpeg).raw().toBuffer();
    writeFileSync(join(pixels, `${createHash("md5").update(jpeg).digest("hex")}.rgb`), raw);
  }
  const depths = Array.from({ length: 8 }, (_, k) => {
    const values = new Uint16Array(DW * DH);
    for (let y = 0; y < DH; y++) for (let x = 0; x < DW; x++) values[y * DW + x] = (y < 20 ? 0 : Math.round(1200 + 900 * Math.sin((x + 40 * k) / 150) + 600 * Math.cos(y / 90) + ((x * 7 + y * 13) % 5)));
    return deflateSync(Buffer.from(values.buffer));
  });
  return { jpegs, depths, pixels };
}

/** Writes a version-4 `.sens` of `count` frames (once). */
function writeSens(path: string, count: number, src: { jpegs: Buffer[]; depths: Buffer[] }): void {
  if (existsSync(path)) return;
  mkdirSync(join(path, ".."), { recursive: true });
  const temporary = `${path}.partial`;
  const fd = openSync(temporary, "w");
  const f32 = (vs: number[]): Buffer => { const b = Buffer.alloc(vs.length * 4); vs.forEach((v, i) => b.writeFloatLE(v, i * 4)); return b; };
  const ints = (spec: [string, number][]): Buffer => Buffer.concat(spec.map(([t, v]) => { const b = Buffer.alloc(t === "Q" ? 8 : 4); if (t === "Q") b.writeBigUInt64LE(BigInt(v)); else if (t === "i") b.writeInt32LE(v); else b.writeUInt32LE(v); return b; }));
  const name = Buffer.from("StructureSensor");
  const identity = [1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1];
  writeSync(fd, Buffer.concat([ints([["I", 4], ["Q", name.length]]), name, f32(INTRINSIC_COLOR), f32(identity), f32(INTRINSIC_DEPTH), f32(identity), ints([["i", 2], ["i", 1], ["I", CW], ["I", CH], ["I", DW], ["I", DH]]), f32([1000]), ints([["Q", count]])]));
  for (let i = 0; i < count; i++) {
    const a = i / 40;
    const pose = [Math.cos(a), 0, Math.sin(a), 1 + i * 0.003, 0, 1, 0, 0.5, -Math.sin(a), 0, Math.cos(a), 1.45 - i * 0.0007, 0, 0, 0, 1];
    const color = src.jpegs[i % src.jpegs.length]!;
    const depth = src.depths[i % src.depths.length]!;
    writeSync(fd, Buffer.concat([f32(pose), ints([["Q", i * 33333], ["Q", i * 33333 + 7], ["Q", color.length], ["Q", depth.length]]), color, depth]));
  }
  closeSync(fd);
  execFileSync("mv", [temporary, path]);
}

interface Run {
  label: string;
  wallSeconds: number;
  /** User and system CPU time of the process and its threads: the work done, whatever else the machine runs. */
  cpuSeconds: number;
  peakRssMB: number;
}

/** Runs a command under /usr/bin/time; its wall time and peak resident memory. */
async function timed(label: string, command: string, args: string[]): Promise<Run> {
  const child = spawn("/usr/bin/time", ["-f", "%e %M %U %S", command, ...args], { stdio: ["ignore", "ignore", "pipe"] });
  let stderr = "";
  child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
  const code = await new Promise<number | null>((r) => child.on("close", r));
  if (code !== 0) throw new Error(`${label} exited with ${code}: ${stderr}`);
  const [seconds, kb, user, system] = stderr.trim().split("\n").at(-1)!.split(" ").map(Number);
  const run = { label, wallSeconds: seconds!, cpuSeconds: user! + system!, peakRssMB: (kb! * 1024) / 1e6 };
  console.error(`${label.padEnd(44)} ${run.wallSeconds.toFixed(1).padStart(7)} s wall ${run.cpuSeconds.toFixed(1).padStart(7)} s CPU ${run.peakRssMB.toFixed(0).padStart(6)} MB peak`);
  return run;
}

function prepareArgs(benchmark: string, scannet: string, out: string, extra: string[] = []): string[] {
  return [join(root, "bin", "eqa.js"), "data", "prepare", "openeqa", "--benchmark", benchmark, "--scannet", scannet, "--out", out, ...extra];
}

/** Same names, same text, same decoded pixels and depth values (every 10th image, every text file). */
async function compare(ours: string, theirs: string): Promise<{ files: number; sameNames: boolean; textFilesEqual: number; imagesCompared: number; imagesEqual: number }> {
  const a = readdirSync(ours).sort();
  const b = readdirSync(theirs).sort();
  let textFilesEqual = 0;
  let imagesCompared = 0;
  let imagesEqual = 0;
  for (const name of a.filter((n) => b.includes(n))) {
    if (name.endsWith(".txt")) {
      if (readFileSync(join(ours, name)).equals(readFileSync(join(theirs, name)))) textFilesEqual++;
      continue;
    }
    const index = Number(name.slice(0, 6));
    if (index % 10 !== 0) continue;
    imagesCompared++;
    const decode = async (file: string): Promise<Buffer> => (name.includes("depth") ? sharp(file).toColourspace("grey16").raw({ depth: "ushort" }).toBuffer() : sharp(file).raw().toBuffer());
    if ((await decode(join(ours, name))).equals(await decode(join(theirs, name)))) imagesEqual++;
  }
  return { files: a.length, sameNames: a.join() === b.join(), textFilesEqual, imagesCompared, imagesEqual };
}

if (!existsSync(join(root, "dist", "cli", "main.js"))) throw new Error("build eqakit first (npm run build): the benchmark runs dist/");
const src = await sources();
const scannet = join(work, "scannet");
const scan = `scene0000_${String(FRAMES).padStart(2, "0")}`;
const sens = join(scannet, "scans", scan, `${scan}.sens`);
writeSens(sens, FRAMES, src);
const episode = `scannet-v0/000-scannet-${scan}`;
const benchmark = join(work, `benchmark-${scan}.json`);
writeFileSync(benchmark, JSON.stringify([{ question_id: "q0", question: "What is on the table?", answer: "a cup", category: "object recognition", episode_history: episode }]));
console.error(`${sens}: ${FRAMES} frames, ${(statSync(sens).size / 1e6).toFixed(0)} MB; the port runs with ${PYTHON}`);

const oursOut = join(work, "out-eqakit");
const storedOut = join(work, "out-eqakit-stored");
const theirsOut = join(work, "out-reference");
for (const dir of [oursOut, storedOut, theirsOut]) rmSync(dir, { recursive: true, force: true });
const eqakit = await timed("eqakit: eqa data prepare openeqa --scannet", process.execPath, prepareArgs(benchmark, scannet, oursOut));
const reference = await timed("Python port of extract-frames.py", PYTHON, [join(root, "bench", "openeqa_scannet_reference.py"), "--sens", sens, "--out", theirsOut, "--pixels", src.pixels]);
const stored = await timed("eqakit with --png-compression 0", process.execPath, prepareArgs(benchmark, scannet, storedOut, ["--png-compression", "0"]));
const same = await compare(join(oursOut, episode), theirsOut);
const sameStored = await compare(join(storedOut, episode), theirsOut);
const bytes = (dir: string): number => readdirSync(dir).reduce((n, f) => n + statSync(join(dir, f)).size, 0);
const sizes = { eqakitMB: bytes(join(oursOut, episode)) / 1e6, eqakitStoredMB: bytes(join(storedOut, episode)) / 1e6, referenceMB: bytes(theirsOut) / 1e6 };

let big: Record<string, unknown> | undefined;
if (BIG_GB > 0) {
  const perFrame = statSync(sens).size / FRAMES;
  const bigFrames = Math.ceil((BIG_GB * 1e9) / perFrame);
  const bigScan = "scene0001_00";
  const bigSens = join(scannet, "scans", bigScan, `${bigScan}.sens`);
  writeSens(bigSens, bigFrames, src);
  const bigBenchmark = join(work, "benchmark-big.json");
  writeFileSync(bigBenchmark, JSON.stringify([{ question_id: "q0", question: "q", answer: "a", category: "object recognition", episode_history: `scannet-v0/001-scannet-${bigScan}` }]));
  const bigOut = join(work, "out-big");
  rmSync(bigOut, { recursive: true, force: true });
  console.error(`${bigSens}: ${bigFrames} frames, ${(statSync(bigSens).size / 1e9).toFixed(2)} GB`);
  const ours = await timed("eqakit on the 2 GB .sens", process.execPath, prepareArgs(bigBenchmark, scannet, bigOut));
  let theirs: Run | undefined;
  if (referenceBig) {
    const bigTheirs = join(work, "out-big-reference");
    rmSync(bigTheirs, { recursive: true, force: true });
    theirs = await timed("Python port on the 2 GB .sens", PYTHON, [join(root, "bench", "openeqa_scannet_reference.py"), "--sens", bigSens, "--out", bigTheirs, "--pixels", src.pixels]);
  }
  big = { sensGB: statSync(bigSens).size / 1e9, frames: bigFrames, eqakit: ours, ...(theirs ? { reference: theirs } : {}) };
}
console.log(JSON.stringify({ python: PYTHON, frames: FRAMES, sensMB: statSync(sens).size / 1e6, colourSources: src.jpegs.length, eqakit, reference, speedup: reference.wallSeconds / eqakit.wallSeconds, cpuRatio: reference.cpuSeconds / eqakit.cpuSeconds, stored, storedSpeedup: reference.wallSeconds / stored.wallSeconds, storedCpuRatio: reference.cpuSeconds / stored.cpuSeconds, load: loadavg()[0], same, sameStored, sizes, ...(big ? { big } : {}) }));
