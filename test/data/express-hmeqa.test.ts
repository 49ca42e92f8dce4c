import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { basename, join } from "node:path";
import {
  expressTrajectoryLength,
  findHmEqaInitPose,
  loadExpressBench,
  loadHmEqaInitPoses,
  loadHmEqaQuestions,
  parseCsvRows,
  parseExpressBench,
  parseHmEqaQuestions,
  parsePythonStringList,
} from "../../src/data/index.js";
import { UserError } from "../../src/core/index.js";
import { expressBenchDir, hmEqaDir, temporaryDir } from "../helpers/paths.js";

// synthetic records and rows of the benchmarks' formats (test/fixtures/*/SOURCE.md)
const expressFile = join(expressBenchDir, "express-bench.synthetic.json");
const questionsFile = join(hmEqaDir, "questions.csv");
const posesFile = join(hmEqaDir, "scene_init_poses.csv");

/** What Python's csv module and ast.literal_eval make of the fixtures (test/fixtures/hm-eqa/make.py). */
interface PythonReference {
  csvRows: Record<string, string[][]>;
  trickyCsv: { text: string; rows: string[][] };
  choices: string[][];
  referenceSplitMangled: number;
  trickyLiterals: { texts: string[]; values: string[][] };
}
const python = JSON.parse(readFileSync(join(hmEqaDir, "python-reference.json"), "utf8")) as PythonReference;

function rawExpress(): Record<string, unknown>[] {
  return JSON.parse(readFileSync(expressFile, "utf8")) as Record<string, unknown>[];
}

describe("EXPRESS-Bench loader", () => {
  test("reads the records with poses, distance and the trajectory in step order", async () => {
    const records = await loadExpressBench(expressFile);
    const raw = rawExpress();
    assert.equal(records.length, 2);
    const r = records[0]!;
    const q = raw[0]!;
    assert.equal(r.sceneId, "hm3d/train/00006-HkseAnWCgqk");
    assert.equal(r.type, "state");
    assert.equal(r.question, q.question);
    assert.deepEqual(r.startPosition, q.start_position);
    assert.deepEqual(r.goalRotation, q.goal_rotation);
    assert.equal(r.geodesicDistance, q.geodesic_distance);
    assert.equal(r.actions.length, 54);
    assert.equal(r.stepLength, 54);
    assert.deepEqual(r.actions.map((s) => s.index), [...Array(54).keys()]);
    assert.ok(r.actions.every((s) => ["move_forward", "turn_left", "turn_right"].includes(s.action)));
    const rawSteps = q.actions as Record<string, { position: number[] }>;
    assert.deepEqual(r.actions[10]!.position, rawSteps.step_10!.position);
    // Forward steps are 0.25 m: the trajectory is a multiple of 0.25 m and at least the geodesic distance.
    const length = expressTrajectoryLength(r);
    const forward = r.actions.filter((s) => s.action === "move_forward").length;
    assert.ok(Math.abs(length - 0.25 * forward) < 1e-3, `${length} vs ${forward} forward steps`);
    assert.ok(length >= r.geodesicDistance - 1e-3);
  });

  test("orders steps numerically whatever the key order", () => {
    const raw = rawExpress().slice(0, 1);
    const actions = raw[0]!.actions as Record<string, unknown>;
    raw[0]!.actions = Object.fromEntries(Object.entries(actions).reverse());
    const [record] = parseExpressBench(raw, "x.json");
    assert.deepEqual(record!.actions.map((s) => s.index), [...Array(54).keys()]);
  });

  test("broken records name the file, the record and the field", async () => {
    const dir = temporaryDir();
    const cases: [string, (r: Record<string, unknown>) => void, RegExp][] = [
      ["missing.json", (r) => delete r.geodesic_distance, /record 2, field "geodesic_distance": is missing/],
      ["pose.json", (r) => (r.start_position = [1, 2]), /record 2, field "start_position"/],
      ["rotation.json", (r) => (r.goal_rotation = [1, 0, 0, "0"]), /record 2, field "goal_rotation.3"/],
      ["step.json", (r) => ((r.actions as Record<string, unknown>).step_3 = { action: "move_forward", position: [0, 0], rotation: [1, 0, 0, 0] }), /field "actions.step_3.position"/],
      ["key.json", (r) => ((r.actions as Record<string, unknown>).stepX = { action: "x", position: [0, 0, 0], rotation: [1, 0, 0, 0] }), /field "actions.stepX": unexpected step key/],
      ["gap.json", (r) => delete (r.actions as Record<string, unknown>).step_7, /record 2, field "actions": .*step_7 is missing/],
    ];
    for (const [name, breakIt, expected] of cases) {
      const raw = rawExpress();
      breakIt(raw[1]!);
      const file = join(dir, name);
      writeFileSync(file, JSON.stringify(raw));
      await assert.rejects(loadExpressBench(file), (e: unknown) => {
        assert.ok(e instanceof UserError, String(e));
        assert.ok(e.message.includes(file), e.message);
        assert.match(e.message, expected);
        return true;
      });
    }
    const notArray = join(dir, "object.json");
    writeFileSync(notArray, "{}");
    await assert.rejects(loadExpressBench(notArray), /expected a JSON array of EXPRESS-Bench records/);
    const truncated = join(dir, "truncated.json");
    writeFileSync(truncated, readFileSync(expressFile, "utf8").slice(0, 500));
    await assert.rejects(loadExpressBench(truncated), /malformed JSON/);
  });
});

describe("CSV parser", () => {
  test("quoted fields with commas, doubled quotes, line breaks and CRLF", () => {
    const text = 'a,b,c\r\n1,"x, y","say ""hi"""\r\n2,"two\nlines",\n3,,"" \n';
    assert.deepEqual(parseCsvRows(text), [
      ["a", "b", "c"],
      ["1", "x, y", 'say "hi"'],
      ["2", "two\nlines", ""],
      ["3", "", " "],
    ]);
    assert.deepEqual(parseCsvRows("a,b"), [["a", "b"]]);
  });

  test("agrees with Python's csv module on blank lines, lone CR and quotes mid-field", () => {
    assert.deepEqual(parseCsvRows(python.trickyCsv.text), python.trickyCsv.rows);
  });

  test("an unterminated quote names the file and line", () => {
    assert.throws(() => parseCsvRows('a,b\n1,"open\n2,3\n', "bad.csv"), /bad\.csv:2: unterminated quoted field/);
  });

  test("agrees with Python's csv module on HM-EQA-format files", () => {
    for (const file of [questionsFile, posesFile]) {
      assert.deepEqual(parseCsvRows(readFileSync(file, "utf8")), python.csvRows[basename(file)], file);
    }
  });
});

describe("Python list literals", () => {
  test("single and double quotes, apostrophes, escapes, adjacent literals", () => {
    assert.deepEqual(parsePythonStringList(`['Yes', "It's open", 'a\\'b', "say \\"x\\"", 'tab\\there']`), ["Yes", "It's open", "a'b", 'say "x"', "tab\there"]);
    assert.deepEqual(parsePythonStringList(`['\\x41\\101\\u00e9\\U0001F600', r'raw\\n', '\\q', 'a' "b", ]`), ["AAé😀", "raw\\n", "\\q", "ab"]);
    assert.deepEqual(parsePythonStringList(" [] "), []);
    assert.deepEqual(parsePythonStringList(`['''tri'ple''']`), ["tri'ple"]);
    for (const bad of [`['a'`, `['a' 'b`, `[1, 'a']`, `['a'] x`, `'a'`, `[['a']]`, `['\\x4']`]) {
      assert.throws(() => parsePythonStringList(bad), /not a Python list of strings/, bad);
    }
  });

  test("agrees with ast.literal_eval on every choices field of an HM-EQA-format file", () => {
    const questions = parseHmEqaQuestions(readFileSync(questionsFile, "utf8"), questionsFile);
    assert.equal(questions.length, 24);
    assert.deepEqual(questions.map((q) => q.choices), python.choices);
    // The choices that a split on "', '" would mangle: double-quoted, with an apostrophe.
    const apostrophes = questions.flatMap((q) => q.choices).filter((c) => c.includes("'"));
    assert.ok(apostrophes.includes("It's open"), apostrophes.join(" | "));
    assert.ok(apostrophes.length >= 15, String(apostrophes.length));
    // The reference's split rule, `[c.split("'")[1] for c in choices.split("',")]`, gets these wrong.
    const referenceSplit = (text: string): string[] => text.split("',").map((c) => c.split("'")[1] ?? "");
    const raw = parseCsvRows(readFileSync(questionsFile, "utf8")).slice(1).map((row) => row[3]!);
    const mangled = raw.filter((text, k) => JSON.stringify(referenceSplit(text)) !== JSON.stringify(questions[k]!.choices));
    assert.equal(mangled.length, python.referenceSplitMangled);
    assert.ok(raw.filter((text) => !text.includes('"')).every((text) => referenceSplit(text).length === 4));
  });

  test("agrees with ast.literal_eval on tricky literals", () => {
    assert.deepEqual(python.trickyLiterals.texts.map(parsePythonStringList), python.trickyLiterals.values);
  });
});

describe("HM-EQA loaders", () => {
  test("reads questions with letters, answer text and categories", async () => {
    const questions = await loadHmEqaQuestions(questionsFile);
    const first = questions[0]!;
    assert.equal(first.scene, "00004-VqCaAuuoeWk");
    assert.equal(first.floor, 0);
    assert.deepEqual(first.choices, ["(Do not choose this option)", "Yes, it is on", "No, it is not on", "(Do not choose this option)"]);
    assert.equal(first.answer, "B");
    assert.equal(first.answerText, "Yes, it is on");
    assert.equal(first.label, "existence");
    assert.deepEqual(new Set(questions.map((q) => q.label)), new Set(["location", "existence", "state", "identification", "count"]));
  });

  test("reads start poses and finds each question's", async () => {
    const poses = await loadHmEqaInitPoses(posesFile);
    assert.equal(poses.length, 10);
    assert.deepEqual(poses[0], { sceneFloor: "00004-VqCaAuuoeWk_0", scene: "00004-VqCaAuuoeWk", floor: 0, position: [-0.3, 0.12, 0], angle: 0 });
    const questions = await loadHmEqaQuestions(questionsFile);
    assert.ok(questions.every((q) => findHmEqaInitPose(poses, q) !== undefined));
  });

  test("broken files name the file, the record and the field", async () => {
    const dir = temporaryDir();
    const lines = readFileSync(questionsFile, "utf8").split("\n");
    const header = lines[0]!;
    const write = (name: string, text: string): string => {
      const file = join(dir, name);
      writeFileSync(file, text);
      return file;
    };
    const cases: [string, string, RegExp][] = [
      ["choices.csv", `${header}\ns,0,Q?,"['a', 'b'",Q? A) a B) b,A,state\n`, /choices\.csv:2, record 1, field "choices": not a Python list of strings/],
      ["answer.csv", `${header}\ns,0,Q?,"['a', 'b']",Q?,C,state\n`, /record 1, field "answer": "C" is not one of the letters A-B/],
      ["floor.csv", `${header}\ns,0,Q?,"['a']",Q?,A,state\ns,one,Q?,"['a']",Q?,A,state\n`, /floor\.csv:3, record 2, field "floor": "one" is not a number/],
      ["fields.csv", `${header}\ns,0,Q?\n`, /fields\.csv:2, record 1: has 3 fields, the header has 7/],
      ["header.csv", `scene,floor,question\ns,0,Q?\n`, /missing column\(s\) choices, question_formatted, answer, label/],
      ["quote.csv", `${header}\ns,0,"Q?,x\n`, /quote\.csv:2: unterminated quoted field/],
    ];
    for (const [name, text, expected] of cases) {
      const file = write(name, text);
      await assert.rejects(loadHmEqaQuestions(file), (e: unknown) => {
        assert.ok(e instanceof UserError, String(e));
        assert.ok(e.message.includes(file), e.message);
        assert.match(e.message, expected);
        return true;
      });
    }
    const poses = write("poses.csv", "scene_floor,init_x,init_y,init_z,init_angle\n00001-x_0,1,2,3,0.5\nnofloor,1,2,3,0.5\n");
    await assert.rejects(loadHmEqaInitPoses(poses), /record 2, field "scene_floor": "nofloor" is not SCENE_FLOOR/);
    await assert.rejects(loadHmEqaQuestions(join(dir, "absent.csv")), /absent\.csv: file not found/);
  });
});
