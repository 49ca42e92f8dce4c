import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { seededRandom } from "../../src/core/index.js";
import { parseTagQuestions, parseTrajectoryLog, type StructuredAnswer, type TagCondition, type TagProgram } from "../../src/data/index.js";
import {
  acceptProgram,
  answerSignature,
  assignSplits,
  buildTagDataset,
  executeProgram,
  executeProgramDetailed,
  generatePrograms,
  isBannedPair,
  isDiverse,
  isEffective,
  judgeProgram,
  worldOf,
  renderAnswer,
  renderQuestion,
  structuredQuestion,
  type ExecutionResult,
  type TrajectoryInput,
} from "../../src/generate/index.js";
import { kitchenLog, kitchenRaw } from "./fixtures.js";
import { caption, plural, words } from "../../src/generate/phrases.js";
import { canonicalProgramKey, checkEnglish, checkEnglishSet, containsItsAnswer, FUNNEL_RULES, isAnsweredByType, propertyOf } from "../../src/generate/index.js";

const log = kitchenLog();

/** Kitchens in three environments, turned and shifted so that each differs in the world frame. */
function inputs(count = 9): TrajectoryInput[] {
  return Array.from({ length: count }, (_, i) => ({ log: kitchenLog({ id: `kitchen-${i}`, environment: `house-${i % 3}`, yaw: i * 0.4, offset: [i, 0, -i] }) }));
}

describe("filters of section 3", () => {
  test("an ineffective condition drops the question: the only knife is the one used for cutting food", () => {
    const p: TagProgram = { target: "knife", filters: [{ type: "property", key: "use", args: ["used for cutting food"] }], query: { type: "countObjects", modifier: null } };
    assert.equal(isEffective(p, executeProgramDetailed(p, log), log), false);
    assert.equal(acceptProgram(p, log, seededRandom(1)), null);
    const red: TagProgram = { target: "cup", filters: [{ type: "property", key: "colour", args: ["red"] }], query: { type: "countObjects", modifier: null } };
    assert.equal(isEffective(red, executeProgramDetailed(red, log), log), true);
    assert.notEqual(acceptProgram(red, log, seededRandom(1)), null);
  });

  test("a question about an object never seen as it was then is dropped (neverSeen), the others record where they were seen", () => {
    // the box under the table is hidden by the table's box from everywhere the agent stood
    const box: TagProgram = { target: "box", filters: [{ type: "location", key: "under", args: ["table"] }], query: { type: "countObjects", modifier: null } };
    assert.equal(judgeProgram(box, log, seededRandom(1)), "neverSeen");
    const green: TagProgram = { target: "cup", filters: [{ type: "property", key: "colour", args: ["green"] }], query: { type: "countObjects", modifier: null } };
    const kept = judgeProgram(green, log, seededRandom(1));
    assert.ok(typeof kept !== "string", String(kept));
    // cup-1 back on the countertop since step 7; cup-3 put in the open fridge at step 4, in view, untouched since
    assert.deepEqual(kept.seen.map((s) => [s.object, s.step, s.steps]), [["cup-1", 7, [7]], ["cup-3", 7, [4]]]);
    const world = worldOf(log);
    assert.deepEqual(world.seenFor("cup-3", 7), [4]);
    // the fridge is in view only while the agent faces it (steps 3-4); the mug in it only while it is open
    assert.deepEqual(world.seenFor("fridge-1", 7), [3, 4]);
    assert.deepEqual(world.seenFor("mug-1", 7), [3, 4]);
    assert.equal(world.visibleAt("mug-1", 5), false);
    assert.deepEqual(world.seenFor("box-1", 7), []);
  });

  test("a condition that only repeats another is ineffective too", () => {
    // every cup on the first countertop is above it: "above" adds nothing to "on"
    const p: TagProgram = {
      target: "cup",
      filters: [
        { type: "location", key: "on", args: ["countertop"], at: [-1, -1.05, -2] },
        { type: "property", key: "material", args: ["plastic"] },
        { type: "state", key: "open", args: ["false"] },
      ],
      query: { type: "countObjects", modifier: null },
    };
    assert.equal(isEffective(p, executeProgramDetailed(p, log), log), false);
  });

  test("a moment that narrows nothing is ineffective, whether compared with the present or the whole trajectory", () => {
    // before the fridge was opened, cups 1-3 and the apple were on a countertop: all that ever were
    const p: TagProgram = {
      target: "object",
      filters: [
        { type: "location", key: "on", args: ["countertop"] },
        { type: "moment", key: "before", args: ["open", "fridge", 1] },
      ],
      query: { type: "listObjects", modifier: null },
    };
    assert.equal(isEffective(p, executeProgramDetailed(p, log), log), false);
    assert.equal(isEffective({ ...p, filters: [...p.filters].reverse() }, executeProgramDetailed(p, log), log), false);
    // right after you picked up a cup for the second time, cup 1 was in your hand: the moment narrows
    const narrow: TagProgram = { ...p, filters: [p.filters[0]!, { type: "moment", key: "right_after", args: ["pickup", "cup", 2] }] };
    assert.equal(isEffective(narrow, executeProgramDetailed(narrow, log), log), true);
  });

  test("a moment that changes nothing is ineffective, though its objects are listed in another order than at the end", () => {
    // the same three cups at every step; cup 1, in your hand right after you picked up a cup for the second time, is listed after cup 2 then, before it at the end
    const p: TagProgram = { target: "cup", filters: [{ type: "moment", key: "right_after", args: ["pickup", "cup", 2] }], query: { type: "countObjects", modifier: null } };
    const atMoment = executeProgramDetailed(p, log);
    const atEnd = executeProgramDetailed({ ...p, filters: [] }, log);
    assert.deepEqual([...atMoment.ids[0]!].sort(), [...atEnd.ids[0]!].sort());
    assert.notDeepEqual(atMoment.ids[0], atEnd.ids[0], "listed in another order");
    assert.equal(answerSignature(atMoment), answerSignature(atEnd));
    assert.equal(isEffective(p, atMoment, log), false);
    // each object keeps its own value when the order changes
    const states = (ids: string[], value: string[]): ExecutionResult => ({ answer: [{ predicate: "", objects: [], value }], unknown: false, grouped: [], ids: [ids], referenced: [] });
    assert.equal(answerSignature(states(["cup-1", "cup-2"], ["open", "closed"])), answerSignature(states(["cup-2", "cup-1"], ["closed", "open"])));
    assert.notEqual(answerSignature(states(["cup-1", "cup-2"], ["open", "closed"])), answerSignature(states(["cup-2", "cup-1"], ["open", "closed"])));
  });

  test("a location question whose receptacle the question names gives its answer away", () => {
    const laptop: TagProgram = { target: "Laptop", filters: [{ type: "position", key: "in_front_of", args: ["Desk"] }], query: { type: "getLocation", modifier: null } };
    assert.equal(renderQuestion(laptop), "Where is the laptop in front of the desk from your view?");
    const on = (value: string): StructuredAnswer => [{ predicate: "", objects: [{ type: "Laptop", caption: null, position: [0, 0, 0] }], value }];
    assert.equal(containsItsAnswer(laptop, on("on the desk (x=0.57, y=-1.58, z=-1.85)")), true);
    assert.equal(containsItsAnswer(laptop, on("on the sofa (x=0.57, y=-1.58, z=-1.85)")), false);
    assert.equal(containsItsAnswer(laptop, on("in your hand")), false);
    const cup: TagProgram = { target: "cup", filters: [{ type: "moment", key: "right_after", args: ["open", "fridge", 1] }], query: { type: "getLocation", modifier: null } };
    assert.equal(containsItsAnswer(cup, on("inside the fridge (x=3, y=-0.6, z=-1)")), true);
    assert.equal(containsItsAnswer({ ...laptop, target: "CD", filters: [{ type: "position", key: "left_of", args: ["CounterTop"] }] }, on("on the countertop (x=1, y=0, z=1)")), true);
  });

  test("questions that give their answer away: answered by the type, or naming the answer", () => {
    const property = (target: string, modifier: string): TagProgram => ({ target, filters: [], query: { type: "getProperty", modifier } });
    assert.equal(isAnsweredByType(property("Tomato", "colour"), "alfred"), true);
    assert.equal(isAnsweredByType(property("SoapBar", "use"), "alfred"), true);
    assert.equal(isAnsweredByType(property("knife", "colour"), "sim"), true, "the simulator's knives come in one colour");
    assert.equal(isAnsweredByType(property("mug", "colour"), "sim"), false, "mugs come in three");
    assert.equal(isAnsweredByType(property("mug", "material"), "sim"), true);
    assert.equal(isAnsweredByType(property("cup", "colour"), "test"), false, "no catalogue: properties vary");
    const soap = property("SoapBar", "material");
    assert.equal(containsItsAnswer(soap, [{ predicate: "", objects: [{ type: "SoapBar", caption: null, position: [0, 0, 0] }], value: "soap" }]), true);
    assert.equal(containsItsAnswer(property("Newspaper", "material"), [{ predicate: "", objects: [{ type: "Newspaper", caption: null, position: [0, 0, 0] }], value: "paper" }]), false);
    const bowls: TagProgram = { target: "object", filters: [{ type: "moment", key: "right_before", args: ["pickup", "Bowl", 1] }], query: { type: "listObjects", modifier: null } };
    const bowl = { type: "Bowl", caption: null, position: [0, 0, 0] as [number, number, number] };
    assert.equal(containsItsAnswer(bowls, [{ predicate: "", objects: [bowl, bowl], value: ["Bowl", "Bowl"] }]), true);
    assert.equal(containsItsAnswer(bowls, [{ predicate: "", objects: [bowl, { ...bowl, type: "Cup" }], value: ["Bowl", "Cup"] }]), false);
  });

  test("broken is asked about only where something of that type broke", () => {
    const mentionsBroken = (p: TagProgram): boolean => p.query.modifier === "broken" || p.filters.some((c) => c.type === "state" && c.key === "broken");
    const intact = inputs(6).flatMap((input) => generatePrograms(input.log, { perTrajectory: 25, seed: 3 }));
    assert.ok(intact.length > 50 && !intact.some((g) => mentionsBroken(g.program)), "nothing breaks in the kitchen: the mug is always intact");
    const broke = Array.from({ length: 6 }, (_, i) =>
      parseTrajectoryLog(
        kitchenRaw({
          id: `broken-${i}`,
          yaw: i * 0.4,
          edit: (raw) => {
            raw.events.push({ step: 6, type: "break", object: "mug-1", index: 1 });
            raw.events.sort((a, b) => a.step - b.step);
            for (const step of raw.steps.slice(6)) step.objects["mug-1"]!.states = { filled: true, broken: true };
          },
        }),
        "broken.json",
      ),
    );
    const generated = broke.flatMap((l) => generatePrograms(l, { perTrajectory: 25, seed: 3 }));
    assert.ok(generated.some((g) => g.program.query.modifier === "broken"), "was the mug broken or intact before …?");
    assert.ok(generated.some((g) => g.program.filters.some((c) => c.type === "state" && c.key === "broken" && c.args[0] === "true")), "what objects are broken?");
  });

  test("the funnel counts every sampled program once: kept or dropped by one rule", () => {
    const dataset = buildTagDataset(inputs(), { perTrajectory: 8, seed: 7 });
    const f = dataset.stats.funnel;
    assert.deepEqual(Object.keys(f.filtered), [...FUNNEL_RULES]);
    assert.equal(f.kept, dataset.questions.length);
    assert.equal(f.made, f.kept + Object.values(f.filtered).reduce((a, b) => a + b, 0));
    assert.ok(f.filtered.ineffective > 0 && f.filtered.duplicate > 0);
  });

  test("banned query and predicate pairs", () => {
    const where: TagProgram = { target: "spoon", filters: [{ type: "location", key: "on", args: ["countertop"] }], query: { type: "getLocation", modifier: null } };
    assert.equal(isBannedPair(where, where.filters[0]!), true);
    const open: TagProgram = { target: "fridge", filters: [{ type: "state", key: "open", args: ["true"] }], query: { type: "getState", modifier: "open" } };
    assert.equal(isBannedPair(open, open.filters[0]!), true);
    const colour: TagProgram = { target: "cup", filters: [{ type: "property", key: "colour", args: ["green"] }], query: { type: "getProperty", modifier: "colour" } };
    assert.equal(isBannedPair(colour, colour.filters[0]!), true);
    const times: TagProgram = { target: "fridge", filters: [{ type: "moment", key: "after", args: ["close", "fridge", 1] }], query: { type: "countTimes", modifier: "open" } };
    assert.equal(isBannedPair(times, times.filters[0]!), true);
    const openedIt: TagProgram = { target: "fridge", filters: [{ type: "moment", key: "right_after", args: ["open", "fridge", 1] }], query: { type: "getState", modifier: "open" } };
    assert.equal(isBannedPair(openedIt, openedIt.filters[0]!), true);
    const fine: TagProgram = { target: "cup", filters: [{ type: "property", key: "colour", args: ["green"] }], query: { type: "getProperty", modifier: "material" } };
    assert.equal(isBannedPair(fine, fine.filters[0]!), false);
    assert.equal(acceptProgram(where, log, seededRandom(1)), null);
  });

  test("diversity: no predicate type fills more than half of the conditions", () => {
    const colour: TagCondition = { type: "property", key: "colour", args: ["green"] };
    const material: TagCondition = { type: "property", key: "material", args: ["ceramic"] };
    const on: TagCondition = { type: "location", key: "on", args: ["countertop"] };
    assert.equal(isDiverse([colour, material]), false);
    assert.equal(isDiverse([colour, on]), true);
    assert.equal(isDiverse([colour, material, on]), false);
  });

  test("generated questions are effective, diverse, hint-free, known, and grounded when ambiguous", () => {
    const generated = inputs(6).flatMap((input) => generatePrograms(input.log, { perTrajectory: 25, seed: 3 }).map((g) => ({ g, log: input.log })));
    assert.ok(generated.length >= 60, `only ${generated.length} questions`);
    for (const { g, log: l } of generated) {
      const label = structuredQuestion(g.program);
      assert.ok(isDiverse(g.program.filters), label);
      assert.ok(!g.program.filters.some((c) => isBannedPair(g.program, c)), label);
      const result = executeProgramDetailed(g.program, l);
      assert.equal(result.unknown, false, label);
      assert.deepEqual(result.answer, g.answer, label);
      assert.ok(isEffective(g.program, result, l), label);
      for (const c of g.program.filters) assert.ok(!("at" in c), `${label}: the plain program names no coordinates`);
      if (g.answer.length > 1) {
        assert.ok(g.grounded, `${label} is ambiguous and has a grounded form`);
        assert.equal(g.grounded.answer.length, 1);
        assert.ok(g.grounded.program.filters.some((c) => c.at), label);
        assert.deepEqual(executeProgram(g.grounded.program, l), g.grounded.answer);
      }
    }
    const types = new Set(generated.flatMap(({ g }) => g.program.filters.map((c) => c.type)));
    assert.deepEqual([...types].sort(), ["location", "moment", "position", "property", "state"]);
    const queries = new Set(generated.map(({ g }) => g.program.query.type));
    assert.deepEqual([...queries].sort(), ["countObjects", "countTimes", "getLocation", "getProperty", "getState", "listObjects"]);
    assert.ok(generated.some(({ g }) => g.grounded !== null));
  });

  test("a grounded question names the reference's coordinates in its text", () => {
    const generated = generatePrograms(log, { perTrajectory: 30, seed: 5 }).find((g) => g.grounded);
    assert.ok(generated?.grounded);
    const text = renderQuestion(generated.grounded.program);
    assert.match(text, /\(x=-?[\d.]+, y=-?[\d.]+, z=-?[\d.]+\)/);
    assert.match(renderAnswer(generated.program, generated.answer), /^[A-Z].*\.$/);
  });
});

describe("template renderer", () => {
  test("the running example of the paper, plain and grounded", () => {
    const p: TagProgram = {
      target: "cup",
      filters: [
        { type: "location", key: "on", args: ["countertop"] },
        { type: "moment", key: "before", args: ["pickup", "cup", 1] },
      ],
      query: { type: "countObjects", modifier: null },
    };
    assert.equal(structuredQuestion(p), "countObjects(cup)? (location:on = countertop) AND (moment:before = pickup cup #1)");
    assert.equal(renderQuestion(p, () => 1), "How many cups were there on the countertop before you picked up the cup?");
    assert.equal(renderAnswer(p, executeProgram(p, log)).split(". ")[0], "On the countertop (x=-1, y=-1.05, z=-2): there were 2: a green plastic cup (x=-1.2, y=-0.55, z=-2), a red ceramic cup (x=-0.8, y=-0.55, z=-2)");
    const grounded: TagProgram = { ...p, filters: [{ ...p.filters[0]!, at: [0.46, 0.15, -0.83] }, p.filters[1]!] };
    assert.equal(renderQuestion({ ...grounded, filters: [grounded.filters[0]!] }), "How many cups are there on the countertop (x=0.46, y=0.15, z=-0.83)?");
    assert.equal(renderQuestion({ target: "fridge", filters: [{ type: "moment", key: "right_after", args: ["pickup", "cup", 2] }], query: { type: "getState", modifier: "open" } }), "Was the fridge open or closed right after you picked up the cup for the second time?");
    assert.equal(renderQuestion({ target: "fridge", filters: [], query: { type: "countTimes", modifier: "open" } }), "How many times did you open the fridge?");
  });

  test("an answer takes the tense of its question's moment", () => {
    const cups = (filters: TagCondition[]): TagProgram => ({ target: "cup", filters, query: { type: "countObjects", modifier: null } });
    const onCounter: TagCondition = { type: "location", key: "on", args: ["countertop"], at: [-1, -1.05, -2] };
    const present = cups([onCounter]);
    assert.match(renderQuestion(present), /^How many cups are there/);
    assert.equal(renderAnswer(present, executeProgram(present, log)), "There are 2: a green plastic cup (x=-1.2, y=-0.55, z=-2), a red ceramic cup (x=-0.8, y=-0.55, z=-2).");
    const past = cups([onCounter, { type: "moment", key: "right_after", args: ["pickup", "cup", 2] }]);
    assert.match(renderQuestion(past, () => 2), /^How many cups were there on the countertop .* right after you picked up the cup for the second time\?$/);
    assert.equal(renderAnswer(past, executeProgram(past, log)), "There was 1: a red ceramic cup (x=-0.8, y=-0.55, z=-2).");
    assert.equal(renderAnswer(past, [{ predicate: "", objects: [], value: 0 }]), "There were none.");
    const where: TagProgram = { target: "cup", filters: [{ type: "moment", key: "before", args: ["open", "fridge", 1] }], query: { type: "getLocation", modifier: null } };
    assert.equal(renderAnswer(where, [{ predicate: "", objects: [], value: null }]), "There was no such object.");
    for (const program of [present, past]) {
      const question = renderQuestion(program, () => 2);
      assert.deepEqual(checkEnglish(renderAnswer(program, executeProgram(program, log)), { answerTo: question }), [], question);
    }
  });

  test("type names as English writes them: closed compounds in one word, initialisms in capitals", () => {
    // AI2-THOR's types (src/data/ai2thor-catalogue.json)
    assert.equal(words("BasketBall"), "basketball");
    assert.equal(words("ArmChair"), "armchair");
    assert.equal(words("CounterTop"), "countertop");
    assert.equal(words("CD"), "CD");
    assert.equal(plural("CD"), "CDs");
    assert.equal(words("TVStand"), "TV stand");
    // the simulator's types
    assert.equal(words("tv stand"), "TV stand");
    assert.equal(plural("tv stand"), "TV stands");
    assert.equal(words("coffee table"), "coffee table");
    assert.equal(words("CellPhone"), "cell phone");
    assert.equal(plural("BasketBall"), "basketballs");
    assert.equal(renderQuestion({ target: "Laptop", filters: [{ type: "position", key: "left_of", args: ["BasketBall"] }, { type: "moment", key: "right_after", args: ["pickup", "CD", 1] }], query: { type: "countObjects", modifier: null } }, () => 1), "How many laptops were there to the left of the basketball from your view right after you picked up the CD?");
  });
});

describe("splits", () => {
  test("70/15/15, stratified, half of validation and test from environments absent from training, no trajectory in two splits", () => {
    // 400 trajectories of 5 questions, 10 per environment
    const items = Array.from({ length: 2000 }, (_, i) => ({ environment: `env-${Math.floor(i / 50)}`, trajectory: `t-${Math.floor(i / 5)}`, stratum: `s${(i * 3 + Math.floor(i / 5)) % 7}` }));
    const splits = assignSplits(items, 11);
    const share = (s: string): number => splits.filter((x) => x === s).length / items.length;
    assert.ok(Math.abs(share("train") - 0.7) < 0.02, `train ${share("train")}`);
    assert.ok(Math.abs(share("validation") - 0.15) < 0.02);
    assert.ok(Math.abs(share("test") - 0.15) < 0.02);
    const trainEnvs = new Set(items.filter((_, i) => splits[i] === "train").map((it) => it.environment));
    for (const split of ["validation", "test"]) {
      const members = items.filter((_, i) => splits[i] === split);
      const unseen = members.filter((it) => !trainEnvs.has(it.environment)).length / members.length;
      assert.ok(unseen > 0.4 && unseen < 0.6, `${split}: ${unseen} unseen`);
    }
    // each stratum is divided in about the same proportions
    for (let s = 0; s < 7; s++) {
      const members = splits.filter((_, i) => items[i]!.stratum === `s${s}`);
      const train = members.filter((x) => x === "train").length / members.length;
      assert.ok(Math.abs(train - 0.7) < 0.06, `stratum s${s}: train ${train}`);
    }
    const splitOf = new Map<string, Set<string>>();
    items.forEach((it, i) => splitOf.set(it.trajectory, new Set([...(splitOf.get(it.trajectory) ?? []), splits[i]!])));
    assert.ok([...splitOf.values()].every((s) => s.size === 1), "a trajectory's questions share a split");
    assert.deepEqual(assignSplits(items, 11), splits);
  });
});

describe("datasets", () => {
  test("deterministic for a seed, valid records, statistics as Fig. 3", () => {
    const a = buildTagDataset(inputs(), { perTrajectory: 8, seed: 7 });
    const b = buildTagDataset(inputs().reverse(), { perTrajectory: 8, seed: 7 });
    assert.equal(JSON.stringify(a), JSON.stringify(b));
    const c = buildTagDataset(inputs(), { perTrajectory: 8, seed: 8 });
    assert.notEqual(JSON.stringify(c.questions), JSON.stringify(a.questions));
    const questions = parseTagQuestions(JSON.parse(JSON.stringify(a.questions)), "questions.json");
    assert.equal(questions.length, a.stats.questions);
    assert.equal(new Set(questions.map((q) => q.question_id)).size, questions.length);
    for (const q of questions) {
      assert.equal(q.tags.conditions, q.program.filters.length);
      assert.equal(q.tags.ambiguous, q.grounded !== null);
      assert.equal(q.structured_question, structuredQuestion(q.program));
    }
    const conditions = Object.values(a.stats.predicateTypes).reduce((s, n) => s + n, 0);
    assert.equal(conditions, questions.reduce((s, q) => s + q.program.filters.length, 0));
    assert.equal(Object.values(a.stats.categories).reduce((s, n) => s + n, 0), conditions);
    assert.equal(a.stats.splits.train + a.stats.splits.validation + a.stats.splits.test, questions.length);
    assert.equal(a.stats.environments, 3);
    assert.ok(a.stats.unseenEnvironments.length >= 1);
  });
});

describe("English", () => {
  test("plurals from the head noun and a table of irregular ones", () => {
    assert.equal(plural("Knife"), "knives");
    assert.equal(plural("ButterKnife"), "butter knives");
    assert.equal(plural("Tomato"), "tomatoes");
    assert.equal(plural("PotatoSliced"), "potato slices");
    assert.equal(plural("Glassbottle"), "glass bottles");
    assert.equal(plural("Box"), "boxes");
    assert.equal(plural("Shelf"), "shelves");
    assert.equal(plural("Cup"), "cups");
  });

  test("captions leave out what the type says; food is not a material", () => {
    assert.equal(caption("SoapBar", [undefined, "soap"]), null);
    assert.equal(caption("PaperTowelRoll", ["white", "paper"]), "white");
    assert.equal(caption("Mug", ["red", "ceramic"]), "red ceramic");
    assert.equal(propertyOf({ properties: { material: "food" } }, "material"), undefined);
    assert.equal(propertyOf({ properties: { material: "glass" } }, "material"), "glass");
  });

  test("the checker flags each class, and passes good text", () => {
    assert.deepEqual(checkEnglish("How many kknives are there?"), ["plural"]);
    assert.deepEqual(checkEnglish("How many tomatos are there?"), ["plural"]);
    assert.deepEqual(checkEnglish("There is 1: a soap soap bar (x=1, y=1, z=1)."), ["doubled-word"]);
    assert.deepEqual(checkEnglish("A food egg (x=1, y=0, z=2)."), ["food-material"]);
    assert.deepEqual(checkEnglish("What is the egg made of? Food."), ["food-material"]);
    assert.deepEqual(checkEnglish("How many times did you open the fridge that is open?", { question: true }), ["tense"]);
    assert.deepEqual(checkEnglish("What objects are there used for holding food before you opened the fridge?", { question: true }), ["tense"]);
    assert.deepEqual(checkEnglish("What objects were there used for holding food before you opened the fridge?", { question: true }), []);
    assert.deepEqual(checkEnglish("How many knives are there on the countertop (x=1, y=1, z=1)?", { question: true }), []);
    assert.deepEqual(checkEnglish("There is 1: a plastic laptop (x=-3.41, y=-0.79, z=-0.17).", { answerTo: "How many laptops were there right after you picked up the basketball?" }), ["answer-tense"]);
    assert.deepEqual(checkEnglish("There was 1: a plastic laptop (x=-3.41, y=-0.79, z=-0.17).", { answerTo: "How many laptops were there right after you picked up the basketball?" }), []);
    assert.deepEqual(checkEnglish("There were none.", { answerTo: "How many laptops are there on the desk?" }), ["answer-tense"]);
    assert.deepEqual(checkEnglish("How many laptops are there to the left of the basket ball?"), ["split-compound"]);
    assert.deepEqual(checkEnglish("On the desk (the plastic cd (x=0.4, y=-0.72, z=-1.16))."), ["split-compound"]);
    assert.deepEqual(checkEnglish("On the desk (the plastic CD (x=0.4, y=-0.72, z=-1.16))."), []);
  });

  test("a generated set has no English issue, and its stats report the checker's counts", () => {
    const dataset = buildTagDataset(inputs(), { perTrajectory: 12, seed: 3 });
    assert.deepEqual(dataset.stats.english.counts, { plural: 0, "doubled-word": 0, "food-material": 0, tense: 0, "answer-tense": 0, "split-compound": 0 });
    assert.equal(dataset.stats.english.texts, checkEnglishSet(dataset.questions).texts);
    const splitOf = new Map<string, Set<string>>();
    for (const q of dataset.questions) splitOf.set(q.trajectory, new Set([...(splitOf.get(q.trajectory) ?? []), q.split]));
    assert.ok([...splitOf.values()].every((s) => s.size === 1), "no trajectory in two splits");
  });
});

describe("duplicates", () => {
  test("programs differing only in the order of their filters have one key", () => {
    const a: TagProgram = { target: "cup", filters: [{ type: "property", key: "colour", args: ["red"] }, { type: "location", key: "on", args: ["countertop"] }], query: { type: "countObjects", modifier: null } };
    const b: TagProgram = { ...a, filters: [...a.filters].reverse() };
    assert.equal(canonicalProgramKey(a), canonicalProgramKey(b));
    assert.notEqual(canonicalProgramKey(a), canonicalProgramKey({ ...a, filters: [a.filters[0]!] }));
  });
});
