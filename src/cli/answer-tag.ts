import { Command } from "commander";
import { join } from "node:path";
import { ExternalAgent, describeExternalAgent, type ExternalAgentSpec } from "../agents/index.js";
import { z } from "zod";
import { UserError } from "../core/index.js";
import { loadTagQuestions, type TagQuestion } from "../data/index.js";
import { answerTagQuestions, tagSetEpisodes, type TagAgentPrediction } from "../generate/index.js";
import { RunDirectory } from "../store/index.js";
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
    const run = new RunDirectory(flags.out);
    const kept = keptAnswers(run, questions);
    const asked = questions.filter((q) => !kept.has(q.question_id));
    if (kept.size > 0) console.log(`resuming in ${run.path}: ${kept.size} of ${questions.length} questions already answered, ${asked.length} to ask`);
    const spec = flags.model ? resolveRoleModel(flags, "model") : undefined;
    const opened = spec ? await openModelRuntime(flags) : undefined;
    const agent = new ExternalAgent(flags.agent, { task: "tag", episodes: true, ...(spec && opened ? { model: opened.runtime.model(spec) } : {}), ...(flags.agentTimeout !== undefined ? { timeoutMs: flags.agentTimeout * 1000 } : {}) });
    const records = run.appender(ANSWERS_FILE);
    const progress = createProgress("answering");
    try {
      const answered = await answerTagQuestions(asked, episodes, agent, {
        concurrency: flags.concurrency,
        onAnswer: (prediction, done, total) => {
          records.append(prediction);
          progress.update(done, total, "");
        },
      });
      progress.stop();
      for (const p of answered) kept.set(p.question_id, p);
      const all = questions.map((q) => kept.get(q.question_id)!);
      const failures = all.filter((p) => p.error !== undefined);
      await run.writeJson("predictions.json", all.map((p) => ({ question_id: p.question_id, answer: p.answer })));
      await run.writeJson("agent-failures.json", failures);
      for (const f of failures.slice(0, 5)) process.stderr.write(`eqa: ${f.question_id} not answered: ${f.error}\n`);
      const withAnswer = all.filter((p) => p.answer !== null).length;
      console.log(`${describeExternalAgent(flags.agent)}: ${withAnswer} of ${all.length} questions answered, ${all.length - withAnswer - failures.length} without an answer, ${failures.length} failed`);
      console.log(`wrote ${join(run.path, "predictions.json")}; score it with eqa score-tag --questions ${flags.questions} --predictions ${join(run.path, "predictions.json")} --out DIR`);
      if (failures.length > 0) console.log("run the same command again to ask the failed questions again");
      process.exitCode = failures.length > 0 ? 1 : 0;
    } finally {
      progress.stop();
      records.close();
      await agent.close();
      opened?.close();
    }
  });
}

/** Where each answer is appended as it comes: a rerun in the same --out asks only what is not there. */
const ANSWERS_FILE = "answers.jsonl";

const answerRecord = z.object({ question_id: z.string(), answer: z.string().nullable(), error: z.string().optional() });

/**
 * The answers an earlier run in the same folder kept: the latest record of each question, less
 * the failed ones (asked again). A record of a question the set does not have means the folder
 * belongs to another set: refused, naming the file.
 */
function keptAnswers(run: RunDirectory, questions: readonly TagQuestion[]): Map<string, TagAgentPrediction> {
  const ids = new Set(questions.map((q) => q.question_id));
  const { records } = run.readRecords(ANSWERS_FILE, (value) => {
    const parsed = answerRecord.safeParse(value);
    return parsed.success ? (parsed.data as TagAgentPrediction) : undefined;
  });
  const kept = new Map<string, TagAgentPrediction>();
  for (const [index, record] of records.entries()) {
    if (!ids.has(record.question_id)) {
      throw new UserError("the output folder holds answers to a question this set does not have", { file: run.file(ANSWERS_FILE), index, id: record.question_id }, "give --out a new folder, or the questions file the folder's answers came from");
    }
    if (record.error === undefined) kept.set(record.question_id, record);
    else kept.delete(record.question_id);
  }
  return kept;
}
