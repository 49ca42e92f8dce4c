import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { describe, test } from "node:test";
import { frameCacheRun, type FrameCacheRun } from "../helpers/frame-cache-run.js";
import { writeRgbEpisode } from "../helpers/frames.js";
import { projectRoot, temporaryDir } from "../helpers/paths.js";

/** The same run in a process of its own. */
function runAlone(episodeDir: string, cacheDir: string | false, memoryBytes: number): FrameCacheRun {
  const child = spawnSync(process.execPath, ["--import", "tsx", join(projectRoot, "test", "helpers", "frame-cache-run.ts"), episodeDir, cacheDir === false ? "off" : cacheDir, String(memoryBytes)], { cwd: projectRoot, encoding: "utf8" });
  assert.equal(child.status, 0, child.stderr);
  return JSON.parse(child.stdout) as FrameCacheRun;
}

describe("frame caches are the run's own", () => {
  test("two runs with different cache settings in one process, at once, give what two processes give", async () => {
    const episode = await writeRgbEpisode(join(temporaryDir(), "ep"), 6, 320, 200);
    const kept = { dir: temporaryDir("eqakit-frames-kept-"), memory: 64 * 1024 * 1024 };
    const none = { dir: false as const, memory: 0 };
    const [keeping, keepingNothing] = await Promise.all([frameCacheRun(episode, kept.dir, kept.memory), frameCacheRun(episode, none.dir, none.memory)]);
    const alone = [runAlone(episode, temporaryDir("eqakit-frames-kept-"), kept.memory), runAlone(episode, none.dir, none.memory)];
    assert.deepEqual([keeping, keepingNothing], alone);
    // and the settings did decide: one run kept 12 preparations on disk and in memory, the other none
    assert.deepEqual([keeping.prepared, keeping.folderFiles, keeping.memoryEntries], [12, 12, 12]);
    assert.equal(keepingNothing.memoryEntries, 0);
    assert.ok(keepingNothing.prepared > keeping.prepared, "a cache that holds nothing prepares a frame again each time it is asked");
    assert.deepEqual(keeping.hashes, keepingNothing.hashes, "the frames are the same bytes either way");
  });
});
