/**
 * The template renderer: one deterministic English sentence for each question and answer
 * (grounded variants too), the offline default that needs no model.
 */
import type { AnswerGroup, StructuredAnswer, StructuredObject, TagProgram, TrajectoryEventType, TrajectoryStateName } from "../data/index.js";
import { ANY_OBJECT, queryKey, type EventRef } from "./program.js";
import { coordinates, eventVerb, momentPhrase, plural, relationPhrase, stateQuestion, stateWord, structuredCondition, withArticle, words } from "./phrases.js";

/** How many events of a kind the trajectory had, to say "for the second time" only when it matters. */
export type EventTotals = (ref: EventRef) => number | undefined;

/** The structured question, as in Fig. 2: "countObjects(cup)? (property:colour = green) AND (location:on = countertop)". */
export function structuredQuestion(program: TagProgram): string {
  const head = `${queryKey(program.query)}(${program.target})?`;
  return program.filters.length === 0 ? head : `${head} ${program.filters.map((c) => `(${structuredCondition(c)})`).join(" AND ")}`;
}

interface NounPhrase {
  /** colour and material before the noun. */
  adjectives: string;
  /** use, relations, state after it. */
  after: string;
  moment: string;
  past: boolean;
}

function nounPhrase(program: TagProgram, totals: EventTotals, plural: boolean): NounPhrase {
  const adjectives: string[] = [];
  const after: string[] = [];
  const moments: string[] = [];
  let fromView = false;
  const be = (past: boolean): string => (plural ? (past ? "were" : "are") : past ? "was" : "is");
  const past = isPast(program);
  const said = new Set(words(program.target).split(" "));
  for (const c of program.filters) {
    switch (c.type) {
      case "property":
        if (c.key === "use") after.push(usePhrase(String(c.args[0])));
        else if (!String(c.args[0]).toLowerCase().split(" ").every((x) => said.has(x))) adjectives.push(String(c.args[0]));
        break;
      case "state":
        after.push(`that ${be(past)} ${stateWord(c.key as TrajectoryStateName, String(c.args[0]) === "true")}`);
        break;
      case "location":
        after.push(relationPhrase(c));
        break;
      case "position":
        after.push(relationPhrase(c) + (fromView ? "" : " from your view"));
        fromView = true;
        break;
      case "moment":
        moments.push(momentPhrase(c, totals));
        break;
    }
  }
  return {
    adjectives: adjectives.map((a) => `${a} `).join(""),
    after: after.map((a) => ` ${a}`).join(""),
    moment: moments.length > 0 ? ` ${moments.join(" and ")}` : "",
    past,
  };
}

/** A moment, or counting what was done, puts the whole question (and its answer) in the past. */
function isPast(program: TagProgram): boolean {
  return program.filters.some((c) => c.type === "moment") || program.query.type === "countTimes";
}

function usePhrase(value: string): string {
  return /^used /i.test(value) ? value : `used for ${value}`;
}

/** The template question for a program (a grounded program names its references' coordinates). */
export function renderQuestion(program: TagProgram, totals: EventTotals = () => undefined): string {
  const { type, modifier } = program.query;
  const many = type === "countObjects" || type === "listObjects";
  const np = nounPhrase(program, totals, many);
  const target = program.target === ANY_OBJECT ? "object" : words(program.target);
  const is = np.past ? "was" : "is";
  const are = np.past ? "were" : "are";
  const the = `the ${np.adjectives}${target}${np.after}`;
  switch (type) {
    case "listObjects":
      return `What ${np.adjectives}objects ${are} there${np.after}${np.moment}?`;
    case "countObjects":
      return `How many ${np.adjectives}${plural(program.target === ANY_OBJECT ? "object" : program.target)} ${are} there${np.after}${np.moment}?`;
    case "countTimes":
      return `How many times did you ${eventVerb(modifier as TrajectoryEventType)} ${the}${np.moment}?`;
    case "getState":
      return `${capitalize(is)} ${the} ${stateQuestion(modifier as TrajectoryStateName)}${np.moment}?`;
    case "getProperty":
      if (modifier === "colour") return `What colour ${is} ${the}${np.moment}?`;
      if (modifier === "material") return `What ${is} ${the} made of${np.moment}?`;
      return `What ${is} ${the} used for${np.moment}?`;
    case "getLocation":
      return `Where ${is} ${the}${np.moment}?`;
  }
}

/**
 * The template answer: one sentence per group, the group named by its predicate, in the tense of
 * the question ("How many cups were there … before you …?" → "There were 2: …").
 */
export function renderAnswer(program: TagProgram, answer: StructuredAnswer): string {
  return answer.map((group) => groupSentence(program, group)).join(" ");
}

function groupSentence(program: TagProgram, group: AnswerGroup): string {
  const text = valueText(program, group, isPast(program));
  if (group.predicate === "") return `${capitalize(text)}.`;
  return `${capitalize(group.predicate.replace(/(^|, )(location|position): /g, "$1"))}: ${text}.`;
}

function objectName(o: StructuredObject): string {
  return `${o.caption ? `${o.caption} ` : ""}${words(o.type)}${coordinates(o.position)}`;
}

function valueText(program: TagProgram, group: AnswerGroup, past: boolean): string {
  const list = group.objects.map((o) => withArticle(objectName(o))).join(", ");
  const are = past ? "were" : "are";
  const is = past ? "was" : "is";
  switch (program.query.type) {
    case "countObjects": {
      const n = group.objects.length;
      return n === 0 ? `there ${are} none` : `there ${n === 1 ? is : are} ${n}: ${list}`;
    }
    case "listObjects":
      return group.objects.length === 0 ? "nothing" : list;
    case "countTimes": {
      const n = Number(group.value);
      return n === 0 ? "never" : n === 1 ? "once" : `${n} times`;
    }
    default: {
      if (group.objects.length === 0) return `there ${is} no such object`;
      const values = Array.isArray(group.value) ? group.value : [String(group.value)];
      if (group.objects.length === 1) return `${values[0]} (the ${objectName(group.objects[0]!)})`;
      return group.objects.map((o, i) => `the ${objectName(o)}: ${values[i] ?? "unknown"}`).join("; ");
    }
  }
}

function capitalize(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

