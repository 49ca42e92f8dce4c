import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { UserError } from "../../src/core/index.js";
import { ffmpegAvailable, findTool, openEpisode, prepareImage, resolveEpisodePath, sampleFrameIndices } from "../../src/episodes/index.js";
import { cliEnv, runCli } from "../helpers/cli.js";
import { openEqaDir, temporaryDir } from "../helpers/paths.js";
import { writeRgb } from "./fixtures.js";

const demoDir = openEqaDir;
const demoVideo = join(demoDir, "open-eqa-hm3d-demo.mp4");
const demoHistory = "assets/open-eqa-hm3d-demo";
const work = temporaryDir("eqakit-video-");

describe("the OpenEQA demo video as an episode", () => {
  it("ffmpeg and ffprobe can be run with no system install: the npm packages' binaries serve when PATH has none", async () => {
    assert.equal(await ffmpegAvailable(), true);
    const emptyBin = join(work, "no-tools-bin");
    mkdirSync(emptyBin, { recursive: true });
    for (const program of ["ffmpeg", "ffprobe"] as const) {
      const tool = await findTool(program, { env: { PATH: emptyBin } });
      assert.equal(tool?.source, "npm", program);
      assert.match(tool.path, new RegExp(`node_modules/@${program}-installer/`));
      assert.equal(await findTool(program, { env: { PATH: emptyBin }, packages: false }), undefined);
    }
  });

  it("is found under --frames for its episode_history, and opened with 168 frames and their timestamps", async () => {
    const path = resolveEpisodePath(demoDir, demoHistory);
    assert.equal(path, demoVideo);
    const episode = await openEpisode(path!, demoHistory);
    assert.equal(episode.kind, "video");
    assert.equal(episode.id, demoHistory);
    assert.equal(episode.frameCount, 168);
    const timestamps = episode.timestamps!;
    assert.equal(timestamps.length, 168);
    assert.deepEqual(timestamps.slice(0, 3), [0, 0.1, 0.2]);
    assert.equal(timestamps[167], 16.7);
    for (let i = 1; i < timestamps.length; i++) assert.ok(timestamps[i]! > timestamps[i - 1]!);
    assert.deepEqual(episode.notes, []);
    assert.deepEqual(await episode.frame(41), { index: 41, timestamp: 4.1 });
  });

  it("decodes only the frames asked for, in the order asked, at 512 px", async () => {
    const episode = await openEpisode(demoVideo);
    assert.equal(episode.id, "open-eqa-hm3d-demo");
    const images = await episode.images([167, 41, 0, 41]);
    assert.deepEqual(images.map((i) => i.index), [167, 41, 0, 41]);
    for (const image of images) assert.deepEqual([image.width, image.height, image.mediaType], [512, 288, "image/png"]);
    assert.equal(images[1]!.sha256, images[3]!.sha256);
    assert.equal(new Set(images.map((i) => i.sha256)).size, 3);
  });

  it("frame k is the frame shown at timestamps[k] (checked against ffmpeg seeking to that time)", async () => {
    const episode = await openEpisode(demoVideo);
    const ours = await episode.images([41, 100]);
    const ffmpeg = (await findTool("ffmpeg"))!.path;
    for (const image of ours) {
      const still = join(work, `seek-${image.index}.png`);
      execFileSync(ffmpeg, ["-v", "error", "-y", "-ss", String(episode.timestamps![image.index]), "-i", demoVideo, "-frames:v", "1", still]);
      assert.equal((await prepareImage(still)).sha256, image.sha256, `frame ${image.index}`);
    }
  });

  it("samples 50 frames uniformly, and by seconds from the timestamps", async () => {
    const episode = await openEpisode(demoVideo);
    const uniform = sampleFrameIndices(episode.frameCount, { kind: "uniform", count: 50 });
    const images = await episode.images(uniform, { format: "jpeg" });
    assert.equal(images.length, 50);
    assert.deepEqual(images.map((i) => i.index), uniform);
    assert.deepEqual(sampleFrameIndices(episode.frameCount, { kind: "seconds", interval: 2 }, episode.timestamps), [0, 20, 40, 60, 80, 100, 120, 140, 160]);
  });

  it("a file ffmpeg cannot read is refused, naming the episode and the file", async () => {
    const file = join(work, "broken.mp4");
    writeFileSync(file, Buffer.alloc(4096, 7));
    await assert.rejects(openEpisode(file, "assets/broken"), (error: unknown) => error instanceof UserError && error.message.startsWith(`${file}: episode assets/broken: ffprobe cannot read this file as a video`));
  });
});

describe("resolveEpisodePath", () => {
  it("looks for <root>/<history>, a video beside it, then the last segment, and takes a lone episode for every question", async () => {
    const root = join(work, "frames");
    const hm3d = join(root, "hm3d-v0", "000-hm3d-A");
    mkdirSync(hm3d, { recursive: true });
    await writeRgb(join(hm3d, "00000-rgb.png"), 16, 16, 0);
    writeFileSync(join(root, "clip.mkv"), "");
    assert.equal(resolveEpisodePath(root, "hm3d-v0/000-hm3d-A"), hm3d);
    assert.equal(resolveEpisodePath(root, "hm3d-v0/clip"), join(root, "clip.mkv"));
    assert.equal(resolveEpisodePath(root, "hm3d-v0/000-hm3d-MISSING"), undefined);
    assert.equal(resolveEpisodePath(join(work, "nowhere"), "hm3d-v0/000-hm3d-A"), undefined);
    // a frame folder or a video given as --frames is the episode of every question
    assert.equal(resolveEpisodePath(hm3d, "anything/at-all"), hm3d);
    assert.equal(resolveEpisodePath(demoVideo, demoHistory), demoVideo);
  });
});

describe("eqa frames extract", () => {
  it("writes an OpenEQA-style folder that opens as an episode with the video's frames", async () => {
    const out = join(work, "extracted");
    const result = await runCli(["frames", "extract", demoVideo, "--out", out, "--every", "40"], cliEnv(work));
    assert.equal(result.code, 0, result.stderr);
    assert.equal(result.stdout.split("\n")[0], `wrote 5 frames to ${out}`);
    assert.match(result.stdout, /^decoded with ffmpeg \S+ \((from PATH|from the npm package @ffmpeg-installer\/ffmpeg)\); ffprobe \S+/m);
    assert.deepEqual(readdirSync(out).sort(), ["00000-rgb.png", "00001-rgb.png", "00002-rgb.png", "00003-rgb.png", "00004-rgb.png"]);
    const folder = await openEpisode(out, "extracted");
    assert.equal(folder.kind, "hm3d");
    assert.equal(folder.frameCount, 5);
    const video = await openEpisode(demoVideo);
    const fromFolder = await folder.images([0, 1, 2, 3, 4]);
    const fromVideo = await video.images([0, 40, 80, 120, 160]);
    assert.deepEqual(fromFolder.map((i) => i.sha256), fromVideo.map((i) => i.sha256));

    const again = await runCli(["frames", "extract", demoVideo, "--out", out], cliEnv(work));
    assert.equal(again.code, 2);
    assert.match(again.stderr, /^eqa: .*extracted: the output folder already holds 5 frames/);
  });

  it("--max-frames stops early", async () => {
    const out = join(work, "first-three");
    const result = await runCli(["frames", "extract", demoVideo, "--out", out, "--every", "10", "--max-frames", "3"], cliEnv(work));
    assert.equal(result.code, 0, result.stderr);
    assert.equal(readdirSync(out).length, 3);
  });

  it("bad input exits 2 with a message: a missing video, a bad flag, an FFMPEG_PATH that cannot run", async () => {
    const missing = await runCli(["frames", "extract", join(work, "missing.mp4"), "--out", join(work, "x")], cliEnv(work));
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /missing\.mp4: ffprobe cannot read this file as a video/);

    const badFlag = await runCli(["frames", "extract", demoVideo, "--out", join(work, "y"), "--every", "0"], cliEnv(work));
    assert.equal(badFlag.code, 2);
    assert.match(badFlag.stderr, /--every.*at least 1/);

    const badVariable = await runCli(["frames", "extract", demoVideo, "--out", join(work, "v")], cliEnv(work, { FFMPEG_PATH: join(work, "no-such-ffmpeg") }));
    assert.equal(badVariable.code, 2);
    assert.match(badVariable.stderr, /FFMPEG_PATH names .*no-such-ffmpeg, which cannot be run/);
  });

  it("with no ffmpeg on PATH it decodes with the npm package's binary and says so", async () => {
    // the CLI starts from process.execPath, so a PATH of one empty folder hides ffmpeg and nothing else
    const emptyBin = join(work, "empty-bin");
    mkdirSync(emptyBin, { recursive: true });
    const out = join(work, "z");
    const result = await runCli(["frames", "extract", demoVideo, "--out", out, "--max-frames", "2"], cliEnv(work, { PATH: emptyBin }));
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /decoded with ffmpeg \S+node_modules\/@ffmpeg-installer\/\S+ \(from the npm package @ffmpeg-installer\/ffmpeg\); ffprobe \S+ \(from the npm package @ffprobe-installer\/ffprobe\)/);
    assert.equal(readdirSync(out).length, 2);
  });

  it("a system ffmpeg on PATH wins over the npm package's", async () => {
    const bin = join(work, "system-bin");
    mkdirSync(bin, { recursive: true });
    const fake = join(bin, "ffmpeg");
    writeFileSync(fake, "#!/bin/sh\necho ffmpeg version system\n", { mode: 0o755 });
    assert.deepEqual(await findTool("ffmpeg", { env: { PATH: bin } }), { program: "ffmpeg", path: fake, source: "system" });
    assert.deepEqual(await findTool("ffmpeg", { env: { PATH: bin, FFMPEG_PATH: fake } }), { program: "ffmpeg", path: fake, source: "variable" });
  });
});
