import { mkdirSync, statSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { createClient, type Client } from "@libsql/client/sqlite3";
import { UserError, describeError, userCacheDir } from "../core/index.js";

/** The default cache file: `$XDG_CACHE_HOME/eqakit/model-calls.sqlite`. */
export function defaultCachePath(env: NodeJS.ProcessEnv = process.env): string {
  return join(userCacheDir(env), "model-calls.sqlite");
}

export interface CacheStats {
  path: string;
  entries: number;
  bytes: number;
  byModel: { provider: string; model: string; entries: number }[];
}

export interface CacheClearFilter {
  /** `provider/model`: only entries of that model. */
  model?: string;
}

/**
 * The model-call cache: one SQLite file, a row per successful call keyed by the hash of
 * the canonical request. Errors are never stored. Safe for several processes at once (WAL).
 */
export class ModelCallCache {
  private constructor(
    readonly path: string,
    private readonly client: Client,
  ) {}

  static async open(path: string): Promise<ModelCallCache> {
    const absolute = resolve(path);
    let client: Client;
    try {
      mkdirSync(dirname(absolute), { recursive: true });
      client = createClient({ url: pathToFileURL(absolute).href });
      await client.execute("PRAGMA journal_mode = WAL");
      await client.execute("PRAGMA busy_timeout = 10000");
      await client.execute("PRAGMA synchronous = NORMAL");
      await client.execute(
        `CREATE TABLE IF NOT EXISTS model_calls (
           key TEXT PRIMARY KEY,
           provider TEXT NOT NULL,
           model TEXT NOT NULL,
           response TEXT NOT NULL,
           created_at INTEGER NOT NULL
         )`,
      );
    } catch (error) {
      throw new UserError(`cannot open the model-call cache: ${describeError(error)}`, { file: absolute }, "pass --cache PATH to use another file, or --no-cache");
    }
    return new ModelCallCache(absolute, client);
  }

  async get(key: string): Promise<unknown | undefined> {
    const result = await this.client.execute({ sql: "SELECT response FROM model_calls WHERE key = ?", args: [key] });
    const text = result.rows[0]?.response;
    if (typeof text !== "string") return undefined;
    try {
      return JSON.parse(text);
    } catch {
      return undefined;
    }
  }

  async put(key: string, provider: string, model: string, response: unknown): Promise<void> {
    await this.client.execute({
      sql: "INSERT OR REPLACE INTO model_calls (key, provider, model, response, created_at) VALUES (?, ?, ?, ?, ?)",
      args: [key, provider, model, JSON.stringify(response), Date.now()],
    });
  }

  async stats(): Promise<CacheStats> {
    const total = await this.client.execute("SELECT COUNT(*) AS n FROM model_calls");
    const grouped = await this.client.execute(
      "SELECT provider, model, COUNT(*) AS n FROM model_calls GROUP BY provider, model ORDER BY n DESC",
    );
    return {
      path: this.path,
      entries: Number(total.rows[0]?.n ?? 0),
      bytes: fileSize(this.path) + fileSize(`${this.path}-wal`),
      byModel: grouped.rows.map((row) => ({ provider: String(row.provider), model: String(row.model), entries: Number(row.n) })),
    };
  }

  /** Deletes entries (all, or one model's) and returns how many. */
  async clear(filter: CacheClearFilter = {}): Promise<number> {
    let result;
    if (filter.model) {
      const slash = filter.model.indexOf("/");
      const provider = slash === -1 ? filter.model : filter.model.slice(0, slash);
      const model = slash === -1 ? "" : filter.model.slice(slash + 1);
      result = await this.client.execute({ sql: "DELETE FROM model_calls WHERE provider = ? AND model = ?", args: [provider, model] });
    } else {
      result = await this.client.execute("DELETE FROM model_calls");
    }
    await this.client.execute("VACUUM");
    return result.rowsAffected;
  }

  close(): void {
    this.client.close();
  }
}

function fileSize(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
}
