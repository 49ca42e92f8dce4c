import { Command } from "commander";
import { join } from "node:path";
import { ExternalAgent, describeExternalAgent, type ExternalAgentSpec } from "../agents/index.js";
import { loadTagQuestions } from "../data/index.js";
import { TAG_BASELINE_NAMES, runTagAnswers, runTagBaseline, tagBaseline, tagSetEpisodes, type TagAnswerRun, type TagBaselineName } from "../generate/index.js";
import { formatRunCost } from "../report/index.js";
import { builtinOrExternalAgent } from "./agent-options.js";
import { addModelCallOptions, openModelRuntime, outputDirectory, positiveSeconds, resolveRoleModel, type ModelCallFlags } from "./options.js";
import { createProgress } from "./progress.js";

interface AnswerTagFlags extends ModelCallFlags {
  questions: string;
  agent: TagBaselineName | ExternalAgentSpec;
  out: string;
  agentTimeout?: number;
  model?: string;
  modelBaseUrl?: string;
  captioner?: string;
  captionerBaseUrl?: string;
}

export function answerTagCommand(): Command {
  const command = new Command("answer-tag")
    .description("answer a TAG-EQA set made from simulator recordings with one of TAG-EQA's baselines or an agent of your own (agent protocol, task tag: frames, grounding frame, action history); score it with eqa score-tag")
    .requiredOption("--questions <file>", "the questions.json of eqa generate tag --source sim:DIR (the recordings where it found them)")
    .requiredOption("--agent <name|exec:COMMAND|module>", `a baseline of TAG-EQA's Table 2 (${TAG_BASELINE_NAMES.join(", ")}; needs --model), or your agent: exec:COMMAND (a process) or a module's path`, builtinOrExternalAgent(TAG_BASELINE_NAMES))
    .requiredOption("--out <dir>", "where answers are appended (answers.jsonl; a rerun resumes) and predictions.json and agent-failures.json written", outputDirectory)
    .option("--agent-timeout <seconds>", "your agent: seconds to wait for each of its replies (default 120)", positiveSeconds)
    .option("--model <provider/model>", "a baseline's LLM (the paper's was Gemma 2 9B), or the model your agent may call through model/complete")
    .option("--model-base-url <url>", "the model's endpoint")
    .option("--captioner <provider/model>", "a baseline's captioning VLM (the paper's was CogVLM 2; default: --model)")
    .option("--captioner-base-url <url>", "the captioner's endpoint");
  addModelCallOptions(command);
  return command.action(async (flags: AnswerTagFlags) => {
    const questions = await loadTagQuestions(flags.questions);
    const episodes = await tagSetEpisodes(questions, flags.questions);
    if (typeof flags.agent === "string") {
      process.exitCode = await answerWithBaseline(flags, flags.agent, questions, episodes);
      return;
    }
    const spec = flags.model ? resolveRoleModel(flags, "model") : undefined;
    const opened = spec ? await openModelRuntime(flags) : undefined;
    const agent = new ExternalAgent(flags.agent, { task: "tag", episodes: true, ...(spec && opened ? { model: opened.runtime.model(spec, { role: "agent" }) } : {}), ...(flags.agentTimeout !== undefined ? { timeoutMs: flags.agentTimeout * 1000 } : {}) });
    const progress = createProgress("answering");
    try {
      const result = await runTagAnswers(questions, episodes, agent, flags.out, {
        concurrency: flags.concurrency,
        questionsPath: flags.questions,
        ...(opened ? { usage: opened.runtime.usage } : {}),
        onResume: (reused, toAsk) => console.log(`resuming in ${flags.out}: ${reused} of ${questions.length} questions already answered, ${toAsk} to ask`),
        onAnswer: (_, done, total) => progress.update(done, total, ""),
      });
      progress.stop();
      process.exitCode = reportAnswers(describeExternalAgent(flags.agent), result, flags);
    } finally {
      progress.stop();
      await agent.close();
      opened?.close();
    }
  });
}

/** A baseline of TAG-EQA's Table 2 answering the set with the user's LLM and captioner. */
async function answerWithBaseline(flags: AnswerTagFlags, name: TagBaselineName, questions: Awaited<ReturnType<typeof loadTagQuestions>>, episodes: Awaited<ReturnType<typeof tagSetEpisodes>>): Promise<number> {
  const baseline = tagBaseline(name);
  const llmSpec = resolveRoleModel(flags, "model");
  const captionerSpec = flags.captioner ? resolveRoleModel(flags, "captioner") : llmSpec;
  const opened = await openModelRuntime(flags);
  const progress = createProgress("answering");
  try {
    const models = { llm: opened.runtime.model(llmSpec, { role: "agent" }), captioner: opened.runtime.model(captionerSpec, { role: "captioner" }) };
    let prepared = 0;
    let reusedPreparations = 0;
    const result = await runTagBaseline(baseline, models, questions, episodes, flags.out, {
      concurrency: flags.concurrency,
      questionsPath: flags.questions,
      usage: opened.runtime.usage,
      onResume: (reused, toAsk) => console.log(`resuming in ${flags.out}: ${reused} of ${questions.length} questions already answered, ${toAsk} to ask`),
      onPrepared: (_, reused) => (reused ? reusedPreparations++ : prepared++),
      onAnswer: (_, done, total) => progress.update(done, total, ""),
    });
    progress.stop();
    console.log(`${name}: ${prepared} trajectories prepared${reusedPreparations > 0 ? `, ${reusedPreparations} preparations reused from ${flags.out}` : ""}`);
    return reportAnswers(`${name} (${llmSpec.name}${baseline.captions ? `, captions by ${captionerSpec.name}` : ""})`, result, flags);
  } finally {
    progress.stop();
    opened.close();
  }
}

function reportAnswers(who: string, { predictions, failures, cost }: TagAnswerRun, flags: AnswerTagFlags): number {
  for (const f of failures.slice(0, 5)) process.stderr.write(`eqa: ${f.question_id} not answered: ${f.error}\n`);
  const withAnswer = predictions.filter((p) => p.answer !== null).length;
  const predictionsFile = join(flags.out, "predictions.json");
  console.log(`${who}: ${withAnswer} of ${predictions.length} questions answered, ${predictions.length - withAnswer - failures.length} without an answer, ${failures.length} failed`);
  console.log(`wrote ${predictionsFile}; score it with eqa score-tag --questions ${flags.questions} --predictions ${predictionsFile} --out DIR`);
  if (failures.length > 0) console.log("run the same command again to ask the failed questions again");
  console.log(`\n${formatRunCost(cost)}`);
  return failures.length > 0 ? 1 : 0;
}
