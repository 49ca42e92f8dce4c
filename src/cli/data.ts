import { Command } from "commander";
import { KNOWN_DATASETS, fetchDataset } from "../data/index.js";
import { dataCheckCommand } from "./data-check.js";
import { dataConvertCommand } from "./data-convert.js";
import { dataPrepareCommand } from "./data-prepare.js";
import { outputDirectory, positiveSeconds } from "./options.js";

interface FetchFlags {
  out?: string;
  url?: string;
  subsetUrl?: string;
  evaluationUrl?: string;
  baseUrl?: string;
  timeout: number;
}

export function dataCommand(): Command {
  const data = new Command("data").description("download and check benchmark files");
  data
    .command("fetch")
    .description(`download a dataset and check its known sums (${Object.keys(KNOWN_DATASETS).join(", ")})`)
    .argument("<dataset>", Object.values(KNOWN_DATASETS).map((d) => `${d.name}: ${d.description}`).join("; "))
    .option("--out <dir>", "destination folder (default: $XDG_DATA_HOME/eqakit/DATASET)", outputDirectory)
    .option("--url <url>", "where to download the benchmark file from: an http(s) URL (a mirror), or a local copy as a path or file:// URL (checked by the same sums)")
    .option("--subset-url <url>", "where to download the subset file from (an http(s) URL, a path or a file:// URL)")
    .option("--evaluation-url <url>", "la-eqa: where to read eqa_evaluation.py from (an http(s) URL, a path or a file:// URL)")
    .option("--base-url <url>", "a mirror with the dataset's layout: replaces the start of every file's URL (e.g. https://raw.githubusercontent.com/HCPLab-SYSU/EXPRESS-Bench/<commit>)")
    .option("--timeout <seconds>", "timeout of each download", positiveSeconds, 120)
    .action(async (name: string, flags: FetchFlags) => {
      const urls: Record<string, string> = {};
      if (flags.url) urls.benchmark = flags.url;
      if (flags.subsetUrl) urls.subset = flags.subsetUrl;
      if (flags.evaluationUrl) urls.evaluation = flags.evaluationUrl;
      const files = await fetchDataset(name, { ...(flags.out ? { outDir: flags.out } : {}), ...(flags.baseUrl ? { baseUrl: flags.baseUrl } : {}), urls, timeoutMs: flags.timeout * 1000 });
      for (const file of files) console.log(`${file.path}  (${file.bytes.toLocaleString("en-US")} bytes, ${file.checked.join(", ")})`);
    });
  data.addCommand(dataConvertCommand());
  data.addCommand(dataPrepareCommand());
  data.addCommand(dataCheckCommand());
  return data;
}
