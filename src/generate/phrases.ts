/** English pieces shared by the executor's group labels and the template renderer. */
import type { TagCondition, TrajectoryEventType, TrajectoryStateName } from "../data/index.js";
import { momentEvents, type EventRef } from "./program.js";

export function coordinates(p: readonly number[] | null | undefined): string {
  return p ? ` (x=${p[0]}, y=${p[1]}, z=${p[2]})` : "";
}

/** Type names whose words are not marked by case ("Glassbottle"). */
const SPLIT_WORDS: Record<string, string> = { glassbottle: "glass bottle" };

/**
 * Type names whose case marks words that English writes as one (AI2-THOR's "BasketBall",
 * "ArmChair", "CounterTop"): checked against every type of the AI2-THOR catalogue; "cell
 * phone", "key chain", "butter knife" and the others are written apart.
 */
const CLOSED_COMPOUNDS: Record<string, string> = { "basket ball": "basketball", "arm chair": "armchair", "counter top": "countertop" };
const CLOSED_COMPOUND = new RegExp(`\\b(?:${Object.keys(CLOSED_COMPOUNDS).join("|")})\\b`, "g");

/** Initialisms a type may spell in lower case (the simulator's "tv stand"). */
const INITIALISMS = new Set(["tv", "cd", "dvd", "pc"]);

/**
 * A type's words as English writes them: "ButterKnife" → "butter knife", "BasketBall" →
 * "basketball", "TVStand" and "tv stand" → "TV stand", "CD" → "CD" (an initialism in capitals).
 */
export function words(type: string): string {
  const split = type
    .replace(/[_-]+/g, " ")
    .replace(/([a-z])([A-Z])/g, "$1 $2")
    .replace(/([A-Z]+)([A-Z][a-z])/g, "$1 $2")
    .split(" ")
    .filter((x) => x !== "")
    .map((x) => (/^[A-Z]{2,}$/.test(x) ? x : INITIALISMS.has(x.toLowerCase()) ? x.toUpperCase() : x.toLowerCase()));
  // AI2-THOR's "PotatoSliced" is a slice of potato
  const w = split.map((x) => SPLIT_WORDS[x] ?? x).join(" ").replace(/ sliced$/, " slice");
  return w.replace(CLOSED_COMPOUND, (m) => CLOSED_COMPOUNDS[m]!);
}

/** Nouns whose plural no rule gives (the last word of a type is its head noun). */
const IRREGULAR_PLURALS: Record<string, string> = {
  knife: "knives",
  butterknife: "butterknives",
  shelf: "shelves",
  leaf: "leaves",
  loaf: "loaves",
  tomato: "tomatoes",
  potato: "potatoes",
  person: "people",
  child: "children",
  foot: "feet",
  tooth: "teeth",
  mouse: "mice",
  scissors: "scissors",
  boots: "boots",
  glasses: "glasses",
  clothes: "clothes",
};

/** The plural of a type's words: the head (last) word inflected, irregular nouns from a table. */
export function plural(type: string): string {
  const w = words(type);
  const space = w.lastIndexOf(" ");
  const head = w.slice(space + 1);
  const before = w.slice(0, space + 1);
  const irregular = IRREGULAR_PLURALS[head];
  if (irregular) return before + irregular;
  if (/^[A-Z]+$/.test(head)) return `${before}${head}s`;
  if (/(s|x|z|ch|sh)$/.test(head)) return `${before}${head}es`;
  if (/[^aeiou]y$/.test(head)) return `${before}${head.slice(0, -1)}ies`;
  if (/[^aeiou]o$/.test(head)) return `${before}${head}es`;
  return `${before}${head}s`;
}

/** An object's caption from its colour and material, leaving out words its type already says ("soap bar", not "soap soap bar"). */
export function caption(type: string, adjectives: readonly (string | undefined)[]): string | null {
  const said = new Set(words(type).split(" "));
  const kept = adjectives.filter((a): a is string => a !== undefined && a !== "" && !a.toLowerCase().split(" ").every((x) => said.has(x)));
  return kept.length === 0 ? null : kept.join(" ");
}

export function withArticle(phrase: string): string {
  return /^[aeiou]/.test(phrase) ? `an ${phrase}` : `a ${phrase}`;
}

/** Each action of the log in the past tense ("you picked up the mug"). */
export const PAST_TENSE: Record<TrajectoryEventType, string> = {
  pickup: "picked up",
  put: "put down",
  open: "opened",
  close: "closed",
  toggle_on: "turned on",
  toggle_off: "turned off",
  slice: "sliced",
  fill: "filled",
  empty: "emptied",
  break: "broke",
  heat: "heated",
  cool: "cooled",
  clean: "cleaned",
};

const BASE: Record<TrajectoryEventType, string> = {
  pickup: "pick up",
  put: "put down",
  open: "open",
  close: "close",
  toggle_on: "turn on",
  toggle_off: "turn off",
  slice: "slice",
  fill: "fill",
  empty: "empty",
  break: "break",
  heat: "heat",
  cool: "cool",
  clean: "clean",
};

export function eventVerb(type: TrajectoryEventType): string {
  return BASE[type];
}

const ORDINALS = ["first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth"];

export function ordinalWord(n: number): string {
  return ORDINALS[n - 1] ?? `${n}th`;
}

/** "you opened the fridge for the second time"; the ordinal is said when there were several such events (`total`). */
export function eventClause(ref: EventRef, total?: number): string {
  const base = `you ${PAST_TENSE[ref.type]} the ${words(ref.objectType)}`;
  return total !== undefined && total <= 1 ? base : `${base} for the ${ordinalWord(ref.ordinal)} time`;
}

/** "open fridge #2": the structured form of an event. */
export function eventStructured(ref: EventRef): string {
  return `${ref.type} ${ref.objectType} #${ref.ordinal}`;
}

const STATE_WORDS: Record<TrajectoryStateName, [string, string]> = {
  open: ["open", "closed"],
  toggled: ["switched on", "switched off"],
  broken: ["broken", "intact"],
  sliced: ["sliced", "not sliced"],
  filled: ["filled with liquid", "empty"],
};

export function stateWord(state: TrajectoryStateName, value: boolean): string {
  return STATE_WORDS[state][value ? 0 : 1];
}

export function stateQuestion(state: TrajectoryStateName): string {
  const [yes, no] = STATE_WORDS[state];
  return `${yes} or ${no}`;
}

/** A relation phrase of a location or position condition: "on the countertop (x=…)". */
export function relationPhrase(condition: TagCondition, at?: readonly number[] | null): string {
  const ref = (i: number): string => words(String(condition.args[i]));
  const where = coordinates(at ?? condition.at);
  switch (condition.key) {
    case "on":
      return `on the ${ref(0)}${where}`;
    case "inside":
      return `inside the ${ref(0)}${where}`;
    case "same_on":
      return `on the same ${ref(0)} as the ${ref(1)}${where}`;
    case "same_inside":
      return `inside the same ${ref(0)} as the ${ref(1)}${where}`;
    case "above":
      return `above the ${ref(0)}${where}`;
    case "under":
      return `under the ${ref(0)}${where}`;
    case "in_front_of":
      return `in front of the ${ref(0)}${where}`;
    case "behind":
      return `behind the ${ref(0)}${where}`;
    case "left_of":
      return `to the left of the ${ref(0)}${where}`;
    case "right_of":
      return `to the right of the ${ref(0)}${where}`;
    default:
      return `${condition.key} the ${ref(0)}${where}`;
  }
}

/** "right after you opened the fridge", "between you … and you …". */
export function momentPhrase(condition: TagCondition, total: (ref: EventRef) => number | undefined = () => undefined): string {
  const [first, second] = momentEvents(condition);
  const clause = (ref: EventRef): string => eventClause(ref, total(ref));
  switch (condition.key) {
    case "between":
      return `between the moment ${clause(first!)} and the moment ${clause(second!)}`;
    case "right_before":
      return `right before ${clause(first!)}`;
    case "right_after":
      return `right after ${clause(first!)}`;
    default:
      return `${condition.key} ${clause(first!)}`;
  }
}

/** The structured form of a condition, as in Fig. 2: "location:on = countertop (x=…)". */
export function structuredCondition(condition: TagCondition, at?: readonly number[] | null): string {
  if (condition.type === "moment") {
    const events = momentEvents(condition).map(eventStructured);
    return `moment:${condition.key} = ${events.join(" and ")}`;
  }
  if (condition.key === "same_on" || condition.key === "same_inside") {
    return `${condition.type}:${condition.key} = ${condition.args[0]} as ${condition.args[1]}${coordinates(at ?? condition.at)}`;
  }
  return `${condition.type}:${condition.key} = ${condition.args[0]}${coordinates(at ?? condition.at)}`;
}
