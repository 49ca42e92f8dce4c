import { formatJudgeUnreadable } from "../core/index.js";
import type { ExploreWorkflowResult } from "../eval/index.js";
import { formatRunCost } from "./text.js";

/**
 * What `eqa explore` prints after a run (and `eqa reproduce` after each explore row): episodes,
 * path length, the explorer's own time, distance to the goal, floor seen, reliability,
 * multiple-choice accuracy, the judge's figures, failures, then the cost table and the files
 * written. `explorer` names the explorer (or the user's own agent) and `env` the environment.
 */
export function formatExploreRun(run: Pick<ExploreWorkflowResult, "runDir" | "summary" | "scores" | "cost">, explorer: string, env: string): string {
  const s = run.summary;
  const m = s.metrics;
  const fmt = (v: number | null, digits = 2): string => (v === null ? "n/a" : v.toFixed(digits));
  const lines = [
    `eqa explore (${explorer}, ${env}): ${s.counts.finished}/${s.counts.episodes} episodes finished, ${s.counts.failed} failed, ${s.counts.reused} reused`,
    `path length: ${fmt(m.pathLength.meanMetres)} m, ${fmt(m.pathLength.meanSteps, 1)} steps (mean)`,
    `explorer time per step (without environment and model calls): ${fmt(m.explorerMsPerStep.mean)} ms mean, ${fmt(m.explorerMsPerStep.max)} ms max`,
  ];
  if (m.goalDistance.n > 0) lines.push(`distance to goal at the end: ${fmt(m.goalDistance.meanMetres)} m (mean of ${m.goalDistance.n})`);
  if (m.coverage.n > 0) lines.push(`reachable floor seen: ${fmt(m.coverage.mean === null ? null : 100 * m.coverage.mean, 1)} % (mean of ${m.coverage.n}), least ${fmt(m.coverage.min === null ? null : 100 * m.coverage.min, 1)} %`);
  const rel = s.reliability;
  if (rel.n > 0) lines.push(`reliability (EXPRESS-Bench): ACE ${fmt(rel.ace, 3)}, NPL ${fmt(rel.npl, 3)}, WCE ${fmt(rel.wce, 3)} (n=${rel.n})`);
  for (const l of rel.leftOut) lines.push(`  ACE/NPL/WCE leave out ${l.episodes} episode(s): ${l.reason}`);
  const mc = m.multipleChoice;
  if (mc.n > 0) lines.push(`multiple-choice accuracy: ${fmt(mc.accuracy, 1)} % (${mc.correct} of ${mc.n} correct${mc.unread > 0 ? `, ${mc.unread} repl${mc.unread === 1 ? "y" : "ies"} without a choice letter` : ""})`);
  const scores = run.scores;
  if (scores) {
    const e = scores.efficiency;
    const x = scores.express;
    lines.push(`judge ${scores.judge}: ${scores.judged} judged, ${scores.failed} failed, ${scores.judgeUnreadable.count} unreadable by the judge; LLM-Match C ${fmt(scores.llmMatch.correctness, 1)} % (n=${scores.llmMatch.n})`);
    const unreadable = formatJudgeUnreadable(scores.judgeUnreadable);
    if (unreadable) lines.push(`${unreadable}; left out of that judge's figures`);
    if (e.metres) lines.push(`OpenEQA efficiency E (metres): ${fmt(e.metres.efficiency, 1)} % (n=${e.metres.n})`);
    if (e.steps) lines.push(`OpenEQA efficiency E (steps): ${fmt(e.steps.efficiency, 1)} % (n=${e.steps.n})`);
    if (x) {
      lines.push(`EXPRESS-Bench: C ${fmt(x.c, 1)} %, C* ${fmt(x.cStar, 1)} % (n=${x.nScored}, unjudged ${x.unjudged}), E_path ${fmt(x.ePath, 1)} % (n=${x.nPath}), d_T ${fmt(x.dT)} m (n=${x.nGoal})`);
      for (const l of x.leftOut) lines.push(`  ${l.metric} leaves out ${l.episodes} episode(s): ${l.reason}`);
    }
  }
  for (const f of s.failures) lines.push(`failed ${f.questionId}: ${f.error}`);
  lines.push("", formatRunCost(run.cost), "", `wrote ${run.runDir}/{episodes.jsonl,predictions.json,summary.json,trajectories/,frames/}`);
  return lines.join("\n");
}
