import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { cpSync, existsSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { openEqaBenchmarkFile, projectRoot, temporaryDir } from "../helpers/paths.js";
import { cliEnv } from "../helpers/cli.js";

/**
 * docs/development.md's worked example of adding a run kind, kept true: its code blocks (the
 * definition, the command, the lines that add it to the program, its question view) are added as written to a
 * copy of `src/`, which must type-check, and whose `eqa` must then write a run of the new kind.
 */

const DOC = join(projectRoot, "docs", "development.md");
const SECTION = "### Adding a run kind: a worked example";

/** The example's code blocks, by the file their first line names. */
function exampleBlocks(): Map<string, string> {
  const text = readFileSync(DOC, "utf8");
  const start = text.indexOf(SECTION);
  assert.ok(start >= 0, `${DOC} has the section "${SECTION}"`);
  const end = text.indexOf("\n## ", start);
  const section = text.slice(start, end < 0 ? undefined : end);
  const blocks = new Map<string, string>();
  for (const match of section.matchAll(/```ts\n\/\/ (src\/[\w/.-]+): [^\n]*\n([\s\S]*?)```/g)) blocks.set(match[1]!, match[2]!);
  return blocks;
}

/** A copy of the project's sources (node_modules, prompts and package.json shared), with the example added. */
function sourcesWithExample(blocks: Map<string, string>): string {
  const root = temporaryDir("eqakit-kind-example-");
  cpSync(join(projectRoot, "src"), join(root, "src"), { recursive: true });
  for (const shared of ["node_modules", "prompts"]) symlinkSync(join(projectRoot, shared), join(root, shared));
  for (const file of ["package.json", "tsconfig.json"]) cpSync(join(projectRoot, file), join(root, file));
  writeFileSync(join(root, "tsconfig.check.json"), JSON.stringify({ extends: "./tsconfig.json", include: ["src"] }));

  const kindsFile = join(root, "src", "store", "kinds.ts");
  const kinds = readFileSync(kindsFile, "utf8");
  const close = "] as const satisfies readonly RunKindDefinition[];";
  assert.ok(kinds.includes(close), "RUN_KINDS ends as the example expects");
  writeFileSync(kindsFile, kinds.replace(close, `${blocks.get("src/store/kinds.ts")!}${close}`));

  writeFileSync(join(root, "src", "cli", "count.ts"), blocks.get("src/cli/count.ts")!);

  const viewsFile = join(root, "src", "report", "question-views.ts");
  const views = readFileSync(viewsFile, "utf8").split("\n");
  const table = views.findIndex((l) => l.startsWith("export const QUESTION_VIEWS"));
  const tableEnd = views.findIndex((l, i) => i > table && l === "};");
  assert.ok(table >= 0 && tableEnd > table, "QUESTION_VIEWS is one table, as the example expects");
  views.splice(tableEnd, 0, blocks.get("src/report/question-views.ts")!.trimEnd());
  writeFileSync(viewsFile, views.join("\n"));

  const programFile = join(root, "src", "cli", "program.ts");
  const lines = readFileSync(programFile, "utf8").split("\n");
  const [importLine, addLine] = blocks.get("src/cli/program.ts")!.trim().split("\n");
  const lastIndex = (test: (line: string) => boolean): number => lines.reduce((last, line, i) => (test(line) ? i : last), -1);
  const lastImport = lastIndex((l) => l.startsWith("import "));
  const lastAdd = lastIndex((l) => /^\s*program\.addCommand\(/.test(l));
  assert.ok(lastImport >= 0 && lastAdd > lastImport, "the program adds its commands one by one, as the example expects");
  lines.splice(lastAdd + 1, 0, `  ${addLine!}`);
  lines.splice(lastImport + 1, 0, importLine!);
  writeFileSync(programFile, lines.join("\n"));
  return root;
}

describe("docs/development.md: adding a run kind", () => {
  test("the worked example, added as written, type-checks and writes a run of its kind", async () => {
    const blocks = exampleBlocks();
    assert.deepEqual([...blocks.keys()].sort(), ["src/cli/count.ts", "src/cli/program.ts", "src/report/question-views.ts", "src/store/kinds.ts"]);
    const root = sourcesWithExample(blocks);

    const tsc = spawnSync(process.execPath, [join(projectRoot, "node_modules", "typescript", "bin", "tsc"), "-p", join(root, "tsconfig.check.json"), "--noEmit"], { cwd: root, encoding: "utf8" });
    assert.equal(tsc.status, 0, `the copy with the example does not type-check:\n${tsc.stdout}${tsc.stderr}`);

    const out = join(temporaryDir(), "counted");
    const run = (args: string[]) => spawnSync(process.execPath, ["--import", "tsx", join(root, "src", "cli", "main.ts"), ...args], { cwd: root, encoding: "utf8", env: cliEnv(temporaryDir()) });
    const first = run(["count", "--benchmark", openEqaBenchmarkFile, "--out", out]);
    assert.equal(first.status, 0, first.stderr);
    assert.match(first.stdout, /wrote .*counted\/\{counts\.json,summary\.json\}/);

    const benchmark = JSON.parse(readFileSync(openEqaBenchmarkFile, "utf8")) as { category: string }[];
    const counts = JSON.parse(readFileSync(join(out, "counts.json"), "utf8")) as Record<string, number>;
    assert.equal(Object.values(counts).reduce((a, b) => a + b, 0), benchmark.length);
    assert.equal(JSON.parse(readFileSync(join(out, "manifest.json"), "utf8")).kind, "question-count");
    assert.ok(existsSync(join(out, "commands.jsonl")), "the program records the command line in the folder of a kind's command");
    const store = (await import(pathToFileURL(join(root, "src", "store", "index.ts")).href)) as typeof import("../../src/store/index.js");
    assert.equal(store.inferRunKind(out), "question-count");
    assert.equal((store.RUN_KIND as Record<string, string>)["question-count"], "question-count");

    // the same benchmark resumes into the folder; another set under the same ids is refused (exit 2)
    assert.equal(run(["count", "--benchmark", openEqaBenchmarkFile, "--out", out]).status, 0);
    const other = join(temporaryDir(), "other.json");
    writeFileSync(other, JSON.stringify((JSON.parse(readFileSync(openEqaBenchmarkFile, "utf8")) as { question: string }[]).map((q) => ({ ...q, question: `${q.question} Really?` }))));
    const refused = run(["count", "--benchmark", other, "--out", out]);
    assert.equal(refused.status, 2, refused.stderr);
  });
});
