import { Command } from "commander";
import { join } from "node:path";
import { ExternalAgent, describeExternalAgent, type ExternalAgentSpec } from "../agents/index.js";
import { loadTagQuestions } from "../data/index.js";
import { runTagAnswers, tagSetEpisodes } from "../generate/index.js";
import { formatRunCost } from "../report/index.js";
import { externalAgentArgument } from "./agent-options.js";
import { addModelCallOptions, openModelRuntime, outputDirectory, positiveSeconds, resolveRoleModel, type ModelCallFlags } from "./options.js";
import { createProgress } from "./progress.js";

interface AnswerTagFlags extends ModelCallFlags {
  questions: string;
  agent: ExternalAgentSpec;
  out: string;
  agentTimeout?: number;
  model?: string;
  modelBaseUrl?: string;
}

export function answerTagCommand(): Command {
  const command = new Command("answer-tag")
    .description("answer a TAG-EQA set made from simulator recordings with an agent of your own (agent protocol, task tag: frames, grounding frame, action history); score it with eqa score-tag")
    .requiredOption("--questions <file>", "the questions.json of eqa generate tag --source sim:DIR (the recordings where it found them)")
    .requiredOption("--agent <exec:COMMAND|module>", "your agent: exec:COMMAND (a process) or a module's path", externalAgentArgument)
    .requiredOption("--out <dir>", "where answers are appended (answers.jsonl; a rerun resumes) and predictions.json and agent-failures.json written", outputDirectory)
    .option("--agent-timeout <seconds>", "seconds to wait for each of its replies (default 120)", positiveSeconds)
    .option("--model <provider/model>", "the model your agent may call through model/complete")
    .option("--model-base-url <url>", "the model's endpoint");
  addModelCallOptions(command);
  return command.action(async (flags: AnswerTagFlags) => {
    const questions = await loadTagQuestions(flags.questions);
    const episodes = await tagSetEpisodes(questions, flags.questions);
    const spec = flags.model ? resolveRoleModel(flags, "model") : undefined;
    const opened = spec ? await openModelRuntime(flags) : undefined;
    const agent = new ExternalAgent(flags.agent, { task: "tag", episodes: true, ...(spec && opened ? { model: opened.runtime.model(spec, { role: "agent" }) } : {}), ...(flags.agentTimeout !== undefined ? { timeoutMs: flags.agentTimeout * 1000 } : {}) });
    const progress = createProgress("answering");
    try {
      const { predictions, failures, cost } = await runTagAnswers(questions, episodes, agent, flags.out, {
        concurrency: flags.concurrency,
        questionsPath: flags.questions,
        ...(opened ? { usage: opened.runtime.usage } : {}),
        onResume: (reused, toAsk) => console.log(`resuming in ${flags.out}: ${reused} of ${questions.length} questions already answered, ${toAsk} to ask`),
        onAnswer: (_, done, total) => progress.update(done, total, ""),
      });
      progress.stop();
      for (const f of failures.slice(0, 5)) process.stderr.write(`eqa: ${f.question_id} not answered: ${f.error}\n`);
      const withAnswer = predictions.filter((p) => p.answer !== null).length;
      const predictionsFile = join(flags.out, "predictions.json");
      console.log(`${describeExternalAgent(flags.agent)}: ${withAnswer} of ${predictions.length} questions answered, ${predictions.length - withAnswer - failures.length} without an answer, ${failures.length} failed`);
      console.log(`wrote ${predictionsFile}; score it with eqa score-tag --questions ${flags.questions} --predictions ${predictionsFile} --out DIR`);
      if (failures.length > 0) console.log("run the same command again to ask the failed questions again");
      console.log(`\n${formatRunCost(cost)}`);
      process.exitCode = failures.length > 0 ? 1 : 0;
    } finally {
      progress.stop();
      await agent.close();
      opened?.close();
    }
  });
}
