import { join } from "node:path";
import { ExternalAgent, describeExternalAgent, type ExternalAgentSpec } from "../agents/index.js";
import { loadTagQuestions } from "../data/index.js";
import { TAG_BASELINE_NAMES, runTagAnswers, runTagBaseline, tagBaseline, tagSetEpisodes, type TagAnswerRun, type TagBaselineName } from "../generate/index.js";
import { formatRunCost } from "../report/index.js";
import { builtinOrExternalAgent } from "./agent-options.js";
import { outputDirectory, positiveSeconds } from "./options.js";
import { type ModelCallFlags } from "./model-options.js";
import { defineRunCommand, wroteLine, type RunSession } from "./lifecycle.js";

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

/** The set `eqa answer-tag` answers: its questions and their episodes. */
interface TagSet {
  questions: Awaited<ReturnType<typeof loadTagQuestions>>;
  episodes: Awaited<ReturnType<typeof tagSetEpisodes>>;
}

export function answerTagCommand() {
  return defineRunCommand<AnswerTagFlags, TagSet>({
    name: "answer-tag",
    description: "answer a TAG-EQA set made from simulator recordings with one of TAG-EQA's baselines or an agent of your own (agent protocol, task tag: frames, grounding frame, action history); score it with eqa score-tag",
    roles: [
      { role: "model", help: "a baseline's LLM (the paper's was Gemma 2 9B), or the model your agent may call through model/complete", baseUrlHelp: "the model's endpoint" },
      { role: "captioner", help: "a baseline's captioning VLM (the paper's was CogVLM 2; default: --model)", baseUrlHelp: "the captioner's endpoint" },
    ],
    out: "own",
    options: (command) => {
      command
        .requiredOption("--questions <file>", "the questions.json of eqa generate tag --source sim:DIR (the recordings where it found them)")
        .requiredOption("--agent <name|exec:COMMAND|module>", `a baseline of TAG-EQA's Table 2 (${TAG_BASELINE_NAMES.join(", ")}; needs --model), or your agent: exec:COMMAND (a process) or a module's path`, builtinOrExternalAgent(TAG_BASELINE_NAMES))
        .requiredOption("--out <dir>", "where answers are appended (answers.jsonl; a rerun resumes) and predictions.json and agent-failures.json written", outputDirectory)
        .option("--agent-timeout <seconds>", "your agent: seconds to wait for each of its replies (default 120)", positiveSeconds);
    },
    prepare: async ({ flags }) => {
      const questions = await loadTagQuestions(flags.questions);
      return { questions, episodes: await tagSetEpisodes(questions, flags.questions) };
    },
    run: (set, session) => (typeof session.flags.agent === "string" ? answerWithBaseline(session, session.flags.agent, set) : answerWithOwnAgent(session, session.flags.agent, set)),
  });
}

/** The user's agent answering the set, calling the user's model through model/complete when --model is given. */
async function answerWithOwnAgent(session: RunSession<AnswerTagFlags>, own: ExternalAgentSpec, { questions, episodes }: TagSet): Promise<number> {
  const { flags } = session;
  const spec = session.optionalRole("model");
  const opened = spec ? await session.runtime() : undefined;
  const agent = new ExternalAgent(own, { task: "tag", episodes: true, ...(spec && opened ? { model: opened.runtime.model(spec, { role: "agent" }) } : {}), ...(flags.agentTimeout !== undefined ? { timeoutMs: flags.agentTimeout * 1000 } : {}) });
  session.closing(agent);
  const progress = session.progress("answering");
  const result = await runTagAnswers(questions, episodes, agent, flags.out, {
    concurrency: flags.concurrency,
    questionsPath: flags.questions,
    ...(opened ? { usage: opened.runtime.usage } : {}),
    onResume: (reused, toAsk) => console.log(`resuming in ${flags.out}: ${reused} of ${questions.length} questions already answered, ${toAsk} to ask`),
    onAnswer: (_, done, total) => progress.update(done, total, ""),
  });
  progress.stop();
  return reportAnswers(describeExternalAgent(own), result, flags);
}

/** A baseline of TAG-EQA's Table 2 answering the set with the user's LLM and captioner. */
async function answerWithBaseline(session: RunSession<AnswerTagFlags>, name: TagBaselineName, { questions, episodes }: TagSet): Promise<number> {
  const { flags } = session;
  const baseline = tagBaseline(name);
  const llmSpec = session.role("model");
  const captionerSpec = session.optionalRole("captioner") ?? llmSpec;
  const opened = await session.runtime();
  const progress = session.progress("answering");
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
}

function reportAnswers(who: string, { predictions, failures, cost }: TagAnswerRun, flags: AnswerTagFlags): number {
  for (const f of failures.slice(0, 5)) process.stderr.write(`eqa: ${f.question_id} not answered: ${f.error}\n`);
  const withAnswer = predictions.filter((p) => p.answer !== null).length;
  const predictionsFile = join(flags.out, "predictions.json");
  console.log(`${who}: ${withAnswer} of ${predictions.length} questions answered, ${predictions.length - withAnswer - failures.length} without an answer, ${failures.length} failed`);
  console.log(wroteLine(flags.out, ["predictions.json"], { tail: `; score it with eqa score-tag --questions ${flags.questions} --predictions ${predictionsFile} --out DIR` }));
  if (failures.length > 0) console.log("run the same command again to ask the failed questions again");
  console.log(`\n${formatRunCost(cost)}`);
  return failures.length > 0 ? 1 : 0;
}
