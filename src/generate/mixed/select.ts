/**
 * From a home's candidates to its episodes: each candidate's answer is its program executed over
 * the ground truth; the rules drop what a fair question cannot be (TAG-EQA's funnel, plus Mixed
 * EQA's own: a `present` question whose answer the history already gives, a `past` question
 * whose answer the home as it is now still gives, a question about now whose answer no standing
 * point shows); then up to `perCategory` questions per category are
 * chosen, dealt in turn from each template and answer (yes and no alike), in a seeded order.
 */
import type { Random } from "../../core/index.js";
import { MIXED_CATEGORIES, canonicalMixedValue, executeMixedProgram, type MixedCategory, type MixedEpisode, type MixedWorldView } from "../../data/index.js";
import { checkEnglish } from "../english.js";
import { shuffled } from "../generate.js";
import { instanceId, type HomeContext } from "./context.js";
import { written } from "./phrases.js";
import { MIXED_FUNNEL_RULES, type MixedCandidate, type MixedFunnelRule } from "./templates.js";

export interface MixedFunnel {
  /** Candidates the templates made. */
  made: number;
  /** Dropped by each rule. */
  filtered: Record<MixedFunnelRule, number>;
  /** Passed every rule. */
  kept: number;
  /** Chosen into the set (at most the per-category number per home). */
  chosen: number;
}

export function emptyMixedFunnels(): Record<MixedCategory, MixedFunnel> {
  return Object.fromEntries(MIXED_CATEGORIES.map((c) => [c, { made: 0, filtered: Object.fromEntries(MIXED_FUNNEL_RULES.map((r) => [r, 0])) as Record<MixedFunnelRule, number>, kept: 0, chosen: 0 }])) as Record<MixedCategory, MixedFunnel>;
}

/** An episode before its split is dealt. */
export type UnsplitEpisode = Omit<MixedEpisode, "split">;

interface Passed {
  candidate: MixedCandidate;
  value: string;
}

const PLACE_QUERIES = new Set(["where", "contents", "where_days"]);
const HISTORY_ANSWERS: Record<MixedCategory, boolean> = { past: true, multi_past: true, present: false, past_present: false };

/** Whether the question names a type its answer lists (the answer given away). */
export function givesAnswerAway(question: string, program: MixedCandidate["program"], value: string): boolean {
  if (!PLACE_QUERIES.has(program.query)) return false;
  const text = question.toLowerCase();
  return value
    .split(/, | then /)
    .filter((t) => t !== "floor" && t !== "nothing")
    .some((t) => new RegExp(`\\b${t.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}\\b`).test(text));
}

/** The rule a candidate breaks, or its answer. */
export function judgeCandidate(ctx: HomeContext, c: MixedCandidate): { rule: MixedFunnelRule } | { value: string } {
  if (c.problem) return { rule: c.problem };
  const value = executeMixedProgram(c.program, ctx.truth);
  if (value === undefined) return { rule: "unknown" };
  if (givesAnswerAway(c.question, c.program, value)) return { rule: "containsAnswer" };
  const question = written(c.question);
  const answer = written(c.render(value).answer);
  if (checkEnglish(question, { question: true }).length > 0 || checkEnglish(answer, { answerTo: question }).length > 0) return { rule: "english" };
  // what the agent remembers must not already answer a question about now
  if (c.category === "present" && executeMixedProgram(c.program, ctx.remembered) === value) return { rule: "answeredByHistory" };
  // nor may looking at the home now answer a question about the past: something it asks has changed since
  if (c.category === "past" && executeMixedProgram(c.program, presentAsEveryMoment(ctx)) === value) return { rule: "answeredByPresent" };
  return { value };
}

/** The home now taken for every moment: what an agent that only looks now, and assumes nothing changed, knows. */
function presentAsEveryMoment(ctx: HomeContext): MixedWorldView {
  const now = ctx.truth.snapshot({ now: true });
  return { snapshot: () => now };
}

/** Candidates dealt in turn from each stratum (template and yes/no answer), each stratum in a seeded order. */
function balanced(passed: Passed[], random: Random): Passed[] {
  const strata = new Map<string, Passed[]>();
  for (const p of passed) {
    const key = `${p.candidate.template}|${p.value === "yes" || p.value === "no" ? p.value : "value"}`;
    strata.set(key, [...(strata.get(key) ?? []), p]);
  }
  const lists = shuffled([...strata.keys()].sort(), random).map((k) => shuffled(strata.get(k)!, random));
  const out: Passed[] = [];
  for (let round = 0; out.length < passed.length; round++) for (const list of lists) if (list[round]) out.push(list[round]!);
  return out;
}

/** The home's episodes: every rule applied, the funnel counted, up to `perCategory` per category. */
export function selectEpisodes(ctx: HomeContext, candidates: readonly MixedCandidate[], perCategory: number, random: Random, funnels: Record<MixedCategory, MixedFunnel>): UnsplitEpisode[] {
  const episodes: UnsplitEpisode[] = [];
  for (const category of MIXED_CATEGORIES) {
    const funnel = funnels[category];
    const texts = new Set<string>();
    const passed: Passed[] = [];
    for (const c of candidates.filter((x) => x.category === category)) {
      funnel.made++;
      const judged = judgeCandidate(ctx, c);
      const rule = "rule" in judged ? judged.rule : texts.has(c.question) ? "duplicate" : undefined;
      if (rule) {
        funnel.filtered[rule]++;
        continue;
      }
      texts.add(c.question);
      passed.push({ candidate: c, value: (judged as { value: string }).value });
    }
    funnel.kept += passed.length;
    let chosen = 0;
    for (const p of balanced(passed, random)) {
      if (chosen >= perCategory) break;
      const path = pathLength(ctx, p.candidate);
      if (path === undefined) {
        funnel.filtered.unreachable++;
        funnel.kept--;
        continue;
      }
      episodes.push(toEpisode(ctx, p, path, ++chosen));
    }
    funnel.chosen += chosen;
  }
  return episodes;
}

/** Metres to a view of every target (0 when the history answers); undefined when one cannot be seen. */
function pathLength(ctx: HomeContext, c: MixedCandidate): number | undefined {
  if (HISTORY_ANSWERS[c.category]) return 0;
  let longest = 0;
  for (const target of c.targets) {
    const metres = ctx.paths.toView(instanceId(target));
    if (metres === undefined) return undefined;
    longest = Math.max(longest, metres);
  }
  return longest;
}

function toEpisode(ctx: HomeContext, p: Passed, path: number, n: number): UnsplitEpisode {
  const c = p.candidate;
  const rendered = c.render(p.value);
  const present = new Set(ctx.presentObjects.map((o) => o.id));
  return {
    question_id: `${ctx.scene}-${c.category}-q${String(n).padStart(2, "0")}`,
    scene: ctx.scene,
    question: written(c.question),
    answer: written(rendered.answer),
    alternatives: [...new Set([...rendered.alternatives, ...rendered.alternatives.map(written)])],
    answer_value: canonicalMixedValue(p.value),
    category: c.category,
    history_answers: HISTORY_ANSWERS[c.category],
    evidence: { frames: c.frames, objects: HISTORY_ANSWERS[c.category] ? [] : c.targets.filter((t) => present.has(t)) },
    start: { position: [...ctx.start.position], yaw: ctx.start.yaw, pitch: ctx.start.pitch },
    gt_path_length: path,
    program: c.program,
    template: c.template,
  };
}
