/**
 * `eqa agent check`'s mixed suite, for an agent that says it supports `mixed`: a tiny Mixed EQA
 * set made in a temporary folder with the generator (home 0, one recorded day with one task, two
 * changes while away, one question per category at most; offline, small frames), then one of its
 * episodes run through the mixed run's own loop (`exploreMixedSet`, the same as `eqa explore
 * --episodes SET/episodes.json --agent …`): the reset carries the day's history, the agent steps
 * in the present home and answers or stops; then, for a process, the protocol's robustness checks.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ExternalActiveAgent, checkModel, describeFailure, handshake, robustness, type AgentCheck, type AgentCheckOptions, type ExternalAgentSpec } from "../agents/index.js";
import { exploreMixedSet } from "../eval/index.js";
import { buildMixedSet } from "./mixed/index.js";
import { loadMixedHistory, recallMixedDay } from "./mixed-history.js";

/** Most actions of the check's episode. */
const CHECK_STEPS = 40;
const CHECK_OBSERVATION = { width: 64, height: 48 };

/** Makes the tiny set in `dir`; returns its episodes.json, holding one episode that needs the present when the set has one. */
export async function tinyMixedSet(dir: string): Promise<{ file: string; days: number; frames: number; actions: number }> {
  const built = await buildMixedSet(dir, { seeds: [0], days: 1, changes: 2, tasksPerDay: 1, perCategory: 1, seed: 0 });
  const episode = built.set.episodes.find((e) => !e.history_answers) ?? built.set.episodes[0];
  if (!episode) throw new Error("the generator made no question for the check's home");
  const file = join(dir, "episodes.json");
  writeFileSync(file, `${JSON.stringify({ ...built.set, episodes: [episode] }, null, 2)}\n`);
  const history = await loadMixedHistory(built.set.homes[0]!, dir, file);
  return { file, days: history.days.length, frames: history.days.reduce((n, d) => n + d.frameCount, 0), actions: history.days.reduce((n, d) => n + d.actions.length, 0) };
}

/** The mixed suite (see the module comment); every check's name starts with "mixed:". */
export async function checkMixedAgent(spec: ExternalAgentSpec, options: AgentCheckOptions = {}): Promise<AgentCheck[]> {
  const timeoutMs = options.timeoutMs ?? 30_000;
  const checks: AgentCheck[] = [];
  const dir = mkdtempSync(join(tmpdir(), "eqakit-agent-check-mixed-"));
  const agent = new ExternalActiveAgent(spec, { task: "mixed", model: checkModel(), timeoutMs, settings: { maxSteps: CHECK_STEPS, episodeTimeMs: null } });
  try {
    const set = await tinyMixedSet(join(dir, "set"));
    const episodeCheck = `mixed: reset with a history (${set.days} day, ${set.frames} frames, ${set.actions} actions of its own), steps in the present home and its answer`;
    try {
      const run = await exploreMixedSet({ setFile: set.file, agent: { own: agent }, outDir: join(dir, "run"), maxSteps: CHECK_STEPS, observation: CHECK_OBSERVATION }, { history: loadMixedHistory, recall: recallMixedDay });
      checks.push({ ...handshake(agent), name: "mixed: initialize" });
      const r = run.records[0]!;
      const end = r.stop === "answered" ? `answered ${JSON.stringify(r.answer)}${run.summary.counts.correct > 0 ? " (right)" : ""}` : r.stop === "stopped" ? "stopped without an answer" : `was ended by the ${r.stop === "time" ? "time" : "step"} budget`;
      const passed = r.error === null && r.stop !== "budget";
      checks.push({ name: episodeCheck, passed, detail: r.error ?? `${r.pathLengthSteps} action(s), ${(r.pathLengthM ?? 0).toFixed(2)} m, ${r.frames} frame(s), then ${end}${r.stop === "budget" ? ": an agent ends its episode by answering or stopping" : ""}` });
    } catch (error) {
      if (checks.length === 0) checks.push({ ...handshake(agent, error), name: "mixed: initialize" });
      checks.push({ name: episodeCheck, passed: false, detail: describeFailure(error) });
    }
  } finally {
    await agent.close();
    rmSync(dir, { recursive: true, force: true });
  }
  if (spec.kind === "exec") checks.push(...(await robustness(spec.command, spec.args, timeoutMs, agent.initializeParams())).map((c) => ({ ...c, name: `mixed: ${c.name}` })));
  return checks;
}
