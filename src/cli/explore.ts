import { Command, Option } from "commander";
import { AGENT_NAMES, EXPLORER_NAMES, MIXED_AGENT_NAMES, isMixedAgentName, type MixedAgentName, ExternalActiveAgent, describeExternalAgent, type ExternalAgentSpec, FINE_EQA_REFERENCE_OBSERVATION, builtinSceneBounds, loadActiveEpisodes, sceneOpener, type AgentName, type ExplorerName, type SceneOpenerOptions, type EnvironmentKind, EXPLORERS, answeringExplorerNames, createExplorer, explorerChoices } from "../agents/index.js";
import { UserError } from "../core/index.js";
import { exploreAndJudge, planExploreWorkflow, readExpressOriginalPrompts, type LlmMatchMode } from "../eval/index.js";
import { JUDGE_ROLE, checkBatchSupport, checkPriceFile, type ModelRuntime, type ModelSpec } from "../models/index.js";
import { builtinSceneProblem, type CommandLine } from "../sim/index.js";
import { formatCallPlan, formatExploreRun } from "../report/index.js";
import { defaultRunPath } from "../store/index.js";
import { addModelCallOptions, commandLine, type ModelCallFlags, modelCallSettings, oneOf, openModelRuntime, outputDirectory, positiveInteger, positiveSeconds, resolveRoleModel, shardFromFlags, addShardOption, type ShardFlags } from "./options.js";
import { builtinOrExternalAgent } from "./agent-options.js";
import { addDryRunOption, openCallPlan, type DryRunFlags } from "./dry-run.js";
import { createStageProgress, failureDetail } from "./progress.js";
import { addBatchOptions, runBatch, type BatchFlags } from "./batch.js";
import { exploreMixed, isMixedSetFile } from "./explore-mixed.js";

/** Every agent `--agent` names: the explorers, and the built-in agents of Mixed EQA sets (which run only those). */
const EXPLORE_AGENT_NAMES = [...EXPLORER_NAMES, ...MIXED_AGENT_NAMES] as const;

type EnvKind = EnvironmentKind;

interface ExploreFlags extends ModelCallFlags, DryRunFlags, BatchFlags, ShardFlags {
  episodes: string;
  env: EnvKind;
  agent: ExplorerName | MixedAgentName | ExternalAgentSpec;
  agentTimeout?: number;
  episodeTime?: number;
  model?: string;
  modelBaseUrl?: string;
  emAgent?: AgentName;
  captioner?: string;
  captionerBaseUrl?: string;
  numFrames?: number;
  forceGuess: boolean;
  maxSteps?: number;
  imageSize: number;
  imageFormat: "png" | "jpeg";
  width: number;
  height: number;
  bridgePython: string;
  scenes?: string;
  envCommand?: CommandLine;
  envTimeout: number;
  out?: string;
  judge?: string;
  judgeBaseUrl?: string;
  mode: LlmMatchMode;
  eac: boolean;
  prompts: string;
}

function openerOptions(flags: ExploreFlags): SceneOpenerOptions {
  return { env: flags.env, width: flags.width, height: flags.height, timeoutMs: flags.envTimeout * 1000, scenes: flags.scenes, bridgePython: flags.bridgePython, envCommand: flags.envCommand };
}

export function exploreCommand(): Command {
  const command = new Command("explore")
    .description("active EQA: explore each episode's scene, answer, and record trajectories (resumable)")
    .requiredOption("--episodes <file>", "active episodes (JSON, see docs/active-eqa.md), an EXPRESS-Bench file, or HM-EQA's questions.csv (with scene_init_poses.csv beside it)")
    .addOption(new Option("--env <env>", "builtin (scenes home-<seed>), habitat (bridges/habitat) or stdio (--env-command)").argParser(oneOf(["builtin", "habitat", "stdio"] as const)).default("builtin"))
    .addOption(new Option("--agent <explorer>", `${explorerChoices()}, or your own active agent: exec:"python3 my_agent.py" (a process speaking docs/agent-protocol.md) or ./my-agent.mjs (a module); a Mixed EQA set (docs/mixed-eqa.md): ${MIXED_AGENT_NAMES.join(", ")}`).argParser(builtinOrExternalAgent(EXPLORE_AGENT_NAMES)).makeOptionMandatory())
    .option("--agent-timeout <seconds>", "your own agent: seconds to wait for each of its replies (default 120)", positiveSeconds)
    .option("--episode-time <seconds>", "your own agent: each episode's time budget (none by default; when spent, the agent must answer or stop)", positiveSeconds)
    .addOption(new Option("--model <provider/model>", "fine-eqa: the VLM; frontier: the --em-agent's model").env("EQA_MODEL"))
    .option("--model-base-url <url>", "the model's endpoint")
    .addOption(new Option("--em-agent <agent>", "frontier: the EM-EQA agent answering from the frames (OpenEQA's A-EQA baseline); none: exploration only").argParser(oneOf(AGENT_NAMES)))
    .option("--captioner <provider/model>", "frontier: the --em-agent's captioner (socratic: describes the frames, default --model; svm, conceptgraph: captions the objects, default the instance labels)")
    .option("--captioner-base-url <url>", "the captioner's endpoint")
    .option("--num-frames <k>", "frontier: frames the --em-agent samples from the recording (its default when absent)", positiveInteger)
    .option("--no-force-guess", "frontier: keep the --em-agent's answers that abstain (OpenEQA replaces them with the blind LLM's guess)")
    .option("--max-steps <n>", "frontier: most actions (default 500); fine-eqa: a fixed step budget instead of 3·√area", positiveInteger)
    .option("--image-size <pixels>", "longest side of the images sent", positiveInteger, 512)
    .addOption(new Option("--image-format <format>", "png or jpeg").argParser(oneOf(["png", "jpeg"] as const)).default("png"))
    .option("--width <pixels>", "observation width (fine-eqa:reference: 512 unless given)", positiveInteger, 640)
    .option("--height <pixels>", "observation height (fine-eqa:reference: 512 unless given)", positiveInteger, 480)
    .option("--bridge-python <path>", "habitat: the Python that has habitat-sim", "python3")
    .option("--scenes <dir>", "habitat: your HM3D folder (holding train/, val/ …)")
    .option("--env-command <command>", "stdio: the environment's command line, split into words as a shell would (quote paths with spaces) but run without a shell; {scene} is replaced by the episode's scene", commandLine)
    .option("--env-timeout <seconds>", "stdio and habitat: most time for one environment request", positiveSeconds, 120)
    .option("--out <dir>", "run directory; an existing one resumes", outputDirectory)
    .addOption(new Option("--judge <provider/model>", "score the answers: LLM-Match, OpenEQA's efficiency E, EXPRESS-Bench's EAC, C, C*, E_path, d_T (a VLM: EAC sees the last frame)").env("EQA_JUDGE"))
    .option("--judge-base-url <url>", "the judge's endpoint")
    .addOption(new Option("--mode <mode>", "LLM-Match mode: robust or compat").argParser(oneOf(["robust", "compat"] as const)).default("robust"))
    .option("--no-eac", "with --judge: LLM-Match alone (C and OpenEQA's E), without EXPRESS-Bench's EAC call on the last frame (C*, and a judge that reads no images, such as gpt-4-0613)")
    .option("--prompts <set>", "Fine-EQA's and the EAC judge's prompts: eqakit (its own), original (EXPRESS-Bench's files, from eqa data fetch express-bench) or the folder that command wrote them to", "eqakit");
  addModelCallOptions(command);
  addDryRunOption(command);
  addBatchOptions(command);
  addShardOption(command, "episodes");
  return command.action(async (flags: ExploreFlags) => {
    if (await isMixedSetFile(flags.episodes)) {
      process.exitCode = await exploreMixed(flags, shardFromFlags(flags));
      return;
    }
    const agent = flags.agent;
    if (typeof agent === "string" && isMixedAgentName(agent)) throw new UserError(`--agent ${agent} runs Mixed EQA sets (eqakit-mixed/1), and ${flags.episodes} is not one`, { field: "--agent" }, "make a set with eqa generate mixed");
    const own = typeof agent === "object" ? agent : undefined;
    const explorer = typeof agent === "object" ? EXPLORERS.external : createExplorer(agent);
    const forAnswerer = `--em-agent is for the ${answeringExplorerNames().join(" or ")} explorer`;
    if (own && flags.emAgent) throw new UserError(`${forAnswerer}; your own agent answers itself`, { field: "--em-agent" });
    const prompts = flags.prompts === "eqakit" ? [] : readExpressOriginalPrompts(flags.prompts === "original" ? undefined : flags.prompts);
    if (explorer.observation) {
      // an explorer's own observation size (the reference mode's 512×512) unless given
      if (command.getOptionValueSource("width") === "default") flags.width = explorer.observation.width;
      if (command.getOptionValueSource("height") === "default") flags.height = explorer.observation.height;
    }
    const needsModel = explorer.answersWithVlm || flags.emAgent !== undefined || (own !== undefined && flags.model !== undefined);
    const spec = needsModel ? resolveRoleModel(flags, "model") : undefined;
    if (!explorer.takesAnswerer && flags.emAgent) throw new UserError(`${forAnswerer}; ${explorer.name} answers itself`, { field: "--em-agent" });
    const judgeSpec = flags.judge ? resolveRoleModel(flags, "judge") : undefined;
    if (flags.batch) {
      // only the judge's calls can go as a batch: an explorer's calls depend on each other's replies
      if (!judgeSpec) throw new UserError("--batch sends the judge's calls as one batch: give the judge", { field: "--judge" }, "give --judge PROVIDER/MODEL (openai/… or anthropic/…), or drop --batch");
      checkBatchSupport(judgeSpec);
    }
    const image = { maxSide: flags.imageSize, format: flags.imageFormat };
    if (flags.captioner && !flags.emAgent) throw new UserError("--captioner is for the frontier explorer's --em-agent", { field: "--captioner" });
    const captioner = flags.captioner ? resolveRoleModel(flags, "captioner") : undefined;
    const emAgentSetup = (model: ModelSpec, agent: AgentName) => ({ agent, model, image, forceGuess: flags.forceGuess, ...(captioner ? { captioner } : {}), ...(flags.numFrames !== undefined ? { numFrames: flags.numFrames } : {}) });
    const episodes = await loadActiveEpisodes(flags.episodes, flags.env === "builtin" ? { sceneProblem: builtinSceneProblem } : {});
    const shard = shardFromFlags(flags);
    const activeAgent = (runtime?: ModelRuntime): ExternalActiveAgent | undefined =>
      own
        ? new ExternalActiveAgent(own, {
            ...(spec && runtime ? { model: runtime.model(spec, { role: "agent" }) } : {}),
            ...(flags.agentTimeout !== undefined ? { timeoutMs: flags.agentTimeout * 1000 } : {}),
            image,
            settings: { maxSteps: flags.maxSteps ?? 500, episodeTimeMs: flags.episodeTime !== undefined ? flags.episodeTime * 1000 : null },
          })
        : undefined;
    const answerer = spec && flags.emAgent ? emAgentSetup(spec, flags.emAgent) : undefined;
    const judge = judgeSpec ? { spec: judgeSpec, mode: flags.mode, eac: flags.eac } : undefined;
    const observation = { width: flags.width, height: flags.height };
    const outDir = flags.out ?? defaultRunPath("explore");
    const common = { episodes, explorer, prompts, ...(spec ? { model: spec } : {}), ...(answerer ? { answerer } : {}), ...(judge ? { judge } : {}), ...(flags.maxSteps !== undefined ? { maxSteps: flags.maxSteps } : {}), ...(flags.episodeTime !== undefined ? { episodeTimeMs: flags.episodeTime * 1000 } : {}), image, observation, ...(shard ? { shard } : {}), outDir };
    if (flags.dryRun) {
      // only the judge's calls would go through a batch: the run is priced live, a note says what --batch saves
      const opened = await openCallPlan({ ...flags, batch: false });
      try {
        const external = activeAgent();
        // only the built-in simulator's scenes are known without starting an environment
        const notes = await planExploreWorkflow({ ...common, ...(external ? { activeAgent: external } : {}), ...(flags.env === "builtin" ? { sceneBounds: builtinSceneBounds(observation) } : {}) }, opened.plan);
        if (flags.batch) notes.push("with --batch the judge's calls go through the batch API at the batch price (half the listed price at OpenAI and Anthropic); the explorer's and agents' calls stay live");
        console.log(formatCallPlan(opened.plan.roles(), notes));
      } finally {
        opened.close();
      }
      return;
    }
    checkPriceFile();
    const opened = await openModelRuntime(flags);
    const progress = createStageProgress();
    const active = activeAgent(opened.runtime);
    let batched: Awaited<ReturnType<typeof runBatch>> | undefined;
    try {
      const run = await exploreAndJudge(
        {
          ...common,
          episodesFile: flags.episodes,
          openScene: sceneOpener(openerOptions(flags)),
          env: flags.env,
          ...(active ? { activeAgent: active } : {}),
          concurrency: flags.concurrency,
          promptSet: flags.prompts,
          callSettings: modelCallSettings(flags, opened.cachePath),
          onProgress: (stage, done, total, failed, unreadable) => progress.update(stage, done, total, failureDetail(failed, unreadable)),
          ...(flags.batch && judgeSpec
            ? {
                batchJudge: async (runDir, collect) => {
                  progress.stop();
                  batched = await runBatch(flags, judgeSpec, JUDGE_ROLE, runDir, collect);
                  return batched.opened.runtime;
                },
              }
            : {}),
        },
        opened.runtime,
      );
      progress.stop();
      console.log(formatExploreRun(run, own ? describeExternalAgent(own) : explorer.name, flags.env));
      process.exitCode = run.exitCode;
    } finally {
      progress.stop();
      await active?.close();
      opened.close();
      batched?.opened.close();
    }
  });
}
