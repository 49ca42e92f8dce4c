/**
 * Question programs sampled from one trajectory log (section 3): a query and its target, one to
 * three conditions of mixed predicate types derived from facts of one object at one step (so
 * that something matches), kept only when free of hints, diverse, known to the log, and
 * effective (removing any condition changes the answer); an ambiguous question also gets a
 * grounded form whose references are named by coordinates, effective as well.
 */
import { canonicalJson, randomInt, seededRandom, sha256Hex, type Random } from "../core/index.js";
import { ai2thorCatalogue, type AnswerGroup, type StructuredAnswer, type TagCondition, type TagPredicateType, type TagProgram, type TagQueryType, type TrajectoryLog, type TrajectoryObject, type TrajectoryStateName } from "../data/index.js";
import { objectCatalogue } from "../sim/index.js";
import { executeProgramDetailed, momentWindow, positionKeysAt, worldOf, type ExecutionResult } from "./execute.js";
import type { TagSeenObject } from "../data/index.js";
import { ANY_OBJECT, isBannedPair, isDiverse, momentEvents, MOMENT_KEYS, PROPERTY_KEYS, propertyOf, referenceType, type PropertyKey } from "./program.js";
import { renderQuestion, structuredQuestion } from "./render.js";
import type { TrajectoryWorld } from "./world.js";

export interface ProgramOptions {
  /** Questions wanted from the log (fewer when the log does not allow as many). */
  perTrajectory: number;
  seed: number;
  /** Most groups an ambiguous answer may have (default 6). */
  maxGroups?: number;
  /** Sampling attempts per wanted question (default 60). */
  attempts?: number;
}

export interface GeneratedProgram {
  program: TagProgram;
  answer: StructuredAnswer;
  /** The grounded form of an ambiguous question. */
  grounded: { program: TagProgram; answer: StructuredAnswer } | null;
  /** Where the agent saw each object the question refers to (`seenObjects`). */
  seen: TagSeenObject[];
}

const QUERY_WEIGHTS: [TagQueryType, number][] = [
  ["listObjects", 1],
  ["countObjects", 2],
  ["countTimes", 1],
  ["getState", 1],
  ["getProperty", 1],
  ["getLocation", 1],
];
// multi-condition candidates fail the effectiveness check more often: ask for them more
const CONDITION_COUNT_WEIGHTS: [number, number][] = [
  [1, 3],
  [2, 4],
  [3, 3],
];
const PREDICATES: TagPredicateType[] = ["property", "location", "state", "position", "moment"];

/** A seed of its own for each log, so that adding logs changes no other log's questions. */
export function logSeed(seed: number, logId: string): number {
  return (Number.parseInt(sha256Hex(`${seed}\u0000${logId}`).slice(0, 8), 16) >>> 0);
}

/**
 * Why a sampled program was not kept, in the order the checks run (a program counts under the
 * first it fails): the same program as one sampled before (its filters in another order);
 * conditions of one predicate type crowding the others or giving the answer away (section 3's
 * hints); a `getProperty` answered by the target's type alone (every object of that type in the
 * source's catalogue has the same value); an answer that depends on what the log does not know;
 * more groups than allowed; nothing matched;
 * an object the question refers to that the agent never saw as it was then (`seenObjects`); a
 * question whose text names its own answer; a condition that changes nothing; an ambiguous question with no effective grounded form.
 */
export const FUNNEL_RULES = ["duplicate", "hint", "answeredByType", "unknown", "tooManyGroups", "empty", "neverSeen", "containsAnswer", "ineffective", "noGroundedForm"] as const;
export type FunnelRule = (typeof FUNNEL_RULES)[number];

/** What generation made and dropped: programs sampled, dropped by each rule, kept. */
export interface GenerationFunnel {
  made: number;
  filtered: Record<FunnelRule, number>;
  kept: number;
}

export function emptyFunnel(): GenerationFunnel {
  return { made: 0, filtered: Object.fromEntries(FUNNEL_RULES.map((r) => [r, 0])) as Record<FunnelRule, number>, kept: 0 };
}

/** `funnel`, when given, counts what happened to every sampled program. */
export function generatePrograms(log: TrajectoryLog, options: ProgramOptions, funnel: GenerationFunnel = emptyFunnel()): GeneratedProgram[] {
  const world = worldOf(log);
  const random = seededRandom(logSeed(options.seed, log.id));
  const maxGroups = options.maxGroups ?? 6;
  const attempts = options.perTrajectory * (options.attempts ?? 60);
  const kept: GeneratedProgram[] = [];
  const seen = new Set<string>();
  // no query type takes more than 30 % of a trajectory's questions (the easy ones would crowd out the rest)
  const perQuery = new Map<TagQueryType, number>();
  // predicate types already used are drawn less often (position is always at hand; the others not)
  const perPredicate = new Map<TagPredicateType, number>();
  const cap = Math.max(1, Math.ceil(options.perTrajectory * 0.3));
  for (let i = 0; i < attempts && kept.length < options.perTrajectory; i++) {
    const program = sampleProgram(world, random, (q) => (perQuery.get(q) ?? 0) < cap, perPredicate);
    if (!program) continue;
    funnel.made++;
    const key = canonicalProgramKey(program);
    if (seen.has(key)) {
      funnel.filtered.duplicate++;
      continue;
    }
    seen.add(key);
    const accepted = judgeProgram(program, log, random, maxGroups);
    if (typeof accepted === "string") {
      funnel.filtered[accepted]++;
      continue;
    }
    funnel.kept++;
    kept.push(accepted);
    perQuery.set(program.query.type, (perQuery.get(program.query.type) ?? 0) + 1);
    for (const c of program.filters) perPredicate.set(c.type, (perPredicate.get(c.type) ?? 0) + 1);
  }
  return kept;
}

/** A program's identity for the diversity check: its filters in a canonical order, so that programs differing only in that order are one. */
export function canonicalProgramKey(program: TagProgram): string {
  return structuredQuestion({ ...program, filters: [...program.filters].sort((a, b) => canonicalJson(a).localeCompare(canonicalJson(b))) });
}

/** The checks of section 3 on one candidate; its grounded form when it is ambiguous. */
export function acceptProgram(program: TagProgram, log: TrajectoryLog, random: Random, maxGroups = 6): GeneratedProgram | null {
  const judged = judgeProgram(program, log, random, maxGroups);
  return typeof judged === "string" ? null : judged;
}

/** The accepted program with its answers, or the first rule it fails. */
export function judgeProgram(program: TagProgram, log: TrajectoryLog, random: Random, maxGroups = 6): GeneratedProgram | FunnelRule {
  if (!isDiverse(program.filters) || program.filters.some((c) => isBannedPair(program, c))) return "hint";
  if (isAnsweredByType(program, log.source)) return "answeredByType";
  const result = executeProgramDetailed(program, log);
  if (result.unknown) return "unknown";
  if (result.answer.length > maxGroups) return "tooManyGroups";
  if (!hasContent(result.answer)) return "empty";
  const seen = seenObjects(result, log);
  if (seen === null) return "neverSeen";
  if (containsItsAnswer(program, result.answer)) return "containsAnswer";
  if (!isEffective(program, result, log)) return "ineffective";
  if (result.grouped.length === 0) return { program, answer: result.answer, grounded: null, seen };
  const candidates = shuffled(result.answer.filter((g) => g.objects.length > 0), random);
  for (const group of candidates) {
    const filters = program.filters.map((c) => ({ ...c }));
    let complete = true;
    result.grouped.forEach((index, k) => {
      const position = group.conditions?.[k]?.position;
      if (position) filters[index] = { ...filters[index]!, at: position };
      else complete = false;
    });
    if (!complete) continue;
    const grounded: TagProgram = { ...program, filters };
    const groundedResult = executeProgramDetailed(grounded, log);
    if (groundedResult.unknown || groundedResult.answer.length !== 1 || !hasContent(groundedResult.answer)) continue;
    if (!isEffective(grounded, groundedResult, log)) continue;
    return { program, answer: result.answer, grounded: { program: grounded, answer: groundedResult.answer }, seen };
  }
  return "noGroundedForm";
}

/**
 * A `getProperty` question whose answer the target's type gives: every object of that type in
 * the catalogue of the log's source has the same value (ALFRED: AI2-THOR's catalogue, one
 * material, use and fixed colour per type, so every ALFRED property question; the built-in
 * simulator: material and use per type, colour when the type comes in one colour). Other
 * sources have no catalogue: their properties are taken to vary.
 */
export function isAnsweredByType(program: TagProgram, source: string): boolean {
  if (program.query.type !== "getProperty" || program.target === ANY_OBJECT) return false;
  const key = program.query.modifier as PropertyKey;
  if (source === "alfred") {
    const entry = ai2thorCatalogue().get(program.target);
    return entry !== undefined && entry[key] !== undefined;
  }
  if (source === "sim") {
    const entry = objectCatalogue().types[program.target];
    return entry !== undefined && (key !== "colour" || entry.colours.length === 1);
  }
  return false;
}

/**
 * The question names its own answer: a value asked for (a property, a location) appears in the
 * question's words ("what is the soap bar made of?": soap), a location's receptacle is an
 * object the question names ("where is the laptop in front of the desk?": on the desk), or every
 * type a list answers with is one the question's conditions name ("what objects were there
 * right before you picked up the bowl?": bowls).
 */
export function containsItsAnswer(program: TagProgram, answer: StructuredAnswer): boolean {
  const type = program.query.type;
  if (type === "getProperty" || type === "getLocation") {
    const question = ` ${renderQuestion(program).toLowerCase().replace(/[^a-z0-9]+/g, " ")} `;
    const values = answer.flatMap((g) => (Array.isArray(g.value) ? g.value : [g.value])).filter((v): v is string => typeof v === "string");
    return values.some((v) => {
      const value = v.toLowerCase().replace(/\(x=.*?\)/g, " ").replace(/[^a-z0-9]+/g, " ").trim();
      if (value === "") return false;
      if (question.includes(` ${value} `)) return true;
      // "on the desk", "inside the fridge": the receptacle named anywhere in the question
      const receptacle = type === "getLocation" ? /^(?:on|inside|in|under|above) the (.+)$/.exec(value)?.[1] : undefined;
      return receptacle !== undefined && question.includes(` the ${receptacle} `);
    });
  }
  if (type === "listObjects") {
    const named = new Set<string>();
    for (const c of program.filters) {
      if (c.type === "moment") for (const e of momentEvents(c)) named.add(e.objectType);
      const reference = referenceType(c);
      if (reference !== null) named.add(reference);
      if (c.type === "location" && (c.key === "same_on" || c.key === "same_inside")) named.add(String(c.args[0]));
    }
    const answered = new Set(answer.flatMap((g) => g.objects.map((o) => o.type)));
    return answered.size > 0 && [...answered].every((t) => named.has(t));
  }
  return false;
}

/**
 * Where the agent saw each object an answer refers to, at the step the question refers to it
 * (`ExecutionResult.referenced`): the steps at which it was seen as it was then
 * (`TrajectoryWorld.seenFor`), with their frames when the log has them; null when some object
 * was never seen so (the question is not answerable from the observations).
 */
export function seenObjects(result: ExecutionResult, log: TrajectoryLog): TagSeenObject[] | null {
  const world = worldOf(log);
  const out: TagSeenObject[] = [];
  for (const r of result.referenced) {
    let found: { step: number; steps: number[] } | null = null;
    for (const step of r.steps) {
      const steps = world.seenFor(r.id, step);
      if (steps.length > 0) {
        found = { step, steps };
        break;
      }
    }
    if (!found) return null;
    const object = world.object(r.id)!;
    const frames = found.steps.map((s) => log.steps[s]!.frame).filter((f): f is number => typeof f === "number");
    out.push({ object: r.id, type: object.type, position: world.groundedPositionNear(r.id, r.at), step: found.step, steps: found.steps, ...(frames.length === found.steps.length ? { frames } : {}) });
  }
  return out.sort((a, b) => a.object.localeCompare(b.object) || a.step - b.step);
}

function hasContent(answer: StructuredAnswer): boolean {
  return answer.some((g) => g.objects.length > 0);
}

/**
 * What an answer says, whatever its grouping, the order of its objects (they are listed by
 * where they are, which changes when one moves) and whenever they were seen: the non-empty
 * groups' objects (by the log's ids) and values, each object with its own value.
 */
export function answerSignature(result: ExecutionResult): string {
  const groups = result.answer
    .map((g, i) => byId(result.ids[i] ?? [], g.value))
    .filter((g) => g.ids.length > 0 || (typeof g.value === "number" && g.value > 0))
    .map((g) => canonicalJson(g))
    .sort();
  return canonicalJson(groups);
}

/** A group's ids in order, with its per-object values (a list as long as the ids) in the same order. */
function byId(ids: readonly string[], value: AnswerGroup["value"]): { ids: string[]; value: AnswerGroup["value"] } {
  const order = ids.map((id, k) => [id, k] as const).sort((a, b) => a[0].localeCompare(b[0]));
  const perObject = Array.isArray(value) && value.length === ids.length;
  return { ids: order.map(([id]) => id), value: perObject ? order.map(([, k]) => value[k]!) : value };
}

/**
 * Every condition changes the answer: dropping any one of them gives another answer. A program
 * without a moment asks about the present (or, counting events, the whole trajectory), so
 * dropping a moment compares the moment with the present; a moment must also differ from the
 * whole trajectory, else it narrows nothing (objects that were on the counter "before you
 * opened the fridge" are all those that ever were). Answers are compared by what they say
 * (`answerSignature`), not by the order their objects are listed in, which follows where they
 * are: else a moment that changes nothing ("How many CDs were there right before you picked up
 * the CD?": the same 3 at every step, one of them moved) passed for one that changes the order.
 */
export function isEffective(program: TagProgram, result: ExecutionResult, log: TrajectoryLog): boolean {
  const signature = answerSignature(result);
  const whole: [number, number] = [0, worldOf(log).lastStep];
  return program.filters.every((condition, i) => {
    const reduced: TagProgram = { ...program, filters: program.filters.filter((__, j) => j !== i) };
    if (answerSignature(executeProgramDetailed(reduced, log)) === signature) return false;
    if (condition.type !== "moment" || reduced.filters.some((c) => c.type === "moment")) return true;
    return answerSignature(executeProgramDetailed(reduced, log, whole)) !== signature;
  });
}

function sampleProgram(world: TrajectoryWorld, random: Random, open: (query: TagQueryType) => boolean, used: ReadonlyMap<TagPredicateType, number>): TagProgram | null {
  const weights = QUERY_WEIGHTS.filter(([q]) => open(q));
  if (weights.length === 0) return null;
  const query = pickWeighted(weights, random);
  const head = sampleQuery(world, query, random);
  if (!head) return null;
  const count = pickWeighted(CONDITION_COUNT_WEIGHTS, random);
  const kinds = weightedDraw(PREDICATES.map((p): [TagPredicateType, number] => [p, 1 / (1 + (used.get(p) ?? 0) / 3)]), count, random);
  // a state changes only with events: a state question without a moment is rarely effective
  if (query === "getState" && !kinds.includes("moment") && random() < 0.7) kinds[0] = "moment";
  const filters: TagCondition[] = [];
  if (kinds.includes("moment")) {
    const moment = sampleMoment(world, random);
    if (!moment) return null;
    filters.push(moment);
  }
  const window = momentWindow(filters, world, query === "countTimes");
  if (!window) return null;
  const anchor = query === "countTimes" ? countedEvent(world, head, window, random) : anyObjectAnyStep(world, head, window, random);
  if (!anchor) return null;
  const { object, step } = anchor;
  for (const kind of kinds) {
    if (kind === "moment") continue;
    const condition = sampleCondition(world, kind, object, step, head, random);
    if (!condition) return null;
    filters.push(condition);
  }
  return { target: head.target, filters: shuffled(filters, random), query: { type: query, modifier: head.modifier } };
}

/** The object and step whose facts the conditions describe. */
function anyObjectAnyStep(world: TrajectoryWorld, head: QueryHead, window: [number, number], random: Random): { object: TrajectoryObject; step: number } | null {
  const targets = head.target === ANY_OBJECT ? world.objectsOfKind("object") : world.ofType(head.target);
  const object = pick(targets, random);
  return object ? { object, step: window[0] + randomInt(random, window[1] - window[0] + 1) } : null;
}

/** For `countTimes`: one of the counted events in the window, its object at its step. */
function countedEvent(world: TrajectoryWorld, head: QueryHead, window: [number, number], random: Random): { object: TrajectoryObject; step: number } | null {
  const events = world.log.events.filter((e) => e.type === head.modifier && world.object(e.object)?.type === head.target && e.step >= window[0] && e.step <= window[1]);
  const event = pick(events, random);
  return event ? { object: world.object(event.object)!, step: event.step } : null;
}

interface QueryHead {
  target: string;
  modifier: string | null;
}

function sampleQuery(world: TrajectoryWorld, query: TagQueryType, random: Random): QueryHead | null {
  const objects = world.objectsOfKind("object");
  switch (query) {
    case "listObjects":
      return objects.length > 0 ? { target: ANY_OBJECT, modifier: null } : null;
    case "countObjects":
    case "getLocation": {
      const o = pick(objects, random);
      return o ? { target: o.type, modifier: null } : null;
    }
    case "countTimes": {
      const e = pick(world.eventRefs(), random);
      return e ? { target: e.ref.objectType, modifier: e.ref.type } : null;
    }
    case "getState": {
      const o = pick(world.log.objects.filter((x) => x.states.some((s) => offersState(world, x.type, s))), random);
      const state = o ? pick(o.states.filter((s) => offersState(world, o.type, s)), random) : undefined;
      return o && state ? { target: o.type, modifier: state } : null;
    }
    case "getProperty": {
      const o = pick(world.log.objects.filter((x) => x.kind !== "structure" && knownProperties(x).length > 0), random);
      const key = o ? pick(knownProperties(o), random) : undefined;
      return o && key ? { target: o.type, modifier: key } : null;
    }
  }
}

/**
 * Whether questions may ask about or filter by a state of objects of a type: any state, except
 * broken unless something of that type broke in the trajectory (else "broken" is never true and
 * the answer is always "intact").
 */
function offersState(world: TrajectoryWorld, type: string, state: TrajectoryStateName): boolean {
  return state !== "broken" || world.log.events.some((e) => e.type === "break" && world.object(e.object)?.type === type);
}

function knownProperties(o: TrajectoryObject): PropertyKey[] {
  return PROPERTY_KEYS.filter((k) => propertyOf(o, k) !== undefined);
}

function sampleCondition(world: TrajectoryWorld, kind: TagPredicateType, o: TrajectoryObject, t: number, head: QueryHead, random: Random): TagCondition | null {
  switch (kind) {
    case "property": {
      const key = pick(knownProperties(o).filter((k) => !(head.modifier === k)), random);
      return key ? { type: "property", key, args: [propertyOf(o, key)!] } : null;
    }
    case "state": {
      const states = o.states.filter((s) => s !== head.modifier && offersState(world, o.type, s) && world.state(o.id, t)?.states[s] !== undefined);
      const state = pick(states, random) as TrajectoryStateName | undefined;
      return state ? { type: "state", key: state, args: [String(world.state(o.id, t)!.states[state])] } : null;
    }
    case "location":
      return sampleLocation(world, o, t, random);
    case "position": {
      const others = shuffled(world.log.objects.filter((r) => r.type !== o.type && r.kind !== "structure"), random).slice(0, 12);
      for (const r of others) {
        const key = pick(positionKeysAt(world, o.id, r.id, t) ?? [], random);
        if (key) return { type: "position", key, args: [r.type] };
      }
      return null;
    }
    case "moment":
      return sampleMoment(world, random);
  }
}

function sampleLocation(world: TrajectoryWorld, o: TrajectoryObject, t: number, random: Random): TagCondition | null {
  const s = world.state(o.id, t);
  const options: TagCondition[] = [];
  if (s && (s.relation === "on" || s.relation === "inside") && s.receptacle) {
    const receptacle = world.object(s.receptacle);
    if (receptacle) {
      const key = s.relation;
      options.push({ type: "location", key, args: [receptacle.type] });
      const neighbour = pick(
        world.log.objects.filter((p) => p.type !== o.type && p.id !== receptacle.id && world.state(p.id, t)?.receptacle === receptacle.id && world.state(p.id, t)?.relation === key),
        random,
      );
      if (neighbour) options.push({ type: "location", key: key === "on" ? "same_on" : "same_inside", args: [receptacle.type, neighbour.type] });
    }
  }
  const p = world.position(o.id, t);
  if (p && o.size) {
    const near = world.log.objects.filter((r) => {
      const q = world.position(r.id, t);
      return r.id !== o.id && r.type !== o.type && r.size && q && Math.abs(q[0] - p[0]) < (r.size[0] + o.size![0]) / 2 && Math.abs(q[2] - p[2]) < (r.size[2] + o.size![2]) / 2;
    });
    const r = pick(near, random);
    const q = r ? world.position(r.id, t) : null;
    if (r && q) options.push({ type: "location", key: p[1] > q[1] ? "above" : "under", args: [r.type] });
  }
  return pick(options, random) ?? null;
}

function sampleMoment(world: TrajectoryWorld, random: Random): TagCondition | null {
  const events = world.eventRefs();
  const first = pick(events, random);
  if (!first) return null;
  const key = pick(MOMENT_KEYS, random)!;
  const args = (e: (typeof events)[number]) => [e.ref.type, e.ref.objectType, e.ref.ordinal];
  if (key === "between") {
    const second = pick(events.filter((e) => e.event.step > first.event.step + 1), random);
    return second ? { type: "moment", key, args: [...args(first), ...args(second)] } : null;
  }
  return { type: "moment", key, args: args(first) };
}

function pick<T>(items: readonly T[], random: Random): T | undefined {
  return items.length === 0 ? undefined : items[randomInt(random, items.length)];
}

function pickWeighted<T>(items: readonly [T, number][], random: Random): T {
  const total = items.reduce((s, [, w]) => s + w, 0);
  let r = random() * total;
  for (const [item, w] of items) {
    r -= w;
    if (r < 0) return item;
  }
  return items[items.length - 1]![0];
}

/** `count` distinct items, each draw weighted. */
function weightedDraw<T>(items: readonly [T, number][], count: number, random: Random): T[] {
  const pool = [...items];
  const out: T[] = [];
  while (out.length < count && pool.length > 0) {
    const item = pickWeighted(pool, random);
    out.push(item);
    pool.splice(pool.findIndex(([x]) => x === item), 1);
  }
  return out;
}

export function shuffled<T>(items: readonly T[], random: Random): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = randomInt(random, i + 1);
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}
