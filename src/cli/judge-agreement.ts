import { Command } from "commander";
import { UserError, writeFileAtomically } from "../core/index.js";
import { agreementMatrix, loadScoreSet, meanOverAnnotators, perAnnotatorAgreement, DEFAULT_AGREEMENT_BOOTSTRAP, type ScoreSet } from "../eval/index.js";
import { formatAgreementPairs, formatAnnotatorTable, formatRhoMatrix } from "../report/index.js";
import { nonNegativeInteger, positiveInteger } from "./options.js";

interface AgreementFlags {
  label?: string[];
  resamples: number;
  seed: number;
  json?: string;
}

export function judgeAgreementCommand(): Command {
  return new Command("judge-agreement")
    .description("agreement between judges (LLM vs human, LLM vs LLM, prompt variants): Spearman's ρ with a bootstrap interval, Pearson's r, per-annotator tables")
    .argument("<scores...>", "two or more score sets: `eqa score`/`eqa run` directories, metrics.json files, or JSON/CSV score records (question_id, score, annotator)")
    .option("--label <name...>", "a label per score set, in order (default: the directory's or file's name)")
    .option("--resamples <n>", "bootstrap resamples", positiveInteger, DEFAULT_AGREEMENT_BOOTSTRAP.resamples)
    .option("--seed <n>", "seed of the bootstrap", nonNegativeInteger, DEFAULT_AGREEMENT_BOOTSTRAP.seed)
    .option("--json <file>", "also write every figure as JSON")
    .action(async (paths: string[], flags: AgreementFlags) => {
      if (flags.label && flags.label.length !== paths.length) throw new UserError(`${flags.label.length} label(s) for ${paths.length} score set(s)`, { field: "--label" }, "give one label per score set, in order");
      const sets: ScoreSet[] = [];
      for (const [i, path] of paths.entries()) sets.push(await loadScoreSet(path, flags.label?.[i]));
      const annotated = sets.filter((s) => s.annotators && s.annotators.size > 1);
      if (sets.length < 2 && annotated.length === 0) throw new UserError("give at least two score sets, or one with several annotators", {}, "e.g. eqa judge-agreement runs/score-gpt4o runs/score-llama human.csv");
      const options = { resamples: flags.resamples, seed: flags.seed };
      const matrix = agreementMatrix(sets.map((s) => ({ label: s.label, scores: s.scores })), options);
      const lines: string[] = [];
      for (const s of sets) lines.push(`${s.label}: ${s.scores.size} item(s)${s.annotators ? `, ${s.annotators.size} annotator(s), scores averaged per item` : ""}`);
      if (matrix.pairs.length > 0) lines.push("", formatRhoMatrix(matrix), "", formatAgreementPairs(matrix));
      const annotatorTables = annotated.map((s) => {
        const judges = sets.filter((o) => o !== s).map((o) => ({ label: o.label, scores: o.scores }));
        return { label: s.label, rows: perAnnotatorAgreement(s.annotators!, judges, options), mean: meanOverAnnotators(s.annotators!).size };
      });
      for (const table of annotatorTables) lines.push("", `per annotator (${table.label}):`, formatAnnotatorTable(table.rows));
      console.log(lines.join("\n"));
      if (flags.json) {
        await writeFileAtomically(flags.json, `${JSON.stringify({ sets: sets.map((s) => ({ label: s.label, path: s.path, items: s.scores.size })), matrix, annotators: annotatorTables.map((t) => ({ label: t.label, rows: t.rows })) }, null, 2)}\n`);
        console.log(`\nwrote ${flags.json}`);
      }
    });
}
