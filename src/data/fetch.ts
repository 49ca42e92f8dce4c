import { createHash } from "node:crypto";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { UserError, describeError, md5Hex, sha256Hex, userDataDir, writeFileAtomically } from "../core/index.js";

/** A file eqakit knows how to download and verify: by each checksum it gives (at least one). */
export interface KnownFile {
  /** Name of the file once downloaded, relative to the dataset's folder. */
  name: string;
  url: string;
  md5?: string;
  sha256?: string;
  /** Git's blob id of the file (SHA-1 of `blob <size>\0` and the bytes), as the repository's tree lists it. */
  gitBlob?: string;
}

export interface KnownDataset {
  name: string;
  description: string;
  /** The URL prefix every file's URL starts with, which `--base-url` replaces (a mirror, a local copy). */
  base: string;
  files: Record<string, KnownFile>;
}

const OPENEQA_REPO = "https://raw.githubusercontent.com/facebookresearch/open-eqa/main";

/**
 * EXPRESS-Bench's repository at the commit eqakit follows. Its files have no licence: eqakit never
 * ships them, `eqa data fetch express-bench` downloads them for the user's own use. The records
 * file is checked by the blob id of that commit's tree (no other sum of it is published); the
 * prompt files by SHA-256.
 */
const EXPRESS_REPO = "https://raw.githubusercontent.com/HCPLab-SYSU/EXPRESS-Bench/e8789dadfbd51af6850dc4d2b0526ca0ee78386a";

/**
 * explore-eqa's repository (Stanford-ILIAD) at the commit eqakit follows, for HM-EQA's two files.
 * The repository has no licence at its top: eqakit never ships them, `eqa data fetch hm-eqa`
 * downloads them for the user's own use, checked by SHA-256.
 */
const HM_EQA_REPO = "https://raw.githubusercontent.com/Stanford-ILIAD/explore-eqa/18381da3370c5f7729594f10ebc49b5644bbb88c";

/**
 * LA-EQA's repository (mind-palace-laeqa/benchmark) at the commit eqakit follows: its question file
 * and the evaluation code whose judge prompt `eqa score --prompts original` sends. The repository
 * has no licence: eqakit never ships either, `eqa data fetch la-eqa` downloads them for the user's
 * own use, checked by SHA-256.
 */
const LA_EQA_REPO = "https://raw.githubusercontent.com/mind-palace-laeqa/benchmark/bc083627160e27a1c03a7f2c486c7c9434449501";

export const KNOWN_DATASETS: Record<string, KnownDataset> = {
  openeqa: {
    name: "openeqa",
    description: "OpenEQA v0: 1,636 EM-EQA questions and the 184-question A-EQA subset (MIT)",
    base: OPENEQA_REPO,
    files: {
      benchmark: { name: "open-eqa-v0.json", url: `${OPENEQA_REPO}/data/open-eqa-v0.json`, md5: "c0bd01fdce18206112a29fc3eab50cbb" },
      subset: {
        name: "open-eqa-v0-184-questions.json",
        url: `${OPENEQA_REPO}/assets/open-eqa-v0-184-questions.json`,
        md5: "d973f750df6c3a58796fd33073cfdedd",
      },
    },
  },
  "express-bench": {
    name: "express-bench",
    description: "EXPRESS-Bench: 2,044 questions on 777 HM3D exploration trajectories, and the benchmark's prompts (no licence: for your own use; eqa explore --prompts original sends them)",
    base: EXPRESS_REPO,
    files: {
      records: { name: "express-bench.json", url: `${EXPRESS_REPO}/data/express-bench.json`, gitBlob: "f90dbd02fc654d1a04bf1b74e4e106c59e65040a" },
      region: { name: "prompt/region.txt", url: `${EXPRESS_REPO}/prompt/region.txt`, sha256: "53cc9ff78753a7195a31142f8d42cb36afd12cf6c25715b240c6602a771cc92f" },
      explore: { name: "prompt/explore.txt", url: `${EXPRESS_REPO}/prompt/explore.txt`, sha256: "7f311ecdc63a41881c8658c4a32c9208b69d944e31feed134d840700e48f4b77" },
      answer: { name: "prompt/answer.txt", url: `${EXPRESS_REPO}/prompt/answer.txt`, sha256: "e589e1bbeda27e95cc2c33b84de200937a9004a1452b5fb568d75a980ba42a74" },
      randomAnswer: { name: "prompt/random_answer.txt", url: `${EXPRESS_REPO}/prompt/random_answer.txt`, sha256: "9571b0614ef97708377c7d65ec296c21d3ba57c0836acc03f5195807568391a9" },
      evaluation: { name: "prompt/evaluation.txt", url: `${EXPRESS_REPO}/prompt/evaluation.txt`, sha256: "ba446f872e2831dc50a7b0be687229a051a935446217fca24beb2f6ca65a75de" },
    },
  },
  "hm-eqa": {
    name: "hm-eqa",
    description: "HM-EQA (explore-eqa): 500 multiple-choice questions over HM3D scenes and their start poses, read by eqa explore --episodes questions.csv (no licence: for your own use)",
    base: HM_EQA_REPO,
    files: {
      questions: { name: "questions.csv", url: `${HM_EQA_REPO}/data/questions.csv`, sha256: "a7476e727501467c74942f0b03c7fda7904ec16d5fea9dfb72b70c7bc48e0b18" },
      poses: { name: "scene_init_poses.csv", url: `${HM_EQA_REPO}/data/scene_init_poses.csv`, sha256: "b52a9a389e5aec148500ec3d809e51cb9c37d616105606a04d618d786f5abb2a" },
    },
  },
  "la-eqa": {
    name: "la-eqa",
    description: "LA-EQA (Enter the Mind Palace): 100 long-term active EQA questions in five categories, and the evaluation code whose judge prompt eqa score --prompts original sends (no licence: for your own use)",
    base: LA_EQA_REPO,
    files: {
      benchmark: { name: "eqa-questions.json", url: `${LA_EQA_REPO}/la_eqa_benchmark/eqa-questions.json`, sha256: "db37c6bff8ae87a097b693970c7e42bdf441ffb6e052060bb124cbdeb63706e6" },
      evaluation: {
        name: "eqa_evaluation.py",
        url: `${LA_EQA_REPO}/src/contextual_long_term_reasoning/eqa_evaluation.py`,
        sha256: "601ea5b0d9d96bfe47ede7b5102315b1e59ff47eef4d3468001176266d011848",
      },
    },
  },
};

/**
 * The environment variable through which eqakit's own tests give the SHA-256 of synthetic
 * stand-ins for files they may not copy (JSON: `{"prompt/region.txt": "<sha256>", …}`, by file
 * name). A file named there is checked by that sum instead of its known ones, when downloaded
 * and when read. Not for use otherwise: the point of the known sums is that nobody can change them.
 */
export const FETCH_TEST_SUMS_VARIABLE = "EQAKIT_TEST_FETCH_SHA256";

/** Git's blob id of some bytes: SHA-1 of `blob <size>\0` followed by them. */
export function gitBlobId(data: Uint8Array): string {
  return createHash("sha1").update(`blob ${data.byteLength}\0`).update(data).digest("hex");
}

/**
 * Checks the bytes of a known file against its sums; returns what was checked ("sha256 … ok"),
 * or the first mismatch as a sentence.
 */
export function checkKnownFile(file: KnownFile, data: Uint8Array, env: NodeJS.ProcessEnv = process.env): { ok: true; checked: string[] } | { ok: false; problem: string } {
  const override = testSums(env)[file.name];
  const expected: [string, string | undefined, (d: Uint8Array) => string][] = override
    ? [["sha256", override, sha256Hex]]
    : [
        ["md5", file.md5, md5Hex],
        ["sha256", file.sha256, sha256Hex],
        ["git blob", file.gitBlob, gitBlobId],
      ];
  const checked: string[] = [];
  for (const [kind, want, digest] of expected) {
    if (want === undefined) continue;
    const got = digest(data);
    if (got !== want) return { ok: false, problem: `${file.name} has ${kind} ${got}, expected ${want}` };
    checked.push(`${kind} ${got} ok`);
  }
  if (checked.length === 0) throw new RangeError(`known file ${file.name} has no checksum`);
  return { ok: true, checked };
}

/** The test sums of {@link FETCH_TEST_SUMS_VARIABLE}, by file name (none unless set). */
export function testSums(env: NodeJS.ProcessEnv): Record<string, string> {
  const raw = env[FETCH_TEST_SUMS_VARIABLE];
  if (raw === undefined || raw === "") return {};
  try {
    const value: unknown = JSON.parse(raw);
    if (typeof value === "object" && value !== null && !Array.isArray(value) && Object.values(value).every((v) => typeof v === "string")) return value as Record<string, string>;
  } catch {
    // reported below
  }
  throw new UserError(`${FETCH_TEST_SUMS_VARIABLE} is not a JSON object of file names to SHA-256 sums`, { field: FETCH_TEST_SUMS_VARIABLE });
}

/** Where `eqa data fetch NAME` puts a dataset unless told otherwise. */
export function defaultDatasetDir(dataset: string, env: NodeJS.ProcessEnv = process.env): string {
  return join(userDataDir(env), dataset);
}

/** LA-EQA's question file, as `eqa data fetch la-eqa` writes it. */
export function defaultLaEqaBenchmarkPath(env: NodeJS.ProcessEnv = process.env): string {
  return join(defaultDatasetDir("la-eqa", env), KNOWN_DATASETS["la-eqa"]!.files.benchmark!.name);
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
  /** Replaces the dataset's `base` in every file's URL (`--base-url`): a mirror with the same layout. */
  baseUrl?: string;
  timeoutMs?: number;
}

export interface FetchedFile {
  key: string;
  path: string;
  url: string;
  md5: string;
  /** The checks made, e.g. `sha256 … ok`. */
  checked: string[];
  bytes: number;
}

/**
 * Downloads every file of a known dataset and checks its sums before putting it in place; a file
 * that fails its check is a UserError and is not written (the files checked before it are).
 */
export async function fetchDataset(name: string, options: FetchOptions = {}): Promise<FetchedFile[]> {
  const dataset = KNOWN_DATASETS[name];
  if (!dataset) {
    throw new UserError(`unknown dataset "${name}"`, {}, `known datasets: ${Object.keys(KNOWN_DATASETS).join(", ")}`);
  }
  const outDir = options.outDir ?? defaultDatasetDir(name);
  const fetched: FetchedFile[] = [];
  for (const [key, file] of Object.entries(dataset.files)) {
    const url = options.urls?.[key] ?? (options.baseUrl !== undefined ? options.baseUrl.replace(/\/+$/, "") + file.url.slice(dataset.base.length) : file.url);
    const body = await download(url, options.timeoutMs ?? 120_000);
    const check = checkKnownFile(file, body);
    if (!check.ok) throw new UserError(`downloaded ${check.problem}`, { file: url }, "the file at that URL is not the expected version; it was not written");
    const path = join(outDir, file.name);
    await writeFileAtomically(path, body);
    fetched.push({ key, path, url, md5: md5Hex(body), checked: check.checked, bytes: body.byteLength });
  }
  return fetched;
}

/**
 * The bytes at `url`: an http(s) URL is downloaded; a `file://` URL or a plain path (a mirror or
 * a copy the user already has) is read from the disk. Both are checked by the same sums after.
 */
async function download(url: string, timeoutMs: number): Promise<Uint8Array> {
  if (!/^https?:\/\//i.test(url)) {
    let path = url;
    if (/^file:/i.test(url)) {
      try {
        path = fileURLToPath(url);
      } catch (error) {
        throw new UserError(`not a file URL: ${describeError(error)}`, { file: url }, "write it as file:///absolute/path, or give the path itself");
      }
    } else if (/^[a-z][a-z0-9+.-]*:\/\//i.test(url)) {
      throw new UserError("eqakit downloads http(s) URLs and reads file:// URLs and paths", { file: url }, "give an http(s) URL, a file:// URL or a path");
    }
    try {
      return new Uint8Array(await readFile(path));
    } catch (error) {
      throw new UserError(`cannot read the local copy: ${describeError(error)}`, { file: path }, "check the path given to --url");
    }
  }
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

