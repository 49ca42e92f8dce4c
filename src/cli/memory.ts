import { Command } from "commander";
import { MEMORY_RECORDS_FILE, MemoryCallError, buildEpisodeMemory, buildMemoryFolder, importMemory, parseConceptGraphsJson, writeMemory, type MemorySourceOptions } from "../agents/index.js";
import { UserError, formatShard, selectShard } from "../core/index.js";
import { loadQuestionSelection, readJsonFile } from "../data/index.js";
import { openEpisode, parseSamplingSpec, resolveEpisodePath } from "../episodes/index.js";
import { ledgerCost, readCallLedger } from "../models/index.js";
import { formatRunCost } from "../report/index.js";
import { addMemorySourceOptions, memorySourceOptions } from "./agent-options.js";
import { addShardOption, framesPath, nonNegativeInteger, outputDirectory, positiveInteger, shardFromFlags, type ShardFlags, unitInterval } from "./options.js";
import { type ModelCallFlags } from "./model-options.js";
import { defineRunCommand, wroteLine, type RunSession } from "./lifecycle.js";

interface MemoryBuildFlags extends ModelCallFlags, ShardFlags {
  frames: string;
  episode?: string;
  benchmark?: string;
  subset?: string;
  out: string;
  numFrames?: number;
  sampling?: string;
  captioner?: string;
  captionerBaseUrl?: string;
  detector?: boolean;
  masks?: boolean;
  vlmDetect?: boolean;
  minScore?: number;
  supportFrames?: number;
  ignoreLabels?: string[];
}

export function memoryCommand(): Command {
  const memory = new Command("memory").description("the object-centric 3-D memory of an episode (scene graph)");
  memory.addCommand(
    defineRunCommand<MemoryBuildFlags, MemoryBuildFlags>({
      name: "build",
      path: "memory build",
      description: "build an episode's scene graph from its RGB-D frames and write scene-graph.json, topdown.png and crops/<id>.png; with --benchmark, every episode's, into a memory folder that eqa answer --memory reads (resumable)",
      roles: [{ role: "captioner", help: "a vision-language model that describes each object's best crop (default: captions are detector labels)", baseUrlHelp: "the captioner's endpoint" }],
      out: "own",
      options: (command, place) => {
        command
          .requiredOption("--frames <dir>", "an episode folder or video, or a folder of OpenEQA frames/<episode_history> (then --episode or --benchmark)", framesPath)
          .option("--episode <id>", "the episode_history under --frames, e.g. hm3d-v0/000-hm3d-BFRyYbPCCPE")
          .option("--benchmark <file>", "build the memory of every episode the benchmark's questions ask about")
          .option("--subset <file>", "with --benchmark: a JSON list of question ids whose episodes to build")
          .requiredOption("--out <dir>", "the folder to write", outputDirectory)
          .option("--num-frames <k>", "frames looked at, spread uniformly (default 60)", positiveInteger)
          .option("--sampling <spec>", "frame sampling: uniform:K, every:N or seconds:T (overrides --num-frames)");
        place.role("captioner");
        command
          .option("--vlm-detect", "the captioner also lists each frame's objects with boxes (open-vocabulary detection)")
          .option("--min-score <p>", "least detector confidence of an object (default 0.3)", unitInterval)
          .option("--support-frames <n>", "an object detected only below --min-score, down to two thirds of it, is kept when detected in this many frames looked at (default 0: never)", nonNegativeInteger);
        addMemorySourceOptions(command);
        addShardOption(command, "episodes");
      },
      prepare: async ({ flags }) => flags,
      run: (_, session) => buildMemory(session),
    }),
  );
  memory
    .command("import")
    .description("add a scene graph built elsewhere (a ConceptGraphs-style JSON: objects with tags, captions and boxes) to a memory folder, as one episode's memory for eqa answer --memory")
    .argument("<file>", "the JSON file (see docs/memory.md)")
    .requiredOption("--episode <id>", "the episode_history it is the memory of, e.g. hm3d-v0/000-hm3d-BFRyYbPCCPE")
    .requiredOption("--out <dir>", "the memory folder", outputDirectory)
    .action(async (file: string, flags: { episode: string; out: string }) => {
      const graph = parseConceptGraphsJson(await readJsonFile(file), flags.episode, file);
      const written = await importMemory(flags.out, graph, file);
      console.log(`episode ${flags.episode}: ${graph.instances.length} objects, ${graph.relations.length} relations${graph.hasPositions ? "" : " (no positions)"}`);
      console.log(`wrote ${written}`);
    });
  return memory;
}

/** `eqa memory build`: one episode's scene graph, or with --benchmark every episode's into a memory folder. */
async function buildMemory(session: RunSession<MemoryBuildFlags>): Promise<number> {
  const { flags } = session;
  if (flags.vlmDetect && !flags.captioner) throw new UserError("--vlm-detect asks the captioner for objects, and no --captioner is set", { field: "--vlm-detect" }, "name a vision-language model with --captioner");
  if (flags.benchmark && flags.episode) throw new UserError("--benchmark builds every episode of the benchmark, --episode one", { field: "--episode" }, "pass one of them");
  const shard = flags.benchmark ? shardFromFlags(flags) : undefined;
  const selection = flags.benchmark ? await loadQuestionSelection({ benchmark: flags.benchmark, ...(flags.subset ? { subset: flags.subset } : {}), defaultBenchmark: flags.benchmark }) : undefined;
  const path = flags.episode ? resolveEpisodePath(flags.frames, flags.episode, { field: "--episode" }) : flags.frames;
  if (!path) throw new UserError(`no episode ${flags.episode} under ${flags.frames}`, { file: flags.frames }, "check --frames and --episode");
  const captionerSpec = session.optionalRole("captioner");
  const opened = captionerSpec ? await session.runtime() : undefined;
  // the captioner's calls go to the memory folder's ledger of model calls
  opened?.runtime.usage.attach(flags.out);
  const sampling = flags.sampling ? parseSamplingSpec(flags.sampling) : flags.numFrames !== undefined ? { kind: "uniform" as const, count: flags.numFrames } : undefined;
  const options: Omit<MemorySourceOptions, "memoryDir"> = {
    ...(sampling ? { sampling } : {}),
    ...(captionerSpec && opened ? { captioner: opened.runtime.model(captionerSpec, { role: "captioner" }) } : {}),
    ...(flags.vlmDetect ? { vlmDetect: true } : {}),
    ...memorySourceOptions(flags),
    ...(flags.minScore !== undefined ? { minScore: flags.minScore } : {}),
    ...(flags.supportFrames !== undefined ? { supportFrames: flags.supportFrames } : {}),
  };
  const progress = session.progress(selection ? "episodes" : "frames");
  if (selection) {
    const episodes = selectShard([...new Set(selection.questions.map((q) => q.episodeHistory))], (id) => id, shard);
    const started = Date.now();
    const result = await buildMemoryFolder({ episodes, framesRoot: flags.frames, outDir: flags.out, options, onProgress: (p) => progress.update(p.done, p.total, p.failed > 0 ? `(${p.failed} failed)` : "") });
    progress.stop();
    console.log(`${episodes.length} episodes${shard ? ` (shard ${formatShard(shard)})` : ""}: ${result.built} built, ${result.reused} kept from an earlier build, ${result.failed.length} failed in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    for (const failure of result.failed) console.log(`failed: ${failure.episode}: ${failure.error}`);
    if (opened) console.log(`\n${formatRunCost(ledgerCost(readCallLedger(result.dir)))}\n`);
    console.log(wroteLine(result.dir, [MEMORY_RECORDS_FILE, `${result.settingsKey}/<episode>/scene-graph.json`]));
    return result.failed.length > 0 ? 1 : 0;
  }
  const episode = await openEpisode(path, flags.episode);
  const started = Date.now();
  let built: Awaited<ReturnType<typeof buildEpisodeMemory>>;
  try {
    built = await buildEpisodeMemory(episode, options, { onFrame: (done, total) => progress.update(done, total, "") });
  } catch (error) {
    // a model call that failed for good fails the build, named; nothing is written, so running again asks every call again
    if (!(error instanceof MemoryCallError)) throw error;
    progress.stop();
    process.stderr.write(`eqa: the memory of ${path} was not built: ${error.message} (${error.endpoint}, after ${error.retries} retries)\n`);
    return 1;
  }
  const { graph, mapPoints } = built;
  progress.stop();
  const files = await writeMemory(flags.out, graph, mapPoints, episode);
  const seconds = (Date.now() - started) / 1000;
  console.log(`episode ${graph.episode}: ${graph.instances.length} instances, ${graph.relations.length} relations from ${graph.frames.length} frames in ${seconds.toFixed(1)} s (${(seconds / Math.max(1, graph.frames.length)).toFixed(2)} s a frame)`);
  for (const note of graph.notes) console.log(`note: ${note}`);
  console.log(`wrote ${files.join(", ")}`);
  return 0;
}
