/**
 * The question templates of Mixed EQA, one family per category. Each proposes programs with
 * their text; the answer is always the program executed over the ground truth (`select.ts`), never
 * the template's. A template marks a candidate that breaks a rule it can tell (a name that picks
 * several objects, an object not seen as it was, an object in hand) so that the funnel counts it.
 */
import type { MixedCategory, MixedProgram, MixedSnapshotObject } from "../../data/index.js";
import { catalogueType } from "../../sim/index.js";
import { contentsSeenAt, framesOf, presentRelation, relationAt, seenAsAt, snapshotAt, stateSeenAt, uniqueType, type EvidenceFrame, type HomeContext } from "./context.js";
import type { RecordedDay } from "./days.js";
import { contentsAnswer, countAnswer, eventPhrase, placeAnswer, placesAnswer, prepositionOf, yesNoAnswer, type RenderedAnswer } from "./phrases.js";

export const MIXED_FUNNEL_RULES = ["notUnique", "neverSeen", "held", "unknown", "containsAnswer", "english", "answeredByHistory", "answeredByPresent", "unreachable", "duplicate"] as const;
export type MixedFunnelRule = (typeof MIXED_FUNNEL_RULES)[number];

export interface MixedCandidate {
  category: MixedCategory;
  template: string;
  program: MixedProgram;
  question: string;
  render: (value: string) => RenderedAnswer;
  frames: EvidenceFrame[];
  /** Objects (log ids) whose view now shows the answer (present and past_present). */
  targets: string[];
  problem?: MixedFunnelRule;
}

/** States a question asks about, and how it says them. */
const STATE_WORDS: Record<string, string> = { open: "open", toggled: "switched on" };
const STATES_ASKED = Object.keys(STATE_WORDS);

const isSmall = (o: MixedSnapshotObject, log: RecordedDay["log"]): boolean => log.objects.find((x) => x.id === o.id)?.kind === "object";
/** A surface whose contents can be seen: a receptacle that does not close. */
export function isSurfaceType(type: string): boolean {
  try {
    const spec = catalogueType(type);
    return spec.receptacle !== null && !spec.states.includes("open");
  } catch {
    return false;
  }
}
const endOf = (day: RecordedDay): string => `when you finished your tasks ${day.adverbial}`;

/** The day's events with their ordinal and total per (event type, object type). */
function dayEvents(day: RecordedDay): { type: string; objectType: string; object: string; step: number; index: number; total: number }[] {
  const typeOf = new Map(day.log.objects.map((o) => [o.id, o.type] as const));
  const counts = new Map<string, number>();
  const out = day.log.events.map((e) => {
    const objectType = typeOf.get(e.object) ?? "";
    const key = `${e.type}\u0000${objectType}`;
    const index = (counts.get(key) ?? 0) + 1;
    counts.set(key, index);
    return { type: e.type, objectType, object: e.object, step: e.step, index, total: 0 };
  });
  for (const e of out) e.total = counts.get(`${e.type}\u0000${e.objectType}`)!;
  return out;
}

function objectProblem(objects: readonly MixedSnapshotObject[], o: MixedSnapshotObject, seen: readonly number[], day: RecordedDay, step: number): MixedFunnelRule | undefined {
  if (!uniqueType(objects, o.type)) return "notUnique";
  if (relationAt(day, o.id, step) === "held") return "held";
  return seen.length === 0 ? "neverSeen" : undefined;
}

/** `past`: one day, at its end or right after an event. */
export function pastCandidates(ctx: HomeContext): MixedCandidate[] {
  const out: MixedCandidate[] = [];
  for (const day of ctx.days) {
    const end = day.world.lastStep;
    const atEnd = snapshotAt(day.log, end);
    for (const o of atEnd) {
      if (isSmall(o, day.log)) {
        const seen = seenAsAt(day, o.id, end);
        const problem = objectProblem(atEnd, o, seen, day, end);
        out.push({ category: "past", template: "past_where_end", program: { query: "where", object: o.type, at: { day: day.day, at: "end" } }, question: `Where was the ${o.type} ${endOf(day)}?`, render: (v) => placeAnswer(v, relationAt(day, o.id, end)), frames: framesOf(day, seen), targets: [], ...(problem ? { problem } : {}) });
      } else if (isSurfaceType(o.type)) {
        const seen = contentsSeenAt(day, o.id, end);
        const problem: MixedFunnelRule | undefined = !uniqueType(atEnd, o.type) ? "notUnique" : seen.length === 0 ? "neverSeen" : undefined;
        const prep = prepositionOf(o.type);
        const base = { category: "past" as const, frames: framesOf(day, seen), targets: [], ...(problem ? { problem } : {}) };
        out.push({ ...base, template: "past_contents_end", program: { query: "contents", receptacle: o.type, at: { day: day.day, at: "end" } }, question: `What was ${prep} the ${o.type} ${endOf(day)}?`, render: contentsAnswer });
        out.push({ ...base, template: "past_count_end", program: { query: "count_on", receptacle: o.type, at: { day: day.day, at: "end" } }, question: `How many things were ${prep} the ${o.type} ${endOf(day)}?`, render: countAnswer });
      }
    }
    out.push(...pastEventCandidates(day));
  }
  return out;
}

/** `past` questions about the moment right after an event of the day. */
function pastEventCandidates(day: RecordedDay): MixedCandidate[] {
  const out: MixedCandidate[] = [];
  const events = dayEvents(day);
  for (const [k, e] of events.entries()) {
    const objects = snapshotAt(day.log, e.step);
    if (!uniqueType(objects, e.objectType)) continue;
    const at = { day: day.day, at: "after" as const, event: e.type, object: e.objectType, index: e.index };
    const self = objects.find((o) => o.id === e.object)!;
    if (e.type === "put") {
      const seen = seenAsAt(day, e.object, e.step);
      const before = events.slice(0, k).reverse().find((p) => p.object === e.object && ["heat", "cool", "clean"].includes(p.type));
      const firstPutAfter = before && !events.slice(events.indexOf(before) + 1, k).some((p) => p.object === e.object && p.type === "put");
      const question = firstPutAfter
        ? `Where did you put the ${e.objectType} after ${eventPhrase(before.type, e.objectType, before.index, before.total, true)} ${day.adverbial}?`
        : e.total === 1
          ? `Where did you put the ${e.objectType} ${day.adverbial}?`
          : `Where did you put the ${e.objectType} down for the ${["first", "second", "third", "fourth"][e.index - 1] ?? `${e.index}th`} time ${day.adverbial}?`;
      out.push({ category: "past", template: firstPutAfter ? "past_put_after_use" : "past_put", program: { query: "where", object: e.objectType, at }, question, render: (v) => placeAnswer(v, relationAt(day, e.object, e.step)), frames: framesOf(day, seen), targets: [], ...(seen.length === 0 ? { problem: "neverSeen" as const } : {}) });
    }
    const phrase = eventPhrase(e.type, e.objectType, e.index, e.total);
    for (const o of objects) {
      if (o.id === e.object) continue;
      if (isSmall(o, day.log) && movedDuringDay(day, o.id)) {
        const seen = seenAsAt(day, o.id, e.step);
        const problem = objectProblem(objects, o, seen, day, e.step);
        const base = { category: "past" as const, frames: framesOf(day, seen), targets: [], ...(problem ? { problem } : {}) };
        out.push({ ...base, template: "past_where_after", program: { query: "where", object: o.type, at }, question: `Where was the ${o.type} right after ${phrase} ${day.adverbial}?`, render: (v) => placeAnswer(v, relationAt(day, o.id, e.step)) });
        const elsewhere = day.log.steps[0]!.objects[o.id]?.receptacle;
        const then = objects.find((x) => x.id === elsewhere)?.type ?? o.receptacle;
        if (then && uniqueType(objects, then)) out.push({ ...base, template: "past_is_on_after", program: { query: "is_on", object: o.type, receptacle: then, at }, question: `Was the ${o.type} ${prepositionOf(then)} the ${then} right after ${phrase} ${day.adverbial}?`, render: yesNoAnswer });
      }
      for (const state of STATES_ASKED) {
        if (o.states[state] === undefined || (e.type === "open" || e.type === "close" || e.type.startsWith("toggle")) && o.type === self.type) continue;
        const seen = stateSeenAt(day, o.id, e.step);
        const problem: MixedFunnelRule | undefined = !uniqueType(objects, o.type) ? "notUnique" : seen.length === 0 ? "neverSeen" : undefined;
        out.push({ category: "past", template: "past_state_after", program: { query: "state", object: o.type, state, at }, question: `Was the ${o.type} ${STATE_WORDS[state]} right after ${phrase} ${day.adverbial}?`, render: yesNoAnswer, frames: framesOf(day, seen), targets: [], ...(problem ? { problem } : {}) });
      }
    }
  }
  return out;
}

function movedDuringDay(day: RecordedDay, id: string): boolean {
  const first = day.log.steps[0]!.objects[id]?.receptacle;
  return day.log.steps.some((s) => s.objects[id]?.receptacle !== first);
}

/** `present`: about now; `select.ts` keeps only those the history cannot answer. */
export function presentCandidates(ctx: HomeContext): MixedCandidate[] {
  const out: MixedCandidate[] = [];
  const now = ctx.presentObjects;
  const remembered = ctx.remembered.snapshot({ now: true }) ?? [];
  const kindOf = new Map<string, string>(ctx.present.objects.map((o) => [`${o.type.replaceAll(" ", "_")}-${o.id}`, o.kind]));
  for (const o of now) {
    const problem: MixedFunnelRule | undefined = uniqueType(now, o.type) ? undefined : ("notUnique" as const);
    const base = { category: "present" as const, frames: [], ...(problem ? { problem } : {}) };
    if (kindOf.get(o.id) === "object") {
      const rests = presentRelation(ctx.present, o.id);
      out.push({ ...base, template: "present_where", program: { query: "where", object: o.type, at: { now: true } }, question: `Where is the ${o.type} now?`, render: (v) => placeAnswer(v, rests), targets: [o.id] });
      const was = remembered.find((r) => r.id === o.id)?.receptacle;
      for (const place of new Set([o.receptacle, was])) {
        // where it is now, asked as it rests there ("in the toilet", not the type's usual "on")
        const relation = place === o.receptacle ? rests : undefined;
        if (place && uniqueType(now, place)) out.push({ ...base, template: "present_is_on", program: { query: "is_on", object: o.type, receptacle: place, at: { now: true } }, question: `Is the ${o.type} ${prepositionOf(place, relation)} the ${place} now?`, render: yesNoAnswer, targets: [o.id] });
      }
    } else if (isSurfaceType(o.type)) {
      const contents = now.filter((x) => x.receptacle === o.type).map((x) => x.id);
      const targets = contents.length > 0 ? contents : [o.id];
      const prep = prepositionOf(o.type);
      out.push({ ...base, template: "present_contents", program: { query: "contents", receptacle: o.type, at: { now: true } }, question: `What is ${prep} the ${o.type} now?`, render: contentsAnswer, targets });
      out.push({ ...base, template: "present_count", program: { query: "count_on", receptacle: o.type, at: { now: true } }, question: `How many things are ${prep} the ${o.type} now?`, render: countAnswer, targets });
    }
    for (const state of STATES_ASKED) {
      if (o.states[state] !== undefined) out.push({ ...base, template: "present_state", program: { query: "state", object: o.type, state, at: { now: true } }, question: `Is the ${o.type} ${STATE_WORDS[state]} now?`, render: yesNoAnswer, targets: [o.id] });
    }
  }
  return out;
}

/** `multi_past`: across days: where something was at the end of each, whether it had moved from one day to a later one. */
export function multiPastCandidates(ctx: HomeContext): MixedCandidate[] {
  const out: MixedCandidate[] = [];
  const days = ctx.days;
  // every run of days for where_days (all of them, and each pair when there are more), every pair for moved
  const runs = days.length < 2 ? [] : [days, ...(days.length > 2 ? days.slice(1).map((d, i) => [days[i]!, d]) : [])];
  const pairs = days.flatMap((a, i) => days.slice(i + 1).map((b) => [a, b] as const));
  const smallIds = new Set(days.flatMap((d) => d.log.objects.filter((o) => o.kind === "object").map((o) => o.id)));
  for (const id of [...smallIds].sort()) {
    for (const run of runs) {
      const { problem, frames, type } = acrossDays(run, id);
      if (type === undefined) continue;
      const listed = `${run.slice(0, -1).map((d) => d.adverbial).join(", ")} and ${run.at(-1)!.adverbial}`;
      out.push({ category: "multi_past", template: "multi_where_days", program: { query: "where_days", object: type, days: run.map((d) => d.day) }, question: `Where was the ${type} each time you finished your tasks, ${listed}?`, render: (v) => placesAnswer(v, run.map((d) => relationAt(d, id, d.world.lastStep))), frames, targets: [], ...(problem ? { problem } : {}) });
    }
    for (const [a, b] of pairs) {
      const { problem, frames, type } = acrossDays([a, b], id);
      if (type === undefined) continue;
      out.push({ category: "multi_past", template: "multi_moved", program: { query: "moved", object: type, since: { day: a.day, at: "end" }, at: { day: b.day, at: "end" } }, question: `Was the ${type} somewhere else when you finished your tasks ${b.adverbial} than when you finished them ${a.adverbial}?`, render: yesNoAnswer, frames, targets: [], ...(problem ? { problem } : {}) });
    }
  }
  for (const [a, b] of pairs) out.push(...movedAfterCandidates(a, b));
  return out;
}

/** Whether one object (log id) can be asked about at the end of each of `days`: its type, the rule it breaks, the frames that show it. */
function acrossDays(days: readonly RecordedDay[], id: string): { type?: string; problem?: MixedFunnelRule; frames: EvidenceFrame[] } {
  const ends = days.map((d) => snapshotAt(d.log, d.world.lastStep));
  const type = ends[0]!.find((o) => o.id === id)?.type;
  if (type === undefined || ends.some((objects) => !objects.some((o) => o.id === id))) return { frames: [] };
  const seen = days.map((d) => seenAsAt(d, id, d.world.lastStep));
  const problem: MixedFunnelRule | undefined = ends.some((objects) => !uniqueType(objects, type))
    ? "notUnique"
    : days.some((d) => relationAt(d, id, d.world.lastStep) === "held")
      ? "held"
      : seen.some((steps) => steps.length === 0)
        ? "neverSeen"
        : undefined;
  return { type, frames: days.flatMap((d, i) => framesOf(d, seen[i]!, 2)), ...(problem ? { problem } : {}) };
}

/** "Had the mug moved by the end of your tasks yesterday evening, since you heated it two days ago?" */
function movedAfterCandidates(day: RecordedDay, last: RecordedDay): MixedCandidate[] {
  const out: MixedCandidate[] = [];
  for (const e of dayEvents(day)) {
    const objects = snapshotAt(day.log, e.step);
    const self = objects.find((x) => x.id === e.object);
    if (e.type === "pickup" || !self || !isSmall(self, day.log)) continue;
    const ends = snapshotAt(last.log, last.world.lastStep);
    if (!ends.some((o) => o.id === e.object)) continue;
    const seenThen = seenAsAt(day, e.object, e.step);
    const seenEnd = seenAsAt(last, e.object, last.world.lastStep);
    const held = relationAt(day, e.object, e.step) === "held" || relationAt(last, e.object, last.world.lastStep) === "held";
    const problem: MixedFunnelRule | undefined = !uniqueType(objects, e.objectType) || !uniqueType(ends, e.objectType) ? "notUnique" : held ? "held" : seenThen.length === 0 || seenEnd.length === 0 ? "neverSeen" : undefined;
    out.push({ category: "multi_past", template: "multi_moved_after", program: { query: "moved", object: e.objectType, since: { day: day.day, at: "after", event: e.type, object: e.objectType, index: e.index }, at: { day: last.day, at: "end" } }, question: `Had the ${e.objectType} moved by the end of your tasks ${last.adverbial}, since ${eventPhrase(e.type, e.objectType, e.index, e.total, true)} ${day.adverbial}?`, render: yesNoAnswer, frames: [...framesOf(day, seenThen, 2), ...framesOf(last, seenEnd, 2)], targets: [], ...(problem ? { problem } : {}) });
  }
  return out;
}

/** `past_present`: then against now: moved since, still where it was, still in the state it was. */
export function pastPresentCandidates(ctx: HomeContext): MixedCandidate[] {
  const out: MixedCandidate[] = [];
  const now = ctx.presentObjects;
  for (const day of ctx.days) {
    const end = day.world.lastStep;
    const atEnd = snapshotAt(day.log, end);
    for (const o of atEnd) {
      const present = now.find((x) => x.id === o.id);
      if (!present) continue;
      const unique = uniqueType(atEnd, o.type) && uniqueType(now, o.type);
      if (isSmall(o, day.log)) {
        const seen = seenAsAt(day, o.id, end);
        const problem: MixedFunnelRule | undefined = !unique ? "notUnique" : relationAt(day, o.id, end) === "held" ? "held" : seen.length === 0 ? "neverSeen" : undefined;
        const base = { category: "past_present" as const, frames: framesOf(day, seen), targets: [o.id], ...(problem ? { problem } : {}) };
        out.push({ ...base, template: "pp_moved_end", program: { query: "moved", object: o.type, since: { day: day.day, at: "end" }, at: { now: true } }, question: `Has the ${o.type} moved since you finished your tasks ${day.adverbial}?`, render: yesNoAnswer });
        if (o.receptacle) out.push({ ...base, template: "pp_still_on", program: { query: "is_on", object: o.type, receptacle: o.receptacle, at: { now: true } }, question: `Is the ${o.type} still ${prepositionOf(o.receptacle, relationAt(day, o.id, end))} the ${o.receptacle}, where it was ${endOf(day)}?`, render: yesNoAnswer });
      }
      for (const state of STATES_ASKED) {
        if (o.states[state] !== true) continue;
        const seen = stateSeenAt(day, o.id, end);
        const problem: MixedFunnelRule | undefined = !unique ? "notUnique" : seen.length === 0 ? "neverSeen" : undefined;
        out.push({ category: "past_present", template: "pp_state_still", program: { query: "state", object: o.type, state, at: { now: true } }, question: `Is the ${o.type} still ${STATE_WORDS[state]}, as it was ${endOf(day)}?`, render: yesNoAnswer, frames: framesOf(day, seen), targets: [o.id], ...(problem ? { problem } : {}) });
      }
    }
    for (const e of dayEvents(day)) {
      if (e.type === "pickup" || !now.some((x) => x.id === e.object)) continue;
      const objects = snapshotAt(day.log, e.step);
      if (!isSmall(objects.find((x) => x.id === e.object)!, day.log)) continue;
      const seen = seenAsAt(day, e.object, e.step);
      const problem: MixedFunnelRule | undefined = !uniqueType(objects, e.objectType) || !uniqueType(now, e.objectType) ? "notUnique" : relationAt(day, e.object, e.step) === "held" ? "held" : seen.length === 0 ? "neverSeen" : undefined;
      out.push({ category: "past_present", template: "pp_moved_after", program: { query: "moved", object: e.objectType, since: { day: day.day, at: "after", event: e.type, object: e.objectType, index: e.index }, at: { now: true } }, question: `Has the ${e.objectType} moved since ${eventPhrase(e.type, e.objectType, e.index, e.total, true)} ${day.adverbial}?`, render: yesNoAnswer, frames: framesOf(day, seen), targets: [e.object], ...(problem ? { problem } : {}) });
    }
  }
  return out;
}
