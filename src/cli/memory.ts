import { Command } from "commander";
import { buildMemory, writeMemory } from "../agents/index.js";
import { UserError } from "../core/index.js";
import { openEpisode, parseSamplingSpec, resolveEpisodePath } from "../episodes/index.js";
import { loadObjectDetector, loadSentenceEncoder } from "../models/index.js";
import { addModelCallOptions, commaList, framesPath, type ModelCallFlags, openModelRuntime, outputDirectory, positiveInteger, unitInterval, resolveRoleModel } from "./options.js";
import { createProgress } from "./progress.js";

interface MemoryBuildFlags extends ModelCallFlags {
  frames: string;
  episode?: string;
  out: string;
  numFrames?: number;
  sampling?: string;
  captioner?: string;
  captionerBaseUrl?: string;
  detector: boolean;
  vlmDetect?: boolean;
  minScore?: number;
  ignoreLabels?: string[];
}

export function memoryCommand(): Command {
  const memory = new Command("memory").description("the object-centric 3-D memory of an episode (scene graph)");
  const build = memory
    .command("build")
    .description("build an episode's scene graph from its RGB-D frames and write scene-graph.json, topdown.png and crops/<id>.png")
    .requiredOption("--frames <dir>", "an episode folder or video, or a folder of OpenEQA frames/<episode_history> (then --episode)", framesPath)
    .option("--episode <id>", "the episode_history under --frames, e.g. hm3d-v0/000-hm3d-BFRyYbPCCPE")
    .requiredOption("--out <dir>", "the folder to write", outputDirectory)
    .option("--num-frames <k>", "frames looked at, spread uniformly (default 60)", positiveInteger)
    .option("--sampling <spec>", "frame sampling: uniform:K, every:N or seconds:T (overrides --num-frames)")
    .option("--captioner <provider/model>", "a vision-language model that describes each object's best crop (default: captions are detector labels)")
    .option("--captioner-base-url <url>", "the captioner's endpoint")
    .option("--no-detector", "use the episode's instance masks only, not the embedded detector")
    .option("--vlm-detect", "the captioner also lists each frame's objects with boxes (open-vocabulary detection)")
    .option("--min-score <p>", "least detector confidence kept (default 0.3)", unitInterval)
    .option("--ignore-labels <list>", "instance-mask labels that are not objects, left out (e.g. wall,floor,ceiling for simulator recordings)", commaList);
  addModelCallOptions(build);
  build.action(async (flags: MemoryBuildFlags) => {
    const path = flags.episode ? resolveEpisodePath(flags.frames, flags.episode, { field: "--episode" }) : flags.frames;
    if (!path) throw new UserError(`no episode ${flags.episode} under ${flags.frames}`, { file: flags.frames }, "check --frames and --episode");
    if (flags.vlmDetect && !flags.captioner) throw new UserError("--vlm-detect asks the captioner for objects, and no --captioner is set", { field: "--vlm-detect" }, "name a vision-language model with --captioner");
    const episode = await openEpisode(path, flags.episode);
    const captionerSpec = flags.captioner ? resolveRoleModel(flags, "captioner") : undefined;
    const opened = captionerSpec ? await openModelRuntime(flags) : undefined;
    const progress = createProgress("frames");
    try {
      const [detector, encoder] = await Promise.all([flags.detector ? loadObjectDetector() : null, loadSentenceEncoder()]);
      const sampling = flags.sampling ? parseSamplingSpec(flags.sampling) : flags.numFrames !== undefined ? { kind: "uniform" as const, count: flags.numFrames } : undefined;
      const started = Date.now();
      const { graph, mapPoints } = await buildMemory(episode, {
        detector,
        encoder,
        ...(sampling ? { sampling } : {}),
        ...(captionerSpec && opened ? { captioner: opened.runtime.model(captionerSpec) } : {}),
        ...(captionerSpec && opened && flags.vlmDetect ? { vlmDetector: opened.runtime.model(captionerSpec) } : {}),
        ...(flags.minScore !== undefined ? { minScore: flags.minScore } : {}),
        ...(flags.ignoreLabels ? { ignoredMaskLabels: flags.ignoreLabels } : {}),
        onFrame: (done, total) => progress.update(done, total, ""),
      });
      progress.stop();
      const files = await writeMemory(flags.out, graph, mapPoints, episode);
      const seconds = (Date.now() - started) / 1000;
      console.log(`episode ${graph.episode}: ${graph.instances.length} instances, ${graph.relations.length} relations from ${graph.frames.length} frames in ${seconds.toFixed(1)} s (${(seconds / Math.max(1, graph.frames.length)).toFixed(2)} s a frame)`);
      for (const note of graph.notes) console.log(`note: ${note}`);
      console.log(`wrote ${files.join(", ")}`);
    } finally {
      progress.stop();
      opened?.close();
    }
  });
  return memory;
}
