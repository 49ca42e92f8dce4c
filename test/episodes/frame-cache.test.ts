import assert from "node:assert/strict";
import { mkdirSync, readdirSync, statSync, truncateSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { beforeEach, describe, test } from "node:test";
import sharp from "sharp";
import { FrameCache, openEpisode, prepareImage } from "../../src/episodes/index.js";
import { trimFolder } from "../../src/episodes/frame-cache.js";
import { writeRgbEpisode } from "../helpers/frames.js";
import { temporaryDir } from "../helpers/paths.js";

const EIGHT = [0, 1, 2, 3, 4, 5, 6, 7];

/** The frames of an episode folder, prepared alone (no cache) with `prepareImage`. */
async function preparedAlone(dir: string, indices: number[], options: Parameters<typeof prepareImage>[1] = {}) {
  return Promise.all(indices.map((i) => prepareImage(join(dir, `${String(i).padStart(5, "0")}-rgb.png`), options)));
}

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: "utf8" }).filter((name) => statSync(join(dir, name)).isFile());
}

describe("prepared frames are kept per episode, frame and settings", () => {
  let cacheDir: string;
  let cache: FrameCache;
  /** Opens an episode whose frames go through the test's cache. */
  const open = (dir: string) => openEpisode(dir, undefined, { frameCache: cache });
  beforeEach(() => {
    cacheDir = temporaryDir("eqakit-frame-cache-");
    cache = new FrameCache({ dir: cacheDir });
  });

  test("ten questions of one episode asking for the same eight frames at once prepare each frame once; other settings prepare them again", async () => {
    const dir = await writeRgbEpisode(join(temporaryDir(), "ep"), 12);
    const episode = await open(dir);
    const before = cache.stats().prepared;
    const answers = await Promise.all(Array.from({ length: 10 }, () => episode.images(EIGHT)));
    assert.equal(cache.stats().prepared - before, 8);
    for (const images of answers) assert.deepEqual(images.map((i) => i.sha256), answers[0]!.map((i) => i.sha256));
    await episode.images([6, 7, 8, 8]);
    assert.equal(cache.stats().prepared - before, 9, "only frame 8 is new");
    await episode.images(EIGHT, { maxSide: 256 });
    await episode.images(EIGHT, { format: "jpeg", quality: 80 });
    assert.equal(cache.stats().prepared - before, 9 + 16);
    await episode.images(EIGHT, { maxSide: 512, format: "png" });
    assert.equal(cache.stats().prepared - before, 9 + 16, "the default settings spelt out are the same settings");
  });

  test("the cached bytes are the bytes prepared alone, from memory and from disk, in PNG and JPEG", async () => {
    const dir = await writeRgbEpisode(join(temporaryDir(), "ep"), 8, 640, 480);
    for (const options of [{}, { maxSide: 300 }, { format: "jpeg" as const, quality: 70 }]) {
      const alone = await preparedAlone(dir, EIGHT, options);
      const episode = await open(dir);
      const fresh = await episode.images(EIGHT, options);
      const fromMemory = await episode.images([...EIGHT].reverse(), options);
      cache = new FrameCache({ dir: cacheDir }); // a new process: memory empty, the folder kept
      const before = cache.stats().prepared;
      const fromDisk = await (await open(dir)).images(EIGHT, options);
      assert.equal(cache.stats().prepared, before, "every frame came from the folder");
      for (const [i, image] of alone.entries()) {
        for (const got of [fresh[i]!, fromMemory[7 - i]!, fromDisk[i]!]) {
          assert.ok(got.data.equals(image.data));
          assert.equal(got.sha256, image.sha256);
          assert.equal(got.mediaType, image.mediaType);
          assert.deepEqual([got.width, got.height], [image.width, image.height]);
          assert.equal(got.index, EIGHT[i]);
        }
      }
    }
  });

  test("a replaced frame file is prepared again; a damaged cache file is ignored", async () => {
    const dir = await writeRgbEpisode(join(temporaryDir(), "ep"), 3);
    const [first] = await (await open(dir)).images([0]);
    const file = join(dir, "00000-rgb.png");
    await sharp({ create: { width: 320, height: 200, channels: 3, background: "#102030" } }).png().toFile(file);
    utimesSync(file, new Date(), new Date(Date.now() + 5000));
    cache = new FrameCache({ dir: cacheDir });
    const before = cache.stats().prepared;
    const [replaced] = await (await open(dir)).images([0]);
    assert.equal(cache.stats().prepared - before, 1);
    assert.notEqual(replaced!.sha256, first!.sha256);
    assert.deepEqual([replaced!.width, replaced!.height], [320, 200]);

    for (const name of filesUnder(cacheDir)) truncateSync(join(cacheDir, name), 60);
    cache = new FrameCache({ dir: cacheDir });
    const [again] = await (await open(dir)).images([0]);
    assert.equal(cache.stats().prepared, 1, "the truncated cache file was prepared again");
    assert.ok(again!.data.equals(replaced!.data));
  });

  test("a frame that cannot be read fails every question that asks for it, and is not kept", async () => {
    const dir = await writeRgbEpisode(join(temporaryDir(), "ep"), 4);
    const episode = await open(dir);
    writeFileSync(join(dir, "00002-rgb.png"), Buffer.alloc(0));
    const results = await Promise.allSettled([episode.images([1, 2]), episode.images([2, 3])]);
    for (const result of results) {
      assert.equal(result.status, "rejected");
      assert.match(String((result as PromiseRejectedResult).reason), /episode .*ep, frame 2: /);
    }
    await assert.rejects(episode.images([2]), /frame 2: /, "the failure was not kept: asked again, it fails again");
    assert.equal((await episode.images([1, 3])).length, 2);
  });

  test("memory holds at most its bound; the folder is trimmed to 80 % of its bound, oldest first", async () => {
    const dir = await writeRgbEpisode(join(temporaryDir(), "ep"), 12, 640, 480);
    const sizes = (await preparedAlone(dir, [0, 1, 2])).map((i) => i.data.byteLength);
    const bound = Math.max(...sizes) * 3;
    cache = new FrameCache({ dir: false, memoryBytes: bound });
    const episode = await open(dir);
    const before = cache.stats().prepared;
    await episode.images(Array.from({ length: 12 }, (_, i) => i));
    const stats = cache.stats();
    assert.ok(stats.memoryBytes <= bound, `${stats.memoryBytes} bytes held, bound ${bound}`);
    assert.ok(stats.memoryEntries <= 3);
    await episode.images([11]);
    assert.equal(cache.stats().prepared - before, 12, "the most recent frame is still held");
    await episode.images([0]);
    assert.equal(cache.stats().prepared - before, 13, "the oldest left");

    cache = new FrameCache({ dir: false, memoryBytes: 0 });
    await (await open(dir)).images([0, 0]);
    assert.equal(cache.stats().memoryEntries, 0);

    const folder = temporaryDir("eqakit-frame-trim-");
    for (let i = 0; i < 10; i++) {
      const sub = join(folder, `0${i}`);
      mkdirSync(sub);
      const file = join(sub, `${i}.bin`);
      writeFileSync(file, Buffer.alloc(1000));
      utimesSync(file, new Date(), new Date(1_700_000_000_000 + i * 1000));
    }
    await trimFolder(folder, 5000);
    const left = filesUnder(folder).map((name) => Number(name.split("/").at(-1)!.split(".")[0]));
    assert.deepEqual(left.sort((a, b) => a - b), [6, 7, 8, 9]);
    await trimFolder(folder, 5000);
    assert.equal(filesUnder(folder).length, 4, "under its bound, nothing is removed");
  });
});
