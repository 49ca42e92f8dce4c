import { scanNetDownloadCommand, type EpisodeCheck, type ScanOutcome } from "../episodes/index.js";
import type { Hm3dOutcome } from "../sim/index.js";

/** What `eqa data prepare openeqa --scannet` did, one line a failed scan and a total. */
export function formatScanNetPrepare(outcomes: readonly ScanOutcome[], out: string): string {
  return formatPrepared("ScanNet", outcomes, out);
}

/** What `eqa data prepare openeqa --hm3d` did, one line a failed episode and a total. */
export function formatHm3dPrepare(outcomes: readonly Hm3dOutcome[], out: string): string {
  return formatPrepared("HM3D", outcomes, out);
}

function formatPrepared(source: string, outcomes: readonly { episodeHistory: string; written: number; kept: number; error?: string }[], out: string): string {
  const lines: string[] = [];
  for (const o of outcomes) if (o.error !== undefined) lines.push(`failed ${o.episodeHistory}: ${o.error}`);
  const done = outcomes.filter((o) => o.error === undefined);
  const written = outcomes.reduce((n, o) => n + o.written, 0);
  const kept = outcomes.reduce((n, o) => n + o.kept, 0);
  lines.push(
    `${done.length} of ${outcomes.length} ${source} episodes in ${out}: ${written.toLocaleString("en-US")} frames written, ${kept.toLocaleString("en-US")} kept from before` +
      (done.length < outcomes.length ? `; ${outcomes.length - done.length} failed (the others are complete; run the same command again once fixed)` : ""),
  );
  return `${lines.join("\n")}\n`;
}

/** `eqa data check openeqa`: each episode with its frame count, a broken one with its problems, then a total. */
export function formatFramesCheck(checks: readonly EpisodeCheck[], frames: string, maxPerEpisode = 20): string {
  const lines: string[] = [];
  for (const check of checks) {
    if (check.problems.length === 0) {
      lines.push(`${check.episodeHistory} (${check.frames} frames): complete`);
      continue;
    }
    lines.push(`${check.episodeHistory} (${check.frames} frames):`);
    for (const problem of check.problems.slice(0, maxPerEpisode)) lines.push(`  ${problem}`);
    if (check.problems.length > maxPerEpisode) lines.push(`  … and ${check.problems.length - maxPerEpisode} more`);
  }
  const broken = checks.filter((c) => c.problems.length > 0).length;
  const frameCount = checks.reduce((n, c) => n + c.frames, 0);
  lines.push(
    broken === 0
      ? `all ${checks.length} episodes complete in ${frames} (${frameCount.toLocaleString("en-US")} frames)`
      : `${broken} of ${checks.length} episodes missing or broken in ${frames}`,
  );
  return `${lines.join("\n")}\n`;
}

/** `--list`: the scans with ScanNet's download command for each, then the HM3D scenes. */
export function formatOpenEqaSources(histories: readonly string[], scans: readonly string[], root: string | undefined): string {
  const hm3d = [...new Set(histories.filter((h) => h.includes("hm3d")).map((h) => h.split("/").at(-1)!.split("-").at(-1)!))].sort();
  const lines = [`${scans.length} ScanNet scans (one .sens each; ScanNet's terms of use apply: download them with ScanNet's own script once granted access):`];
  for (const scan of scans) lines.push(`  ${scan}  ${scanNetDownloadCommand(scan, root ?? "ROOT")}`);
  lines.push(`${hm3d.length} HM3D scenes (in HM3D's val split: python -m habitat_sim.utils.datasets_download --username ID --password SECRET --uids hm3d_val_v0.2):`);
  for (const scene of hm3d) lines.push(`  ${scene}`);
  return `${lines.join("\n")}\n`;
}
