import { join } from "node:path";
import { UserError } from "../core/index.js";
import { type ModelSpec } from "../models/index.js";
import { A_EQA_BLIND_STEPS, aEqaRow, aEqaRowDir, aEqaRowSetup, type AEqaMeasures, type AEqaSetup, type UserRow, type OpenEqaFamily, type PublishedTable } from "../reproduce/index.js";
import type { ReproduceFlags } from "./reproduce-flags.js";
import type { RunSession } from "./run-session.js";
import { loadExploredEpisodes, checkHabitatSetup, imageOf, exploreRow } from "./reproduce-explore.js";

/** What the A-EQA rows' `--episodes` is, and where to get it. */
export const A_EQA_EPISODES_HINT = 'OpenEQA\'s A-EQA episodes: eqa data fetch openeqa, then eqa data convert a-eqa --states DIR --gt-path-length FILE --out a-eqa.json and --env habitat --scenes DIR (docs/active-eqa.md); on the built-in homes (--env builtin, not comparable), a JSON list of {"question_id", "question", "answer", "category", "scene": "home-3", "gt_path_length"?, "gt_path_steps"?}';

/**
 * The A-EQA rows' setup from `--episodes`, `--env` (and `--scenes`, `--bridge-python` for HM3D):
 * what is missing (episodes with answers, the HM3D scenes, habitat-sim) is refused before any call.
 */
export async function loadAEqaSetup(table: PublishedTable, flags: ReproduceFlags, model: ModelSpec, captioner: ModelSpec | undefined, judgeSpec: ModelSpec): Promise<AEqaSetup> {
  if (!flags.episodes) throw new UserError(`${table.id} needs the A-EQA episodes the rows explore`, { field: "--episodes" }, A_EQA_EPISODES_HINT);
  const episodes = await loadExploredEpisodes(flags.episodes, flags.env);
  if (!episodes.some((e) => e.answer !== undefined)) throw new UserError(`${table.id} scores answers against the episodes' answers: none of these has one`, { file: flags.episodes, field: "answer" }, A_EQA_EPISODES_HINT);
  await checkHabitatSetup(`${table.id}'s A-EQA rows`, flags, episodes);
  return { episodesFile: flags.episodes, episodes, env: flags.env, model, ...(captioner ? { captioner } : {}), judgeSpec, mode: flags.mode };
}

/** The explore settings that decide the A-EQA rows' numbers (the manifest holds them). */
export function aEqaExploreSettings(flags: ReproduceFlags): Record<string, unknown> {
  return { maxSteps: flags.maxSteps ?? null, width: flags.width ?? null, height: flags.height ?? null, imageSize: flags.imageSize, imageFormat: flags.imageFormat };
}

export function aEqaPlanOptions(flags: ReproduceFlags, outDir: string) {
  return {
    outDir,
    ...(flags.maxSteps !== undefined ? { maxSteps: flags.maxSteps } : {}),
    // eqa explore observes 640×480 unless given
    observation: { width: flags.width ?? 640, height: flags.height ?? 480 },
    image: { maxSide: flags.imageSize, format: flags.imageFormat },
  };
}

/**
 * Each family's A-EQA row: an explore run as `eqa explore --agent frontier --em-agent <family>
 * --judge J --no-eac` makes it, in rows/a-eqa-<family> (resumable as every explore run), at the
 * paper's A-EQA settings (the VLM's K = 75; the blind row one step), then the row read back from
 * its run; `code` is 1 when a row's run had failures.
 */
export async function runAEqaRows(session: RunSession<ReproduceFlags>, setup: AEqaSetup, families: readonly OpenEqaFamily[], tableId: string, outDir: string, batch = false): Promise<{ rows: { family: OpenEqaFamily; row: UserRow; measures: AEqaMeasures }[]; code: number }> {
  const { flags } = session;
  const rows: { family: OpenEqaFamily; row: UserRow; measures: AEqaMeasures }[] = [];
  let code = 0;
  for (const family of families) {
    const rowDir = join(outDir, aEqaRowDir(family));
    const agentSetup = aEqaRowSetup(family, setup.model, setup.captioner);
    const maxSteps = family === "blind" ? A_EQA_BLIND_STEPS : flags.maxSteps;
    console.log(`${tableId}: A-EQA row ${family} (frontier exploration, then the ${family} agent) in ${rowDir}`);
    const run = await exploreRow(
      session,
      {
        episodes: setup.episodes,
        episodesFile: setup.episodesFile,
        explorer: "frontier",
        model: setup.model,
        answerer: { agent: family, model: setup.model, image: imageOf(flags), forceGuess: true, ...(agentSetup.captioner ? { captioner: agentSetup.captioner } : {}), ...(agentSetup.numFrames !== undefined ? { numFrames: agentSetup.numFrames } : {}) },
        judge: { spec: setup.judgeSpec, mode: setup.mode, eac: false },
        ...(maxSteps !== undefined ? { maxSteps } : {}),
        // eqa explore observes 640×480 unless given
        observation: { width: flags.width ?? 640, height: flags.height ?? 480 },
        outDir: rowDir,
        promptSet: "eqakit",
      },
      batch,
    );
    if (run.exitCode !== 0) code = run.exitCode;
    rows.push({ family, ...aEqaRow(tableId, family, rowDir, setup) });
  }
  return { rows, code };
}
