import { Command } from "commander";
import { describeFfmpeg, extractVideoFrames } from "../episodes/index.js";
import { outputDirectory, positiveInteger } from "./options.js";

interface ExtractFlags {
  out: string;
  every?: number;
  maxFrames?: number;
}

export function framesCommand(): Command {
  const frames = new Command("frames").description("work with episode frames");
  frames
    .command("extract")
    .description("write a video's frames as an OpenEQA-style folder (00000-rgb.png, 00001-rgb.png, …), decoded by ffmpeg (the system's when on PATH, else the one eqakit's npm dependencies bring)")
    .argument("<video>", "a video file ffmpeg reads (.mp4, .mkv, .mov, .avi, .webm, …)")
    .requiredOption("--out <dir>", "the folder to write (created; must not already hold frames)", outputDirectory)
    .option("--every <n>", "keep every n-th frame (default 1: all)", positiveInteger)
    .option("--max-frames <n>", "write at most n frames", positiveInteger)
    .action(async (video: string, flags: ExtractFlags) => {
      const result = await extractVideoFrames(video, flags.out, {
        ...(flags.every !== undefined ? { every: flags.every } : {}),
        ...(flags.maxFrames !== undefined ? { maxFrames: flags.maxFrames } : {}),
      });
      console.log(`wrote ${result.frames} frames to ${result.outDir}`);
      console.log(`decoded with ${await describeFfmpeg()}`);
    });
  return frames;
}
