import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, readdirSync } from "node:fs";
import { join, relative } from "node:path";
import { RUN_KIND, RUN_KINDS } from "../../src/store/index.js";
import { projectRoot } from "../helpers/paths.js";

/**
 * A run kind is named in `src/store/kinds.ts` alone: everywhere else code refers to it through
 * `RUN_KIND` (`openRun({ kind: RUN_KIND.explore })`), so that a kind renamed there is renamed
 * everywhere and a kind that does not exist does not compile.
 */

const KINDS_FILE = join("src", "store", "kinds.ts");

/** `kind` fields that are not run kinds: the agent protocol's decisions (an action, an answer, a stop). */
const OTHER_KINDS: readonly { file: string; line: RegExp }[] = [
  { file: join("src", "agents", "external", "active.ts"), line: /CheckedDecision|return \{ kind: "answer", answer: d\.answer/ },
  { file: join("src", "agents", "explore", "external.ts"), line: /decision\.kind === "answer"/ },
];

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith(".ts") ? [path] : [];
  });
}

const escape = (s: string): string => s.replace(/[.*+?^${}()|[\]\\-]/g, "\\$&");

/**
 * The ways code names a run kind by a string: a `kind` field or variable set, typed, compared or
 * defaulted to it (`kind: "explore"`, `runKind?: "rm-score" | …`, `run.kind === "demo"`,
 * `inferRunKind(dir) === "demo"`, `kind ?? "rm-score"`), a `case` of a switch on a kind, and the
 * store's functions that take a kind (`readShardSet(dirs, "explore")`).
 */
function kindPatterns(name: string): RegExp[] {
  const n = `"${escape(name)}"`;
  const kindWord = String.raw`\w*[kK]ind\w*`;
  return [
    new RegExp(String.raw`\b${kindWord}\??\s*:\s*(?:"[^"]*"\s*\|\s*)*${n}`),
    new RegExp(String.raw`\b${kindWord}(?:\([^()]*\))?\s*[!=]==?\s*${n}`),
    new RegExp(String.raw`${n}\s*[!=]==?\s*[\w.]*[kK]ind\b`),
    new RegExp(String.raw`\b${kindWord}\s*\?\?\s*${n}`),
    new RegExp(String.raw`\b(?:readShardSet|reopenRun|runKindDefinition|isRunKind)\([^()]*(?<!\[)${n}`),
  ];
}

/** The `case "NAME":` lines of switches on a kind (`switch (run.kind)`). */
function kindCases(lines: readonly string[], names: readonly string[]): number[] {
  const found: number[] = [];
  let onKind = false;
  for (const [i, line] of lines.entries()) {
    const opened = /\bswitch\s*\(([^)]*)\)/.exec(line);
    if (opened) onKind = /[kK]ind/.test(opened[1]!);
    const literal = /\bcase\s+"([^"]+)"\s*:/.exec(line);
    if (onKind && literal && names.includes(literal[1]!)) found.push(i);
  }
  return found;
}

/** Each place under `root`'s `src/` (outside kinds.ts) that names a run kind by a string, as `file:line: text`. */
function runKindLiterals(root: string): string[] {
  const names = RUN_KINDS.map((k) => k.kind);
  const patterns = names.flatMap(kindPatterns);
  const found: string[] = [];
  for (const path of sourceFiles(join(root, "src"))) {
    const file = relative(root, path);
    if (file === KINDS_FILE) continue;
    const lines = readFileSync(path, "utf8").split("\n");
    const other = OTHER_KINDS.filter((o) => o.file === file);
    const hits = new Set(kindCases(lines, names));
    for (const [i, line] of lines.entries()) if (patterns.some((p) => p.test(line))) hits.add(i);
    for (const i of [...hits].sort((a, b) => a - b)) {
      if (!other.some((o) => o.line.test(lines[i]!))) found.push(`${file}:${i + 1}: ${lines[i]!.trim().slice(0, 160)}`);
    }
  }
  return found;
}

describe("run kinds are named once", () => {
  test("no file under src/ but kinds.ts names a run kind by a string", () => {
    assert.deepEqual(runKindLiterals(projectRoot), []);
  });

  test("the check finds each way of naming a kind by a string, and not other kinds or other strings", () => {
    const samples = [
      'openRun({ dir, kind: "explore", settings });',
      "  kind: \"rm-score\";",
      'runKind?: "rm-score" | "rm-bench";',
      'if (run.kind === "reproduce") return [];',
      'if (inferRunKind(root) === "demo") {',
      '"llm-match" !== summary.kind',
      'kind: options.runKind ?? "rm-score",',
      'const set = await readShardSet(dirs, "explore");',
    ];
    const names = RUN_KINDS.map((k) => k.kind);
    const patterns = names.flatMap(kindPatterns);
    for (const sample of samples) assert.ok(patterns.some((p) => p.test(sample)), sample);
    for (const other of ['const question = "answer";', 'kind: RUN_KIND.explore,', 'readShardSet(dirs, RUN_KIND["llm-match"])', 'format: "explore"', 'kind: "images",', 'role: "agent"']) {
      assert.ok(!patterns.some((p) => p.test(other)), other);
    }
    assert.deepEqual(kindCases(["switch (run.kind) {", '  case "answer":', "}", "switch (role) {", '  case "answer":'], names), [1]);
  });

  test("RUN_KIND names each kind of RUN_KINDS by itself, and no other", () => {
    assert.deepEqual(Object.entries(RUN_KIND), RUN_KINDS.map((k) => [k.kind, k.kind]));
  });
});
