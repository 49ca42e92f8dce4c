import { join } from "node:path";
import { UserError, describeError, md5Hex, userDataDir, writeFileAtomically } from "../core/index.js";

/** A file eqakit knows how to download and verify. */
export interface KnownFile {
  /** Name of the file once downloaded, relative to the dataset's folder. */
  name: string;
  url: string;
  md5: string;
}

export interface KnownDataset {
  name: string;
  description: string;
  files: Record<string, KnownFile>;
}

const OPENEQA_REPO = "https://raw.githubusercontent.com/facebookresearch/open-eqa/main";

export const KNOWN_DATASETS: Record<string, KnownDataset> = {
  openeqa: {
    name: "openeqa",
    description: "OpenEQA v0: 1,636 EM-EQA questions and the 184-question A-EQA subset (MIT)",
    files: {
      benchmark: { name: "open-eqa-v0.json", url: `${OPENEQA_REPO}/data/open-eqa-v0.json`, md5: "c0bd01fdce18206112a29fc3eab50cbb" },
      subset: {
        name: "open-eqa-v0-184-questions.json",
        url: `${OPENEQA_REPO}/assets/open-eqa-v0-184-questions.json`,
        md5: "d973f750df6c3a58796fd33073cfdedd",
      },
    },
  },
};

/** Where `eqa data fetch NAME` puts a dataset unless told otherwise. */
export function defaultDatasetDir(dataset: string, env: NodeJS.ProcessEnv = process.env): string {
  return join(userDataDir(env), dataset);
}

/** The default OpenEQA benchmark file, as `eqa data fetch openeqa` writes it. */
export function defaultOpenEqaBenchmarkPath(env: NodeJS.ProcessEnv = process.env): string {
  return join(defaultDatasetDir("openeqa", env), KNOWN_DATASETS.openeqa!.files.benchmark!.name);
}

export interface FetchOptions {
  /** Destination folder; defaults to the user's data directory. */
  outDir?: string;
  /** Replacement URLs by file key (e.g. `{ benchmark: "http://mirror/open-eqa-v0.json" }`). */
  urls?: Record<string, string>;
  timeoutMs?: number;
}

export interface FetchedFile {
  key: string;
  path: string;
  url: string;
  md5: string;
  bytes: number;
}

/** Downloads every file of a known dataset and checks its md5 before putting it in place. */
export async function fetchDataset(name: string, options: FetchOptions = {}): Promise<FetchedFile[]> {
  const dataset = KNOWN_DATASETS[name];
  if (!dataset) {
    throw new UserError(`unknown dataset "${name}"`, {}, `known datasets: ${Object.keys(KNOWN_DATASETS).join(", ")}`);
  }
  const outDir = options.outDir ?? defaultDatasetDir(name);
  const fetched: FetchedFile[] = [];
  for (const [key, file] of Object.entries(dataset.files)) {
    const url = options.urls?.[key] ?? file.url;
    const body = await download(url, options.timeoutMs ?? 120_000);
    const md5 = md5Hex(body);
    if (md5 !== file.md5) {
      throw new UserError(
        `downloaded ${file.name} has md5 ${md5}, expected ${file.md5}`,
        { file: url },
        "the file at that URL is not the expected version; nothing was written",
      );
    }
    const path = join(outDir, file.name);
    await writeFileAtomically(path, body);
    fetched.push({ key, path, url, md5, bytes: body.byteLength });
  }
  return fetched;
}

async function download(url: string, timeoutMs: number): Promise<Uint8Array> {
  let response: Response;
  try {
    response = await fetch(url, { signal: AbortSignal.timeout(timeoutMs) });
  } catch (error) {
    throw new UserError(`could not download: ${describeError(error)}`, { file: url }, "check the network or pass --url with a reachable copy");
  }
  if (!response.ok) {
    throw new UserError(`download failed with HTTP ${response.status}`, { file: url }, "check the URL or pass --url with a reachable copy");
  }
  return new Uint8Array(await response.arrayBuffer());
}

