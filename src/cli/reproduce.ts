import { mkdirSync } from "node:fs";
import { Command, Option } from "commander";
import { EQA_RM_K, EQA_RM_TABLES, EXPRESS_TABLES, MIXED_TABLES, MIXED_TABLE_ROWS, OPENEQA_EM_TABLES, OPENEQA_FAMILIES, REPRODUCED_TABLE_FORMAT, TABLE_FILES, formatTableMarkdown, writeTableFormats, publishedTableIds, reproducibleTable, tableHeading, isOwnBenchmark, reproducibleTableIds, OPENEQA_A_EQA_TABLES, type PublishedTable, type ReproducedTable, TAG_TABLES } from "../reproduce/index.js";
import { TAG_BASELINE_NAMES } from "../generate/index.js";
import { UserError } from "../core/index.js";
import { REPRODUCE_ROWS, type ReproduceFlags, type TableRunner } from "./reproduce-flags.js";
import { positiveInteger, choiceList, framesPath, oneOf, powerOfTwo } from "./options.js";
import { addImageOptions } from "./model-options.js";
import { openEqaRunner, aEqaRunner } from "./reproduce-openeqa.js";
import { tagRunner, rewardRunner } from "./reproduce-rows.js";
import { expressRunner } from "./reproduce-explore.js";
import { mixedRunner } from "./reproduce-mixed.js";
import { defineRunCommand, wroteLine } from "./lifecycle.js";

/** The runners of `eqa reproduce`, one per paper's tables. */
const RUNNERS: readonly TableRunner<unknown>[] = [openEqaRunner, aEqaRunner, rewardRunner, tagRunner, expressRunner, mixedRunner];

function runnerOf(table: PublishedTable): TableRunner<unknown> {
  const runner = RUNNERS.find((r) => r.tables.includes(table.id));
  if (!runner) throw new Error(`eqa reproduce has no runner for ${table.id}`);
  return runner;
}

/**
 * `eqa reproduce`: the table's runner, chosen by its paper (reproduce-openeqa.ts, reproduce-rows.ts,
 * reproduce-explore.ts, reproduce-mixed.ts), with typed options; the express tables' row and
 * OpenEQA's A-EQA rows are explore runs, made by the library's `exploreAndJudge` as `eqa explore`
 * makes them, and the Mixed EQA table's rows are mixed runs, made by `exploreMixedSet`.
 */
export function reproduceCommand(): Command {
  return defineRunCommand<ReproduceFlags, { runner: TableRunner<unknown>; prepared: unknown }>({
    name: "reproduce",
    description: `put your model in a seed paper's table beside the published rows (resumable): runs ${[...OPENEQA_EM_TABLES, ...OPENEQA_A_EQA_TABLES, ...EQA_RM_TABLES, ...EXPRESS_TABLES, ...TAG_TABLES].join(", ")}; prints any of the ${publishedTableIds().length} with --published; and eqakit's own benchmark ${MIXED_TABLES.join(", ")} (Mixed EQA, no published row)`,
    argument: ["[table]", `the table: ${reproducibleTableIds().join(", ")} (--list shows them)`, reproducibleTable],
    roles: [
      { role: "model", env: "EQA_MODEL", help: "the model every row runs with, e.g. openai/gpt-4o; mixed-eqa-table: the recall-explore-model row's VLM (the row is skipped without it)", baseUrlHelp: "the model's endpoint" },
      { role: "captioner", help: "the socratic row's captioner and the scene-graph rows' (default: --model for socratic; the episodes' instance labels for the scene graphs); tag-eqa-table-2: the baselines' captioning VLM (the paper's was CogVLM 2; default --model)", baseUrlHelp: "the captioner's endpoint" },
      { role: "judge", env: "EQA_JUDGE", help: "the LLM-Match judge (the paper's was GPT-4), e.g. openai/gpt-4o; tag-eqa-table-2: the model that reads the answers' structure for eqa score-tag; mixed-eqa-table: the recall-explore-model row's judge", baseUrlHelp: "the judge's endpoint" },
    ],
    dryRun: true,
    batch: true,
    // only some calls (the judge's, the reward model's samples) would go as a batch: each runner's notes say what --batch saves
    planAtBatchPrice: false,
    planRows: true,
    options: (command, place) => {
      for (const role of ["model", "captioner", "judge"]) place.role(role);
      addReproduceOptions(command);
      place.out();
      addImageOptions(command, "keyframes (eqa-rm tables)");
    },
    // eqakit's own benchmark has no published rows: its runner refuses --published itself
    handOff: async ({ flags, args: [table] }) => {
      if (flags.list) return printTableList();
      if (table === undefined) throw new UserError("name the table to reproduce", { field: "<table>" }, `one of ${reproducibleTableIds().join(", ")}; eqa reproduce --list shows what each is`);
      return flags.published && !(MIXED_TABLES as readonly string[]).includes((table as PublishedTable).id) ? printPublished(table as PublishedTable, flags.out) : undefined;
    },
    prepare: async (session) => {
      const table = session.args[0] as PublishedTable;
      const runner = runnerOf(table);
      return { runner, prepared: await runner.prepare(table, session) };
    },
    plan: ({ runner, prepared }, plan, session) => runner.plan(prepared, plan, session),
    run: ({ runner, prepared }, session) => runner.run(prepared, session),
  });
}

/** The tables' own flags: their inputs, rows and settings. */
function addReproduceOptions(command: Command): void {
  command
    .option("--benchmark <file>", "the OpenEQA benchmark file (default: the one `eqa data fetch openeqa` wrote)")
    .option("--subset <file>", "a JSON list of question ids to run (the row is then not comparable with the published ones)")
    .option("--frames <dir>", "OpenEQA's episode histories (frames/<episode_history> folders or videos); every row but blind needs them", framesPath)
    .option("--rows <list>", `the rows to run, comma-separated (default all: openeqa tables ${OPENEQA_FAMILIES.join(",")}; mixed-eqa-table ${MIXED_TABLE_ROWS.join(",")}, the last with --model)`, choiceList("row", REPRODUCE_ROWS))
    .addOption(new Option("--mode <mode>", "LLM-Match mode: compat (the reference's scoring, as the paper) or robust").argParser(oneOf(["robust", "compat"] as const)).default("compat"))
    .option("--instances <file>", "eqa-rm tables: EQARewardBench-style instances with ground-truth scores (JSONL, as eqa rm bench reads them)")
    .option("--max-k <k>", `eqa-rm tables: test-time scaling's K, a power of two (the paper's ${EQA_RM_K})`, powerOfTwo, EQA_RM_K)
    .option("--episodes <file>", "express tables: the episodes Fine-EQA explores, as eqa explore reads them (table 1: A-EQA's from eqa data convert a-eqa; table 2: HM-EQA's questions.csv; table 3: express-bench.json; scenes home-<seed> for the built-in homes); openeqa-table-5, and openeqa-table-2/3's A-EQA columns: the A-EQA episodes each family's row explores (eqa data convert a-eqa); mixed-eqa-table: the episodes.json of a set from eqa generate mixed")
    .addOption(new Option("--env <env>", "express tables and A-EQA rows: builtin (the built-in simulator's homes; the row is then not comparable) or habitat (HM3D through the Habitat bridge, as the paper)").argParser(oneOf(["builtin", "habitat"] as const)).default("builtin"))
    .option("--scenes <dir>", "express tables and A-EQA rows, --env habitat: your HM3D folder (holding train/, val/ …)")
    .option("--bridge-python <path>", "express tables and A-EQA rows, --env habitat: the Python that has habitat-sim", "python3")
    .option("--prompts <set>", "express tables: Fine-EQA's and the EAC judge's prompts: eqakit (its own; the row is then not comparable) or original (EXPRESS-Bench's, from eqa data fetch express-bench) or the folder that command wrote them to", "eqakit")
    .option("--max-steps <n>", "express tables: Fine-EQA's step budget instead of 3·√area (the row is then not comparable); A-EQA rows: the frontier explorer's most actions (500); mixed-eqa-table: each agent's most actions (500)", positiveInteger)
    .option("--width <pixels>", "express tables: observation width (the reference's 512 unless given); A-EQA rows and mixed-eqa-table: eqa explore's 640 unless given", positiveInteger)
    .option("--height <pixels>", "express tables: observation height (the reference's 512 unless given); A-EQA rows and mixed-eqa-table: eqa explore's 480 unless given", positiveInteger)
    .option("--questions <file>", "tag-eqa-table-2: a TAG-EQA set with observations (the questions.json of eqa generate tag --source sim:DIR, its recordings where it found them)")
    .option("--baselines <list>", `tag-eqa-table-2: the baselines to run, comma-separated (default: all eqakit has of ${TAG_BASELINE_NAMES.join(",")})`, choiceList("baseline", TAG_BASELINE_NAMES))
    .option("--published", "print (and with --out write) the published table alone; call no model")
    .option("--list", "list the tables eqa reproduce takes: each one's name, heading and published rows");
}

/** `--list`: every table `eqa reproduce` takes, with its heading and how many published rows it holds. */
async function printTableList(): Promise<number> {
  const tables = reproducibleTableIds().map(reproducibleTable);
  const width = Math.max(...tables.map((t) => t.id.length));
  for (const t of tables) console.log(`${t.id.padEnd(width)}  ${tableHeading(t)} (${isOwnBenchmark(t) ? "eqakit's own benchmark, no published row" : `${t.rows.length} published rows`})`);
  return 0;
}

/** `--published`: the paper's table alone, printed, and written to `out` in the three formats when given. */
async function printPublished(table: PublishedTable, out: string | undefined): Promise<number> {
  const empty: ReproducedTable = { format: REPRODUCED_TABLE_FORMAT, table: table.id, rows: [] };
  if (out === undefined) {
    console.log(formatTableMarkdown(table, empty));
    return 0;
  }
  mkdirSync(out, { recursive: true });
  console.log(await writeTableFormats(out, table, empty));
  console.log(wroteLine(out, [TABLE_FILES.markdown, TABLE_FILES.csv, TABLE_FILES.latex]));
  return 0;
}
