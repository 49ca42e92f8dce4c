/**
 * The English of Mixed EQA questions and answers: events as the agent did them ("you heated the
 * mug", "you turned it on for the second time"), places with their preposition ("on the
 * counter", "in the fridge"), lists with articles, numbers in words, and every phrasing of an
 * answer that is right (its alternatives).
 */
import { catalogueType } from "../../sim/index.js";

/** The indefinite article of a catalogue type ("an apple", "a mug"). */
export function article(type: string): string {
  return /^[aeiou]/i.test(type) ? "an" : "a";
}

const VERBS: Record<string, [string, string]> = {
  pickup: ["picked", "up"],
  put: ["put", "down"],
  open: ["opened", ""],
  close: ["closed", ""],
  toggle_on: ["turned", "on"],
  toggle_off: ["turned", "off"],
  slice: ["sliced", ""],
  fill: ["filled", ""],
  empty: ["emptied", ""],
  break: ["broke", ""],
  heat: ["heated", ""],
  cool: ["cooled", ""],
  clean: ["cleaned", ""],
};

const ORDINALS = ["first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth"];
const NUMBERS = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve"];

/** "you heated the mug", "you turned it on for the second time" (`total` events of that kind on that type in the day). */
export function eventPhrase(event: string, objectType: string, index: number, total: number, pronoun = false): string {
  const [verb, particle] = VERBS[event] ?? [event, ""];
  const object = pronoun ? "it" : `the ${objectType}`;
  const done = pronoun || particle === "" ? [verb, object, particle] : [verb, particle, object];
  const times = total > 1 ? ` for the ${ORDINALS[index - 1] ?? `${index}th`} time` : "";
  return `you ${done.filter((w) => w !== "").join(" ")}${times}`;
}

/** "on" or "in": how things rest in or on a receptacle of this type, when the relation is not known. */
export function prepositionOf(type: string, relation?: string): string {
  if (relation === "inside") return "in";
  if (relation === "on") return "on";
  try {
    return catalogueType(type).receptacle === "in" ? "in" : "on";
  } catch {
    return "on";
  }
}

/** A text as people write it: initialisms in capitals ("the TV stand", not "the tv stand"). */
export function written(text: string): string {
  return text.replace(/\btv(s?)\b/gi, (_m, plural: string) => `TV${plural}`);
}

export function capitalise(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

export function numberWord(n: number): string {
  return NUMBERS[n] ?? String(n);
}

/** "a mug", "an apple", "a mug and a book", "a bowl, a mug and a book". */
export function listWithArticles(types: readonly string[]): string {
  const items = types.map((t) => `${article(t)} ${t}`);
  return items.length <= 1 ? (items[0] ?? "") : `${items.slice(0, -1).join(", ")} and ${items.at(-1)}`;
}

export interface RenderedAnswer {
  answer: string;
  alternatives: string[];
}

/** "On the counter." (or "On the floor."), with "the counter" and "counter" as alternatives. */
export function placeAnswer(type: string, relation?: string): RenderedAnswer {
  if (type === "floor") return { answer: "On the floor.", alternatives: ["on the floor", "the floor", "floor"] };
  const prep = prepositionOf(type, relation);
  return { answer: `${capitalise(prep)} the ${type}.`, alternatives: [`${prep} the ${type}`, `the ${type}`, type] };
}

export function yesNoAnswer(value: string): RenderedAnswer {
  return { answer: value === "yes" ? "Yes." : "No.", alternatives: [value] };
}

export function countAnswer(value: string): RenderedAnswer {
  const n = Number(value);
  if (n === 0) return { answer: "None.", alternatives: ["0", "zero", "none", "nothing"] };
  return { answer: `${capitalise(numberWord(n))}.`, alternatives: [value, numberWord(n)] };
}

/** The contents value ("book, mug" or "nothing") in words. */
export function contentsAnswer(value: string): RenderedAnswer {
  if (value === "nothing") return { answer: "Nothing.", alternatives: ["nothing", "nothing at all"] };
  const types = value.split(", ");
  const listed = listWithArticles(types);
  return { answer: `${capitalise(listed)}.`, alternatives: [listed, value, types.join(" and ")] };
}

/** "On the counter, then on the table." for "counter then table". */
export function placesAnswer(value: string, relations: readonly (string | undefined)[]): RenderedAnswer {
  const places = value.split(" then ").map((t, i) => (t === "floor" ? "on the floor" : `${prepositionOf(t, relations[i])} the ${t}`));
  return { answer: `${capitalise(places.join(", then "))}.`, alternatives: [places.join(", then "), value, value.split(" then ").join(", then ")] };
}
