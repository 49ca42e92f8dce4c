import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Command } from "commander";
import { buildProgram } from "../../src/cli/program.js";
import { RUN_KINDS, inferRunKind, runCommands, runFolderOf, type RunKindDefinition } from "../../src/store/index.js";
import { cliEnv, runCli } from "../helpers/cli.js";
import { temporaryDir } from "../helpers/paths.js";
import { tagDataset } from "../eval/structured-fixtures.js";

/** Commands whose --out is not a run folder, and what they write instead. */
const OUT_WITHOUT_RUN: Record<string, string> = {
  "data fetch": "a benchmark's downloaded files",
  "data convert a-eqa": "an active-episodes file",
  "data prepare openeqa": "OpenEQA's frame folders, made from the user's own scans and archives",
  "frames extract": "a folder of frames",
  "memory import": "one episode's memory added to a memory folder",
  report: "an HTML file",
  "rm export rft": "training files",
  "rm export grpo": "training files",
  "sim home": "a home and its plan",
  "sim record": "a recording",
};

/** Every command of `eqa` with its path (`rm score`). */
function commandsOf(command: Command, prefix: string[] = []): { path: string; command: Command }[] {
  return command.commands.flatMap((c) => {
    const path = [...prefix, c.name()];
    return [{ path: path.join(" "), command: c }, ...commandsOf(c, path)];
  });
}

const program = buildProgram();
const commands = new Map(commandsOf(program).map((c) => [c.path, c.command]));
const optionOf = (command: Command, flag: string) => command.options.find((o) => o.long === flag);

describe("the run kinds", () => {
  test("every command whose --out is a run folder is named by a kind, and every other --out says what it writes", () => {
    const named = new Set(runCommands());
    const missing = [...commands].filter(([path, c]) => optionOf(c, "--out") && !named.has(path) && !(path in OUT_WITHOUT_RUN)).map(([path]) => path);
    assert.deepEqual(missing, [], "a command with --out that is neither a kind's command nor listed as writing no run");
    for (const path of Object.keys(OUT_WITHOUT_RUN)) assert.ok(optionOf(commands.get(path)!, "--out"), `eqa ${path} has --out`);
  });

  test("each kind has every part: a description, commands that exist with their flags, a summary or not, a way to be recognised", () => {
    const kinds = RUN_KINDS.map((k) => k.kind);
    assert.equal(new Set(kinds).size, kinds.length, "each kind once");
    const definitions: readonly RunKindDefinition[] = RUN_KINDS;
    for (const definition of definitions) {
      assert.match(definition.kind, /^[a-z]+(-[a-z]+)*$/, definition.kind);
      assert.ok(definition.description.length > 10, `${definition.kind}: a description`);
      assert.ok(definition.commands.length > 0, `${definition.kind}: the commands that write it`);
      assert.equal(typeof definition.summary, "boolean");
      assert.equal(typeof definition.recognise, "function");
      for (const written of definition.commands) {
        const command = commands.get(written.command);
        assert.ok(command, `${definition.kind}: eqa ${written.command} exists`);
        const out = optionOf(command, "--out");
        assert.ok(out, `eqa ${written.command} has --out`);
        for (const flag of [written.flag, written.noRunWith]) if (flag) assert.ok(optionOf(command, flag), `eqa ${written.command} has ${flag}`);
        if (written.defaultOut !== undefined) assert.ok(!out.mandatory, `eqa ${written.command}'s --out has a default, so it is optional`);
      }
      // a folder whose summary names the kind is of that kind
      const dir = temporaryDir();
      writeFileSync(join(dir, "summary.json"), JSON.stringify({ kind: definition.kind }));
      assert.equal(inferRunKind(dir), definition.kind);
    }
  });

  test("a run command's folder is its --out, or the default of the kind its flags select; a command that writes no run has none", () => {
    const now = new Date("2026-03-04T05:06:07Z");
    assert.equal(runFolderOf("reproduce", {}, now), join("runs", "reproduce-20260304-050607"));
    assert.equal(runFolderOf("reproduce", { published: true }, now), undefined, "eqa reproduce --published writes the published table alone");
    assert.equal(runFolderOf("rm build", {}, now), join("runs", "rm-build-20260304-050607"));
    assert.equal(runFolderOf("score-tag", { validate: true }, now), join("runs", "validate-tag-20260304-050607"));
    assert.equal(runFolderOf("score-tag", { out: "mine" }, now), "mine");
    assert.equal(runFolderOf("rm review", { export: "sheet.csv" }, now), undefined, "only --import writes a run");
    assert.equal(runFolderOf("rm review", { import: "sheet.csv", out: "reviewed" }, now), "reviewed");
    assert.equal(runFolderOf("merge", { out: "merged" }, now), "merged");
    assert.equal(runFolderOf("report", { out: "report.html" }, now), undefined);
  });

  test("a run written into the default --out keeps its command in commands.jsonl", async () => {
    const cwd = temporaryDir();
    const questions = tagDataset();
    writeFileSync(join(cwd, "questions.json"), JSON.stringify(questions));
    writeFileSync(join(cwd, "predictions.json"), JSON.stringify(questions.map((q) => ({ question_id: q.question_id, answer: q.structured_answer }))));
    mkdirSync(join(cwd, "runs"));
    const result = await runCli(["score-tag", "--questions", "questions.json", "--predictions", "predictions.json", "--similarity", "exact"], cliEnv(cwd), cwd);
    assert.equal(result.code, 0, result.stderr);
    const [folder, ...others] = readdirSync(join(cwd, "runs"));
    assert.match(folder ?? "", /^score-tag-\d{8}-\d{6}$/);
    assert.deepEqual(others, []);
    const [line] = readFileSync(join(cwd, "runs", folder!, "commands.jsonl"), "utf8").trim().split("\n");
    assert.equal((JSON.parse(line!) as { command: string }).command, "eqa score-tag --questions questions.json --predictions predictions.json --similarity exact");
  });
});
