import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { choiceLetter, loadActiveEpisodes } from "../../src/agents/index.js";
import { generateHome } from "../../src/sim/index.js";
import { cliEnv, runCli } from "../helpers/cli.js";
import { lastUserText, openAiReply, withModelServer } from "../helpers/model-server.js";
import { hmEqaDir, temporaryDir } from "../helpers/paths.js";

const SMALL = ["--width", "64", "--height", "48", "--max-steps", "20", "--no-cache"];

/** HM-EQA's two files in their format (Python csv, choices as a list literal), in built-in homes 0 and 1. */
function writeHmEqa(dir: string): string {
  const questions = join(dir, "questions.csv");
  writeFileSync(
    questions,
    [
      "scene,floor,question,choices,question_formatted,answer,label",
      `home-0,0,What colour is the sofa?,"['Grey', 'Blue', 'Red', 'Green']",What colour is the sofa? A) Grey B) Blue C) Red D) Green. Answer:,B,identification`,
      `home-1,0,Is the oven's light on?,"[""Yes, it's on"", ""No, it's off""]","Is the oven's light on? A) Yes, it's on B) No, it's off. Answer:",A,state`,
      `home-0,0,Where is the laundry basket?,"['In the bathroom', 'Next to the bed', 'In the hallway', 'On the stairs']",Where is the laundry basket? A) In the bathroom B) Next to the bed C) In the hallway D) On the stairs. Answer:,C,location`,
    ].join("\r\n") + "\r\n",
  );
  const pose = (k: number): string => {
    const [x, y, z] = generateHome(k).start.position;
    return `home-${k}_0,${x},${y},${z},0.5`;
  };
  writeFileSync(join(dir, "scene_init_poses.csv"), ["scene_floor,init_x,init_y,init_z,init_angle", pose(0), pose(1)].join("\r\n") + "\r\n");
  return questions;
}

describe("eqa explore --episodes questions.csv (HM-EQA)", () => {
  test("asks each question with its choices as letters, reads a letter from the reply and reports accuracy beside the other metrics, as explore-eqa scores HM-EQA", async () => {
    const dir = temporaryDir();
    const questions = writeHmEqa(dir);
    const out = join(dir, "run");
    const asked: string[] = [];
    await withModelServer(
      (request) => {
        const text = lastUserText(request);
        asked.push(text);
        if (text.includes("sofa")) return openAiReply("B");
        if (text.includes("oven")) return openAiReply("The answer is B.");
        return openAiReply("I cannot tell from here.");
      },
      async (server) => {
        const r = await runCli(["explore", "--episodes", questions, "--env", "builtin", "--agent", "frontier", "--em-agent", "blind", "--model", "openai/gpt-4o-mini", "--model-base-url", `${server.url}/v1`, "--out", out, ...SMALL], cliEnv(dir, { OPENAI_API_KEY: "sk-test" }));
        assert.equal(r.code, 0, r.stderr);
        assert.match(r.stdout, /3\/3 episodes finished/);
        assert.match(r.stdout, /multiple-choice accuracy: 33\.3 % \(1 of 3 correct, 1 reply without a choice letter\)/);
      },
    );
    const sofa = asked.find((t) => t.includes("sofa"))!;
    assert.match(sofa, /What colour is the sofa\?\nA\. Grey\nB\. Blue\nC\. Red\nD\. Green\nAnswer with the letter of one option only\./);
    assert.match(asked.find((t) => t.includes("oven"))!, /A\. Yes, it's on\nB\. No, it's off\n/);

    const summary = JSON.parse(readFileSync(join(out, "summary.json"), "utf8")) as { metrics: { multipleChoice: { accuracy: number; correct: number; n: number; unread: number } } };
    assert.equal(summary.metrics.multipleChoice.correct, 1);
    assert.equal(summary.metrics.multipleChoice.n, 3);
    assert.equal(summary.metrics.multipleChoice.unread, 1);
    const records = readFileSync(join(out, "episodes.jsonl"), "utf8").trim().split("\n").map((l) => JSON.parse(l) as { questionId: string; choice: string | null; correct: boolean });
    const byId = new Map(records.map((r) => [r.questionId, r]));
    assert.deepEqual([0, 1, 2].map((k) => [byId.get(`hm-eqa-${k}`)!.choice, byId.get(`hm-eqa-${k}`)!.correct]), [["B", true], ["B", false], [null, false]]);
  });

  test("reads HM-EQA's own files: each row an episode in its HM3D scene folder, starting at its scene and floor's pose", async () => {
    const episodes = await loadActiveEpisodes(join(hmEqaDir, "questions.csv"));
    assert.equal(episodes.length, 24);
    const first = episodes[0]!;
    assert.equal(first.questionId, "hm-eqa-0");
    assert.equal(first.scene, "00004-VqCaAuuoeWk");
    assert.equal(first.answer, "B");
    assert.equal(first.category, "existence");
    assert.deepEqual(first.choices, ["(Do not choose this option)", "Yes, it is on", "No, it is not on", "(Do not choose this option)"]);
    assert.equal(first.start?.pitch, 0);
    assert.equal(episodes[2]!.choices?.[0], "It's open");
  });

  test("a questions.csv without scene_init_poses.csv beside it, or a scene and floor it has no pose for, is refused with exit 2", async () => {
    const dir = temporaryDir();
    const questions = writeHmEqa(dir);
    writeFileSync(join(dir, "scene_init_poses.csv"), "scene_floor,init_x,init_y,init_z,init_angle\r\nhome-0_0,0,0,0,0\r\n");
    const noPose = await runCli(["explore", "--episodes", questions, "--agent", "frontier", "--out", join(dir, "run"), ...SMALL], cliEnv(dir));
    assert.equal(noPose.code, 2);
    assert.match(noPose.stderr, /no start pose for home-1_0/);
    assert.match(noPose.stderr, /scene_init_poses\.csv/);
    rmSync(join(dir, "scene_init_poses.csv"));
    const missing = await runCli(["explore", "--episodes", questions, "--agent", "frontier", "--out", join(dir, "run"), ...SMALL], cliEnv(dir));
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /HM-EQA's start poses are missing/);
  });
});

describe("choiceLetter", () => {
  const choices = ["A kettle", "A toaster", "Nothing"];
  test("reads a leading letter, an 'answer is' letter or a choice's text; an article is not a letter; letters past the choices are none", () => {
    assert.equal(choiceLetter("B", choices), "B");
    assert.equal(choiceLetter("(C) Nothing", choices), "C");
    assert.equal(choiceLetter("B. A toaster", choices), "B");
    assert.equal(choiceLetter("The answer is C.", choices), "C");
    assert.equal(choiceLetter("Answer: a", choices), "A");
    assert.equal(choiceLetter("A kettle.", choices), "A");
    assert.equal(choiceLetter("A small appliance", choices), null);
    assert.equal(choiceLetter("D", choices), null);
    assert.equal(choiceLetter(null, choices), null);
  });
});
