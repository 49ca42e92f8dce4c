import { Command } from "commander";
import { ModelCallCache, defaultCachePath } from "../store/index.js";
import { formatTable } from "../report/index.js";

interface CacheFlags {
  cache?: string;
  model?: string;
}

export function cacheCommand(): Command {
  const cache = new Command("cache").description("inspect or clear the model-call cache");
  cache
    .command("stats")
    .description("entries and size of the cache, per model")
    .option("--cache <path>", "the cache file (default: $XDG_CACHE_HOME/eqakit/model-calls.sqlite)")
    .action(async (flags: CacheFlags) => {
      const opened = await ModelCallCache.open(flags.cache ?? defaultCachePath());
      try {
        const stats = await opened.stats();
        console.log(`${stats.path}: ${stats.entries} entries, ${(stats.bytes / 1e6).toFixed(1)} MB`);
        if (stats.byModel.length > 0) {
          console.log(formatTable(["model", "entries"], stats.byModel.map((m) => [`${m.provider}/${m.model}`, String(m.entries)])));
        }
      } finally {
        opened.close();
      }
    });
  cache
    .command("clear")
    .description("delete cached model replies (all, or one model's)")
    .option("--cache <path>", "the cache file (default: $XDG_CACHE_HOME/eqakit/model-calls.sqlite)")
    .option("--model <provider/model>", "only this model's entries")
    .action(async (flags: CacheFlags) => {
      const opened = await ModelCallCache.open(flags.cache ?? defaultCachePath());
      try {
        const removed = await opened.clear(flags.model ? { model: flags.model } : {});
        console.log(`removed ${removed} entries from ${opened.path}`);
      } finally {
        opened.close();
      }
    });
  return cache;
}
