import { environmentLabel } from "../data/index.js";
import type { GroupMetrics, RewardMetrics } from "./metrics.js";

function cell(m: GroupMetrics | undefined): string {
  if (!m || m.n === 0) return "      –             –      ";
  const acc = `${m.accuracy.value.toFixed(2)} [${m.accuracy.ci[0].toFixed(1)}, ${m.accuracy.ci[1].toFixed(1)}]`;
  const rmse = `${m.rmse.value.toFixed(3)} [${m.rmse.ci[0].toFixed(2)}, ${m.rmse.ci[1].toFixed(2)}]`;
  return `${acc.padEnd(22)} ${rmse.padEnd(22)} n=${m.n}`;
}

/** The metrics as the paper's Table 1 lays them out (environments, then overall), then per category. */
export function formatRewardMetrics(metrics: RewardMetrics): string {
  const lines = [`accuracy within τ = ${metrics.tolerance} (%) and RMSE, ${Math.round(metrics.confidence * 100)}% bootstrap intervals`, `${"".padEnd(26)}${"Acc".padEnd(23)}${"RMSE".padEnd(23)}`];
  for (const [source, m] of Object.entries(metrics.environments)) lines.push(`${environmentLabel(source).padEnd(26)}${cell(m)}`);
  lines.push(`${"Overall (mean of envs)".padEnd(26)}${cell(metrics.overall)}`);
  lines.push(`${"All instances".padEnd(26)}${cell(metrics.pooled)}`);
  const categories = Object.entries(metrics.categories);
  if (categories.length > 0) {
    lines.push("per category:");
    for (const [category, m] of categories) lines.push(`  ${category.padEnd(24)}${cell(m)}`);
  }
  return lines.join("\n");
}
