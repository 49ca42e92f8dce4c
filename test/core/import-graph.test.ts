import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readFileSync, readdirSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import { projectRoot } from "../helpers/paths.js";

/**
 * The layering rules of DESIGN.md, read from the import statements of src/**\/*.ts: data flows
 * one way through the folders, each folder is entered through its index.ts, and the `eqa`
 * command files stay independent of one another.
 */

const srcDir = join(projectRoot, "src");

/** DESIGN.md's order: a folder imports only from folders before it. */
const FOLDER_ORDER = ["core", "data", "store", "episodes", "geometry", "models", "sim", "agents", "eval", "generate", "reward", "reproduce", "report", "cli"] as const;

/** Files of src/cli that assemble commands: the program, its entry point and command groups. */
const CLI_ASSEMBLERS = new Set(["main.ts", "program.ts", "rm.ts", "data.ts", "generate.ts"]);

function sourceFiles(dir: string): string[] {
  const files: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) files.push(...sourceFiles(path));
    else if (entry.name.endsWith(".ts") && !entry.name.endsWith(".d.ts")) files.push(path);
  }
  return files.sort();
}

interface ImportStatement {
  specifier: string;
  /** `import type …`, or every name imported with `type`: erased when compiled, nothing loads. */
  typeOnly: boolean;
}

/** Static imports, re-exports, side-effect imports and dynamic imports of a source text. */
function importStatements(text: string): ImportStatement[] {
  const code = text.replace(/\/\*[\s\S]*?\*\//g, "").replace(/^\s*\/\/.*$/gm, "");
  const found: ImportStatement[] = [];
  for (const m of code.matchAll(/^\s*(import|export)\s([^;]*?)\sfrom\s*["']([^"']+)["']/gm)) {
    const clause = m[2]!.trim();
    const names = /^\{([^}]*)\}$/.exec(clause)?.[1]?.split(",").map((n) => n.trim()).filter((n) => n !== "");
    const typeOnly = clause.startsWith("type ") || (names !== undefined && names.length > 0 && names.every((n) => n.startsWith("type ")));
    found.push({ specifier: m[3]!, typeOnly });
  }
  for (const m of code.matchAll(/^\s*import\s*["']([^"']+)["']/gm)) found.push({ specifier: m[1]!, typeOnly: false });
  for (const m of code.matchAll(/\bimport\(\s*["']([^"']+)["']\s*\)/g)) found.push({ specifier: m[1]!, typeOnly: false });
  return found;
}

/** The .ts file a relative specifier names (`./x.js` → `x.ts`, `./dir` → `dir/index.ts`). */
function resolveLocal(from: string, specifier: string): string | null {
  if (!specifier.startsWith(".")) return null;
  const base = resolve(dirname(from), specifier);
  for (const candidate of [base.replace(/\.js$/, ".ts"), `${base}.ts`, join(base, "index.ts")]) {
    if (candidate.endsWith(".ts") && existsSync(candidate)) return candidate;
  }
  return base.endsWith(".json") ? null : base;
}

interface Edge extends ImportStatement {
  from: string;
  to: string;
}

function importGraph(): Map<string, Edge[]> {
  const graph = new Map<string, Edge[]>();
  for (const file of sourceFiles(srcDir)) {
    const edges: Edge[] = [];
    for (const statement of importStatements(readFileSync(file, "utf8"))) {
      const to = resolveLocal(file, statement.specifier);
      if (to) edges.push({ from: file, to, ...statement });
    }
    graph.set(file, edges);
  }
  return graph;
}

const rel = (path: string): string => relative(srcDir, path).split(sep).join("/");
const folderOf = (path: string): string | null => {
  const parts = rel(path).split("/");
  return parts.length > 1 ? parts[0]! : null;
};

/** Every cycle of imports that load code (type-only imports are erased), as a path of files. */
function cycles(graph: Map<string, Edge[]>): string[][] {
  const found: string[][] = [];
  const state = new Map<string, "open" | "done">();
  const stack: string[] = [];
  const visit = (file: string): void => {
    state.set(file, "open");
    stack.push(file);
    for (const { to, typeOnly } of graph.get(file) ?? []) {
      if (typeOnly) continue;
      const s = state.get(to);
      if (s === "open") found.push([...stack.slice(stack.indexOf(to)), to].map(rel));
      else if (s === undefined && graph.has(to)) visit(to);
    }
    stack.pop();
    state.set(file, "done");
  };
  for (const file of graph.keys()) if (!state.has(file)) visit(file);
  return found;
}

const graph = importGraph();
const edges = [...graph.values()].flat();

describe("src import graph", () => {
  test("every relative import names a file that exists", () => {
    const missing = edges.filter((e) => !existsSync(e.to)).map((e) => `${rel(e.from)} imports ${e.specifier}`);
    assert.deepEqual(missing, []);
    assert.ok(graph.size > 100, `read ${graph.size} files under src/`);
  });

  test("no file loads itself back through others (no import cycles)", () => {
    assert.deepEqual(cycles(graph).map((c) => c.join(" → ")), []);
  });

  test("every folder of src/ has its place in DESIGN.md's order", () => {
    const folders = readdirSync(srcDir, { withFileTypes: true }).filter((d) => d.isDirectory()).map((d) => d.name);
    assert.deepEqual([...folders].sort(), [...FOLDER_ORDER].sort());
  });

  test("a folder imports only folders above it in DESIGN.md's order, and only through their index.ts", () => {
    const wrong: string[] = [];
    for (const e of edges) {
      const from = folderOf(e.from);
      const to = folderOf(e.to);
      if (from === null || to === null || from === to) continue;
      const rankFrom = FOLDER_ORDER.indexOf(from as (typeof FOLDER_ORDER)[number]);
      const rankTo = FOLDER_ORDER.indexOf(to as (typeof FOLDER_ORDER)[number]);
      if (rankTo >= rankFrom) wrong.push(`${rel(e.from)} imports ${rel(e.to)}: ${to} is not above ${from}`);
      else if (rel(e.to) !== `${to}/index.ts`) wrong.push(`${rel(e.from)} imports ${rel(e.to)}: not through ${to}/index.ts`);
    }
    assert.deepEqual(wrong, []);
  });

  test("no command file in src/cli imports another command file; they share only option and progress helpers", () => {
    const cliDir = join(srcDir, "cli");
    const isCommandFile = (path: string): boolean => /export function \w+Command\(/.test(readFileSync(path, "utf8"));
    const wrong = edges
      .filter((e) => dirname(e.from) === cliDir && dirname(e.to) === cliDir)
      .filter((e) => !CLI_ASSEMBLERS.has(rel(e.from).slice("cli/".length)) && isCommandFile(e.to))
      .map((e) => `${rel(e.from)} imports ${rel(e.to)}`);
    assert.deepEqual(wrong, []);
    const helpers = sourceFiles(cliDir).filter((f) => !isCommandFile(f) && !CLI_ASSEMBLERS.has(rel(f).slice("cli/".length)));
    assert.ok(helpers.map(rel).includes("cli/options.ts"), "cli/options.ts holds the shared flags");
  });
});
