import { Option } from "commander";
import { AGENT_NAMES, EXPLORER_NAMES, EXPLORERS, MIXED_AGENT_NAMES, ExternalActiveAgent, answeringExplorerNames, builtinSceneBounds, createExplorer, describeExternalAgent, explorerChoices, isMixedAgentName, loadActiveEpisodes, sceneOpener, type AgentName, type ExternalAgentSpec } from "../agents/index.js";
import { UserError } from "../core/index.js";
import { exploreAndJudge, planExploreWorkflow, readExpressOriginalPrompts, type LlmMatchMode } from "../eval/index.js";
import { JUDGE_ROLE, checkBatchSupport, type ModelRuntime, type ModelSpec } from "../models/index.js";
import { builtinSceneProblem, type CommandLine } from "../sim/index.js";
import { formatExploreRun } from "../report/index.js";
import { commandLine, oneOf, positiveInteger, positiveSeconds, shardFromFlags, type ShardFlags } from "./options.js";
import { type ModelCallFlags } from "./model-options.js";
import { builtinOrExternalAgent, openerOptions, type ExploreFlags } from "./agent-options.js";
import type { DryRunFlags } from "./dry-run.js";
import { failureDetail } from "./progress.js";
import type { BatchFlags } from "./batch.js";
import { defineRunCommand, type RunSession } from "./lifecycle.js";
import { exploreMixed, isMixedSetFile } from "./explore-mixed.js";

/** Every agent `--agent` names: the explorers, and the built-in agents of Mixed EQA sets (which run only those). */
const EXPLORE_AGENT_NAMES = [...EXPLORER_NAMES, ...MIXED_AGENT_NAMES] as const;

/** What a dry run and a run of `eqa explore` share: the episodes, the explorer and its models, the judge. */
interface ExploreSetup {
  common: Omit<Parameters<typeof planExploreWorkflow>[0], "activeAgent" | "sceneBounds">;
  own: ExternalAgentSpec | undefined;
  explorer: ReturnType<typeof createExplorer>;
  judgeSpec: ModelSpec | undefined;
  activeAgent: (runtime?: ModelRuntime) => ExternalActiveAgent | undefined;
}

export function exploreCommand() {
  return defineRunCommand<ExploreFlags, ExploreSetup>({
    name: "explore",
    description: "active EQA: explore each episode's scene, answer, and record trajectories (resumable)",
    roles: [
      { role: "model", help: "fine-eqa: the VLM; frontier: the --em-agent's model", env: "EQA_MODEL", baseUrlHelp: "the model's endpoint" },
      { role: "captioner", help: "frontier: the --em-agent's captioner (socratic: describes the frames, default --model; svm, conceptgraph: captions the objects, default the instance labels)", baseUrlHelp: "the captioner's endpoint" },
      { role: "judge", help: "score the answers: LLM-Match, OpenEQA's efficiency E, EXPRESS-Bench's EAC, C, C*, E_path, d_T (a VLM: EAC sees the last frame)", env: "EQA_JUDGE", baseUrlHelp: "the judge's endpoint" },
    ],
    dryRun: true,
    batch: true,
    shard: "episodes",
    planAtBatchPrice: false,
    options: (command, place) => {
      command
        .requiredOption("--episodes <file>", "active episodes (JSON, see docs/active-eqa.md), an EXPRESS-Bench file, or HM-EQA's questions.csv (with scene_init_poses.csv beside it)")
        .addOption(new Option("--env <env>", "builtin (scenes home-<seed>), habitat (bridges/habitat) or stdio (--env-command)").argParser(oneOf(["builtin", "habitat", "stdio"] as const)).default("builtin"))
        .addOption(new Option("--agent <explorer>", `${explorerChoices()}, or your own active agent: exec:"python3 my_agent.py" (a process speaking docs/agent-protocol.md) or ./my-agent.mjs (a module); a Mixed EQA set (docs/mixed-eqa.md): ${MIXED_AGENT_NAMES.join(", ")}`).argParser(builtinOrExternalAgent(EXPLORE_AGENT_NAMES)).makeOptionMandatory())
        .option("--agent-timeout <seconds>", "your own agent: seconds to wait for each of its replies (default 120)", positiveSeconds)
        .option("--episode-time <seconds>", "your own agent: each episode's time budget (none by default; when spent, the agent must answer or stop)", positiveSeconds);
      place.role("model");
      command
        .addOption(new Option("--em-agent <agent>", "frontier: the EM-EQA agent answering from the frames (OpenEQA's A-EQA baseline); none: exploration only").argParser(oneOf(AGENT_NAMES)));
      place.role("captioner");
      command
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
        .option("--env-timeout <seconds>", "stdio and habitat: most time for one environment request", positiveSeconds, 120);
      place.out("run directory; an existing one resumes");
      place.role("judge");
      command
        .addOption(new Option("--mode <mode>", "LLM-Match mode: robust or compat").argParser(oneOf(["robust", "compat"] as const)).default("robust"))
        .option("--no-eac", "with --judge: LLM-Match alone (C and OpenEQA's E), without EXPRESS-Bench's EAC call on the last frame (C*, and a judge that reads no images, such as gpt-4-0613)")
        .option("--prompts <set>", "Fine-EQA's and the EAC judge's prompts: eqakit (its own), original (EXPRESS-Bench's files, from eqa data fetch express-bench) or the folder that command wrote them to", "eqakit");
    },
    // a Mixed EQA set runs its own agents in its own run kind (explore-mixed.ts)
    handOff: async (session) => ((await isMixedSetFile(session.flags.episodes)) ? exploreMixed(session, shardFromFlags(session.flags)) : undefined),
    prepare: prepareExplore,
    plan: async ({ common, activeAgent }, plan, { flags }) => {
      const external = activeAgent();
      // only the built-in simulator's scenes are known without starting an environment
      const notes = await planExploreWorkflow({ ...common, ...(external ? { activeAgent: external } : {}), ...(flags.env === "builtin" ? { sceneBounds: builtinSceneBounds(common.observation) } : {}) }, plan);
      // only the judge's calls would go through a batch: the run is priced live, a note says what --batch saves
      if (flags.batch) notes.push("with --batch the judge's calls go through the batch API at the batch price (half the listed price at OpenAI and Anthropic); the explorer's and agents' calls stay live");
      return notes;
    },
    run: runExplore,
  });
}

async function prepareExplore(session: RunSession<ExploreFlags>): Promise<ExploreSetup> {
  const { flags } = session;
  const agent = flags.agent;
  if (typeof agent === "string" && isMixedAgentName(agent)) throw new UserError(`--agent ${agent} runs Mixed EQA sets (eqakit-mixed/1), and ${flags.episodes} is not one`, { field: "--agent" }, "make a set with eqa generate mixed");
  const own = typeof agent === "object" ? agent : undefined;
  const explorer = typeof agent === "object" ? EXPLORERS.external : createExplorer(agent);
  const forAnswerer = `--em-agent is for the ${answeringExplorerNames().join(" or ")} explorer`;
  if (own && flags.emAgent) throw new UserError(`${forAnswerer}; your own agent answers itself`, { field: "--em-agent" });
  const prompts = flags.prompts === "eqakit" ? [] : readExpressOriginalPrompts(flags.prompts === "original" ? undefined : flags.prompts);
  if (explorer.observation) {
    // an explorer's own observation size (the reference mode's 512×512) unless given
    if (session.command.getOptionValueSource("width") === "default") flags.width = explorer.observation.width;
    if (session.command.getOptionValueSource("height") === "default") flags.height = explorer.observation.height;
  }
  const needsModel = explorer.answersWithVlm || flags.emAgent !== undefined || (own !== undefined && flags.model !== undefined);
  const spec = needsModel ? session.role("model") : undefined;
  if (!explorer.takesAnswerer && flags.emAgent) throw new UserError(`${forAnswerer}; ${explorer.name} answers itself`, { field: "--em-agent" });
  const judgeSpec = session.optionalRole("judge");
  if (flags.batch) {
    // only the judge's calls can go as a batch: an explorer's calls depend on each other's replies
    if (!judgeSpec) throw new UserError("--batch sends the judge's calls as one batch: give the judge", { field: "--judge" }, "give --judge PROVIDER/MODEL (openai/… or anthropic/…), or drop --batch");
    checkBatchSupport(judgeSpec);
  }
  const image = { maxSide: flags.imageSize, format: flags.imageFormat };
  if (flags.captioner && !flags.emAgent) throw new UserError("--captioner is for the frontier explorer's --em-agent", { field: "--captioner" });
  const captioner = session.optionalRole("captioner");
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
  const outDir = session.outDir;
  const common = { episodes, explorer, prompts, ...(spec ? { model: spec } : {}), ...(answerer ? { answerer } : {}), ...(judge ? { judge } : {}), ...(flags.maxSteps !== undefined ? { maxSteps: flags.maxSteps } : {}), ...(flags.episodeTime !== undefined ? { episodeTimeMs: flags.episodeTime * 1000 } : {}), image, observation, ...(shard ? { shard } : {}), outDir };
  return { common, own, explorer, judgeSpec, activeAgent };
}

async function runExplore({ common, own, explorer, judgeSpec, activeAgent }: ExploreSetup, session: RunSession<ExploreFlags>): Promise<number> {
  const { flags } = session;
  const opened = await session.runtime();
  const progress = session.stageProgress();
  const active = activeAgent(opened.runtime);
  if (active) session.closing(active);
  const run = await exploreAndJudge(
    {
      ...common,
      episodesFile: flags.episodes,
      openScene: sceneOpener(openerOptions(flags)),
      env: flags.env,
      ...(active ? { activeAgent: active } : {}),
      concurrency: flags.concurrency,
      promptSet: flags.prompts,
      callSettings: session.callSettings(opened),
      onProgress: (stage, done, total, failed, unreadable) => progress.update(stage, done, total, failureDetail(failed, unreadable)),
      ...(flags.batch && judgeSpec
        ? {
            batchJudge: async (runDir, collect) => {
              progress.stop();
              return (await session.batch(judgeSpec, JUDGE_ROLE, runDir, collect)).runtime;
            },
          }
        : {}),
    },
    opened.runtime,
  );
  progress.stop();
  console.log(formatExploreRun(run, own ? describeExternalAgent(own) : explorer.name, flags.env));
  return run.exitCode;
}
