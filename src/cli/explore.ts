import { Command, Option } from "commander";
import { AGENT_NAMES, EXPLORER_NAMES, ExternalActiveAgent, describeExternalAgent, type ExternalAgentSpec, type AgentSetup, FRONTIER_MAX_STEPS, STAND_IN_ANSWERERS, FINE_EQA_REFERENCE_OBSERVATION, createAgent, isFineEqa, loadActiveEpisodes, planExploration, runExploration, sceneOpener, type ActiveEpisode, type AgentName, type ExplorerName, type SceneOpenerOptions, type EnvironmentKind } from "../agents/index.js";
import { UserError, formatJudgeUnreadable, type Shard } from "../core/index.js";
import { planExploreScore, scoreExploration, useExpressOriginalPrompts, writeExploreReliability, writeExploreScores, type LlmMatchMode } from "../eval/index.js";
import { JUDGE_ROLE, checkBatchSupport, checkPriceFile, describeModel, type ModelRuntime, type ModelSpec } from "../models/index.js";
import { HouseholdEnvironment, builtinSceneProblem, builtinSceneSeed, type CommandLine, type SceneBounds } from "../sim/index.js";
import { formatCallPlan, formatRunCost } from "../report/index.js";
import { defaultRunPath } from "../store/index.js";
import { addModelCallOptions, commandLine, type ModelCallFlags, modelCallSettings, oneOf, openModelRuntime, outputDirectory, positiveInteger, positiveSeconds, resolveRoleModel, shardFromFlags, addShardOption, type ShardFlags } from "./options.js";
import { builtinOrExternalAgent } from "./agent-options.js";
import { addDryRunOption, openCallPlan, type DryRunFlags } from "./dry-run.js";
import { createProgress, failureDetail } from "./progress.js";
import { addBatchOptions, runBatch, type BatchFlags } from "./batch.js";

type EnvKind = EnvironmentKind;

interface ExploreFlags extends ModelCallFlags, DryRunFlags, BatchFlags, ShardFlags {
  episodes: string;
  env: EnvKind;
  agent: ExplorerName | ExternalAgentSpec;
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
    .addOption(new Option("--agent <explorer>", 'frontier, fine-eqa (eqakit\'s) or fine-eqa:reference (as EXPRESS-Bench\'s published code runs it), or your own active agent: exec:"python3 my_agent.py" (a process speaking docs/agent-protocol.md) or ./my-agent.mjs (a module)').argParser(builtinOrExternalAgent(EXPLORER_NAMES)).makeOptionMandatory())
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
    const own = typeof flags.agent === "object" ? flags.agent : undefined;
    const explorer: ExplorerName = typeof flags.agent === "object" ? "external" : flags.agent;
    if (own && flags.emAgent) throw new UserError("--em-agent is for the frontier explorer; your own agent answers itself", { field: "--em-agent" });
    if (flags.prompts !== "eqakit") useExpressOriginalPrompts(flags.prompts === "original" ? undefined : flags.prompts);
    if (explorer === "fine-eqa:reference") {
      // the reference observes 512×512 (fine_eqa.yaml)
      if (command.getOptionValueSource("width") === "default") flags.width = FINE_EQA_REFERENCE_OBSERVATION.width;
      if (command.getOptionValueSource("height") === "default") flags.height = FINE_EQA_REFERENCE_OBSERVATION.height;
    }
    const needsModel = isFineEqa(explorer) || flags.emAgent !== undefined || (own !== undefined && flags.model !== undefined);
    const spec = needsModel ? resolveRoleModel(flags, "model") : undefined;
    if (isFineEqa(explorer) && flags.emAgent) throw new UserError("--em-agent is for the frontier explorer; fine-eqa answers itself", { field: "--em-agent" });
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
    if (flags.dryRun) return planExploreRun(flags, explorer, activeAgent(), episodes, spec, judgeSpec, shard, spec && flags.emAgent ? emAgentSetup(spec, flags.emAgent) : undefined);
    checkPriceFile();
    const openScene = sceneOpener(openerOptions(flags));
    const opened = await openModelRuntime(flags);
    const progress = createProgress("exploring");
    const active = activeAgent(opened.runtime);
    let batched: Awaited<ReturnType<typeof runBatch>> | undefined;
    try {
      const answerer = spec && flags.emAgent ? createAgent(emAgentSetup(spec, flags.emAgent), opened.runtime) : undefined;
      const result = await runExploration({
        episodes,
        explorer,
        openScene,
        outDir: flags.out ?? defaultRunPath("explore"),
        ...(spec && isFineEqa(explorer) ? { vlm: { model: opened.runtime.model(spec, { role: "explorer" }), spec } } : {}),
        ...(active ? { activeAgent: active, concurrency: flags.concurrency, ...(flags.episodeTime !== undefined ? { episodeTimeMs: flags.episodeTime * 1000 } : {}) } : {}),
        ...(answerer ? { answerer } : {}),
        ...(flags.maxSteps !== undefined ? { maxSteps: flags.maxSteps } : {}),
        image,
        ...(shard ? { shard } : {}),
        usage: opened.runtime.usage,
        settings: { episodes: flags.episodes, promptSet: flags.prompts, env: flags.env, width: flags.width, height: flags.height, model: spec ? describeModel(spec) : null, ...modelCallSettings(flags, opened.cachePath) },
        onProgress: (done, total, failed) => progress.update(done, total, failed > 0 ? `(${failed} failed)` : ""),
      });
      progress.stop();
      // --batch: the judge's requests of every explored episode answered through the batch API, then read from the cache
      const scoring = judgeSpec ? { runDir: result.runDir, episodes, records: result.records, judgeSpec, mode: flags.mode, eac: flags.eac, image } : undefined;
      batched = flags.batch && scoring ? await runBatch(flags, scoring.judgeSpec, JUDGE_ROLE, result.runDir, (collector) => planExploreScore(scoring, collector)) : undefined;
      const judgeRuntime = (batched?.opened ?? opened).runtime;
      const judging = createProgress("judging");
      const scores = scoring
        ? await scoreExploration({ ...scoring, judge: judgeRuntime.model(scoring.judgeSpec, { role: JUDGE_ROLE }), onProgress: (done, total, failed, unreadable) => judging.update(done, total, failureDetail(failed, unreadable)) })
        : undefined;
      judging.stop();
      const withReliability = await writeExploreReliability(result.runDir, result.summary, result.records);
      const cost = scores ? (await writeExploreScores(result.runDir, withReliability, scores)).cost : result.summary.cost;
      const s = result.summary;
      const m = s.metrics;
      const fmt = (v: number | null, digits = 2): string => (v === null ? "n/a" : v.toFixed(digits));
      console.log(`eqa explore (${own ? describeExternalAgent(own) : explorer}, ${flags.env}): ${s.counts.finished}/${s.counts.episodes} episodes finished, ${s.counts.failed} failed, ${s.counts.reused} reused`);
      console.log(`path length: ${fmt(m.pathLength.meanMetres)} m, ${fmt(m.pathLength.meanSteps, 1)} steps (mean)`);
      console.log(`explorer time per step (without environment and model calls): ${fmt(m.explorerMsPerStep.mean)} ms mean, ${fmt(m.explorerMsPerStep.max)} ms max`);
      if (m.goalDistance.n > 0) console.log(`distance to goal at the end: ${fmt(m.goalDistance.meanMetres)} m (mean of ${m.goalDistance.n})`);
      if (m.coverage.n > 0) console.log(`reachable floor seen: ${fmt(m.coverage.mean === null ? null : 100 * m.coverage.mean, 1)} % (mean of ${m.coverage.n}), least ${fmt(m.coverage.min === null ? null : 100 * m.coverage.min, 1)} %`);
      const rel = withReliability.reliability;
      if (rel.n > 0) console.log(`reliability (EXPRESS-Bench): ACE ${fmt(rel.ace, 3)}, NPL ${fmt(rel.npl, 3)}, WCE ${fmt(rel.wce, 3)} (n=${rel.n})`);
      for (const l of rel.leftOut) console.log(`  ACE/NPL/WCE leave out ${l.episodes} episode(s): ${l.reason}`);
      const mc = m.multipleChoice;
      if (mc.n > 0) console.log(`multiple-choice accuracy: ${fmt(mc.accuracy, 1)} % (${mc.correct} of ${mc.n} correct${mc.unread > 0 ? `, ${mc.unread} repl${mc.unread === 1 ? "y" : "ies"} without a choice letter` : ""})`);
      if (scores) {
        const e = scores.efficiency;
        const x = scores.express;
        console.log(`judge ${scores.judge}: ${scores.judged} judged, ${scores.failed} failed, ${scores.judgeUnreadable.count} unreadable by the judge; LLM-Match C ${fmt(scores.llmMatch.correctness, 1)} % (n=${scores.llmMatch.n})`);
        const unreadable = formatJudgeUnreadable(scores.judgeUnreadable);
        if (unreadable) console.log(`${unreadable}; left out of that judge's figures`);
        if (e.metres) console.log(`OpenEQA efficiency E (metres): ${fmt(e.metres.efficiency, 1)} % (n=${e.metres.n})`);
        if (e.steps) console.log(`OpenEQA efficiency E (steps): ${fmt(e.steps.efficiency, 1)} % (n=${e.steps.n})`);
        if (x) {
          console.log(`EXPRESS-Bench: C ${fmt(x.c, 1)} %, C* ${fmt(x.cStar, 1)} % (n=${x.nScored}, unjudged ${x.unjudged}), E_path ${fmt(x.ePath, 1)} % (n=${x.nPath}), d_T ${fmt(x.dT)} m (n=${x.nGoal})`);
          for (const l of x.leftOut) console.log(`  ${l.metric} leaves out ${l.episodes} episode(s): ${l.reason}`);
        }
      }
      for (const f of s.failures) console.log(`failed ${f.questionId}: ${f.error}`);
      console.log(`\n${formatRunCost(cost)}`);
      console.log(`\nwrote ${result.runDir}/{episodes.jsonl,predictions.json,summary.json,trajectories/,frames/}`);
      process.exitCode = s.counts.failed + (scores?.failed ?? 0) > 0 || scores?.judgeUnreadable.overLimit === true ? 1 : 0;
    } finally {
      progress.stop();
      await active?.close();
      opened.close();
      batched?.opened.close();
    }
  });
}

/** `eqa explore --dry-run`: the explorer's, the agent's and the judge's calls, as a most, without starting an environment. */
async function planExploreRun(flags: ExploreFlags, explorer: ExplorerName, activeAgent: ExternalActiveAgent | undefined, episodes: ActiveEpisode[], spec: ModelSpec | undefined, judgeSpec: ModelSpec | undefined, shard: Shard | undefined, emAgent: AgentSetup | undefined): Promise<void> {
  // only the judge's calls would go through a batch: the run is priced live, a note says what --batch saves
  const opened = await openCallPlan({ ...flags, batch: false });
  try {
    const image = { maxSide: flags.imageSize, format: flags.imageFormat };
    const build = (setup: AgentSetup) => createAgent(setup, opened.plan.runtime((_spec, nth) => ({ role: nth === 0 ? "agent" : "captioner" })));
    const answerer = emAgent ? { ...build(emAgent), fresh: () => build(emAgent).agent } : undefined;
    const outDir = flags.out ?? defaultRunPath("explore");
    const planned = await planExploration(
      {
        episodes,
        explorer,
        outDir,
        ...(spec && isFineEqa(explorer) ? { vlm: spec } : {}),
        ...(activeAgent ? { activeAgent, ...(flags.episodeTime !== undefined ? { episodeTimeMs: flags.episodeTime * 1000 } : {}) } : {}),
        ...(answerer ? { answerer } : {}),
        ...(judgeSpec ? { judge: judgeSpec, eac: flags.eac } : {}),
        ...(flags.maxSteps !== undefined ? { maxSteps: flags.maxSteps } : {}),
        image,
        observation: { width: flags.width, height: flags.height },
        ...(shard ? { shard } : {}),
        // only the built-in simulator's scenes are known without starting an environment
        ...(flags.env === "builtin" ? { sceneBounds: builtinSceneBounds(flags) } : {}),
      },
      opened.plan,
    );
    const notes = [`${planned.episodes} episode(s): ${planned.reused} already explored in ${outDir}, ${planned.pending} to explore`];
    if (isFineEqa(explorer)) {
      notes.push(planned.steps === null ? "the step budget of some scenes is unknown before their environment starts: each counts as one step (pass --max-steps for a bound)" : `at most ${planned.steps} step(s) in all: each step a stop check and a region check, so the calls are an upper bound (an episode ends when the VLM can answer)`);
    }
    if (activeAgent) notes.push("your own agent's model calls (model/complete) are known only as it makes them: not counted");
    if (answerer) notes.push(STAND_IN_ANSWERERS.has(answerer.agent.name) ? `the ${answerer.agent.name} agent answers once per episode from the frames the exploration collects: its calls, tokens and dollars are estimated on a stand-in recording of ${(flags.maxSteps ?? FRONTIER_MAX_STEPS) + 1} blank ${flags.width}×${flags.height} frames (one per step of the budget), of which it samples its frames` : `the ${answerer.agent.name} agent answers once per episode from the frames the exploration collects: its calls are counted, its tokens are not estimated`);
    if (judgeSpec) notes.push(flags.eac ? "the judge makes an LLM-Match and an EAC call per episode: counted, not estimated" : "the judge makes an LLM-Match call per episode: counted, not estimated");
    if (flags.batch) notes.push("with --batch the judge's calls go through the batch API at the batch price (half the listed price at OpenAI and Anthropic); the explorer's and agents' calls stay live");
    console.log(formatCallPlan(opened.plan.roles(), notes));
  } finally {
    opened.close();
  }
}

function builtinSceneBounds(flags: ExploreFlags): (scene: string) => Promise<SceneBounds | undefined> {
  return async (scene) => {
    const seed = builtinSceneSeed(scene);
    return seed === undefined ? undefined : HouseholdEnvironment.fromSeed(seed, { width: flags.width, height: flags.height }).bounds();
  };
}
