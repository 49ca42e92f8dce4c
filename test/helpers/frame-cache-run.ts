/**
 * One "run" over an episode's frames with a frame cache of its own settings: the frames' hashes
 * in two image settings, the cache's counts, and the files its folder holds. Run as a script
 * (`node --import tsx test/helpers/frame-cache-run.ts EPISODE CACHE_DIR|off MEMORY_BYTES`), it
 * prints that as JSON, as a separate process gives it.
 */
import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { FrameCache, openEpisode } from "../../src/episodes/index.js";

export interface FrameCacheRun {
  hashes: string[];
  prepared: number;
  memoryEntries: number;
  /** The number of files in the cache's folder (none without one). */
  folderFiles: number;
}

export async function frameCacheRun(episodeDir: string, cacheDir: string | false, memoryBytes: number): Promise<FrameCacheRun> {
  const cache = new FrameCache({ dir: cacheDir, memoryBytes });
  const episode = await openEpisode(episodeDir, undefined, { frameCache: cache });
  const hashes: string[] = [];
  for (const image of [{}, { maxSide: 96, format: "jpeg" as const, quality: 70 }]) {
    for (const indices of [[0, 1, 2, 3], [2, 3, 4, 5], [0, 5]]) hashes.push(...(await episode.images(indices, image)).map((i) => i.sha256));
  }
  const stats = cache.stats();
  const folderFiles = cacheDir === false ? 0 : readdirSync(cacheDir, { recursive: true, encoding: "utf8" }).filter((name) => statSync(join(cacheDir, name)).isFile()).length;
  return { hashes, prepared: stats.prepared, memoryEntries: stats.memoryEntries, folderFiles };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const [episodeDir, cacheDir, memoryBytes] = process.argv.slice(2);
  console.log(JSON.stringify(await frameCacheRun(episodeDir!, cacheDir === "off" ? false : cacheDir!, Number(memoryBytes))));
}
