/**
 * The report's panel on how each run was made: per stage (answering, judging), the command
 * when the run recorded it, the eqakit version and dates, the models with their endpoints, the
 * modes, the counts, replies that were not answers by status, failures by reason, tokens and
 * dollars per model role, and the whole configuration as the summary holds it.
 */
import { z } from "zod";
import { formatDollars } from "../models/index.js";
import { Html, RUN_COLOURS, fmt, html } from "./html-parts.js";
import type { LoadedRun } from "./runs.js";

/** What one stage's summary says about how it ran. */
interface Stage {
  name: string;
  eqakitVersion?: unknown;
  createdAt?: unknown;
  wallTimeMs?: number;
  config?: Record<string, unknown>;
  counts?: Record<string, unknown>;
  replyStatuses?: unknown;
  usage?: unknown;
  failures: { questionId: string; error: string; status?: unknown }[];
}

function stagesOf(run: LoadedRun): Stage[] {
  const stages: Stage[] = [];
  if (run.answer) stages.push({ name: "answer", ...run.answer, counts: run.answer.counts });
  if (run.score) stages.push({ name: "judge (LLM-Match)", ...run.score, counts: run.score.counts });
  const tag = run.tag?.summary;
  if (tag) stages.push({ name: "structured judge (TAG-EQA)", ...tag, counts: tag.counts });
  if (run.otherSummary) stages.push({ name: run.kind, ...run.otherSummary, failures: [] });
  return stages;
}

/** Configuration keys that name a model (a string `provider/model`, or an object with its name and endpoint). */
const MODEL_KEYS = new Set(["model", "captioner", "judge", "rewardModel", "explorer", "vlm", "embedder", "detector"]);

interface NamedModel {
  role: string;
  name: string;
  endpoint?: string;
}

export function modelsOf(config: Record<string, unknown> | undefined): NamedModel[] {
  const out: NamedModel[] = [];
  for (const [key, value] of Object.entries(config ?? {})) {
    if (typeof value === "string" && MODEL_KEYS.has(key)) out.push({ role: key, name: value });
    else if (value === null && MODEL_KEYS.has(key)) out.push({ role: key, name: "none" });
    else if (typeof value === "object" && value !== null && "name" in value && typeof value.name === "string" && (MODEL_KEYS.has(key) || "provider" in value)) {
      out.push({ role: key, name: value.name, ...("baseURL" in value && typeof value.baseURL === "string" ? { endpoint: value.baseURL } : {}) });
    }
  }
  return out;
}

/** A configuration value as one short line: strings as they are, objects as compact JSON. */
function valueLine(value: unknown): string {
  if (typeof value === "string") return value;
  if (value === null || value === undefined) return "–";
  if (typeof value === "object" && "path" in value && typeof value.path === "string") return value.path;
  return JSON.stringify(value);
}

/** The settings a reader compares first: how the answers were made and judged. */
const MODE_KEYS = ["agent", "mode", "promptVariant", "forceGuess", "withoutGuess", "sampling", "parameters", "similarity", "grounded", "memory", "benchmark", "subset", "questions", "predictions", "framesRoot", "shard"];

/** Failures grouped by reason: the status when the reply was cut, filtered or refused, else the message without its numbers. */
export function failuresByReason(failures: readonly { error: string; status?: unknown }[]): [string, number][] {
  const counts = new Map<string, number>();
  for (const f of failures) {
    const reason = typeof f.status === "string" && f.status !== "" ? `reply ${f.status}` : f.error.replace(/\d+(\.\d+)?/g, "N").slice(0, 160);
    counts.set(reason, (counts.get(reason) ?? 0) + 1);
  }
  return [...counts].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
}

function statusCounts(value: unknown): [string, number][] {
  if (typeof value !== "object" || value === null) return [];
  return Object.entries(value).filter((e): e is [string, number] => typeof e[1] === "number" && e[1] > 0);
}

const processUsage = z.object({ thisProcess: z.object({ total: z.looseObject({ calls: z.number(), failures: z.number().default(0), promptTokens: z.number(), completionTokens: z.number() }) }) });

/** Every call of the process that wrote the summary (failed items' calls too), when it recorded them. */
function processCalls(usage: unknown): { calls: number; failures: number; tokens: number } | undefined {
  const total = processUsage.safeParse(usage).data?.thisProcess.total;
  return total && { calls: total.calls, failures: total.failures, tokens: total.promptTokens + total.completionTokens };
}

function commandOf(config: Record<string, unknown> | undefined): string | undefined {
  const command = config?.command;
  if (typeof command === "string") return command;
  if (Array.isArray(command) && command.every((part) => typeof part === "string")) return command.join(" ");
  return undefined;
}

function stageBlock(stage: Stage, runCommand: string | undefined): Html {
  const config = stage.config ?? {};
  const models = modelsOf(config);
  const command = commandOf(config) ?? runCommand;
  const modes = MODE_KEYS.filter((k) => k in config && config[k] !== null && config[k] !== undefined);
  const counts = Object.entries(stage.counts ?? {}).filter((e): e is [string, number] => typeof e[1] === "number");
  const statuses = statusCounts(stage.replyStatuses);
  const reasons = failuresByReason(stage.failures);
  const process = processCalls(stage.usage);
  const dated = [typeof stage.createdAt === "string" ? `finished ${stage.createdAt.replace("T", " ").replace(/\.\d+Z$/, " UTC")}` : "", stage.wallTimeMs !== undefined ? `in ${fmt(stage.wallTimeMs / 1000)} s` : "", typeof stage.eqakitVersion === "string" ? `eqakit ${stage.eqakitVersion}` : ""].filter((t) => t !== "");
  return html`<div class="stage"><h4>${stage.name}</h4><dl class="info">
${command ? html`<dt>command</dt><dd><code class="text">${command}</code></dd>` : html``}
${dated.length > 0 ? html`<dt>when</dt><dd>${dated.join(" ")}</dd>` : html``}
${models.length > 0 ? html`<dt>models</dt><dd>${models.map((m) => html`<div><span class="hint">${m.role}</span> ${m.name}${m.endpoint ? html` <span class="hint">at</span> <code>${m.endpoint}</code>` : html``}</div>`)}</dd>` : html``}
${modes.map((k) => html`<dt>${k}</dt><dd class="text">${valueLine(config[k])}</dd>`)}
${counts.length > 0 ? html`<dt>counts</dt><dd class="counts">${counts.map(([k, n]) => html`<span class="count" data-count="${k}">${k} <b>${n}</b></span> `)}</dd>` : html``}
${process ? html`<dt>calls made</dt><dd data-field="process-calls">${process.calls} call(s), ${process.failures} failed, ${process.tokens} tokens by the process that wrote this summary, failed items included (the cost counts every call in the run folder's ledger, calls.jsonl, earlier processes' included)</dd>` : html``}
<dt>replies not answers</dt><dd data-field="reply-statuses">${statuses.length === 0 ? "none" : statuses.map(([status, n]) => `${n} ${status}`).join(", ")}</dd>
<dt>failures</dt><dd data-field="failure-reasons">${reasons.length === 0 ? "none" : html`<ul class="reasons">${reasons.map(([reason, n]) => html`<li><b>${n}</b> <span class="text">${reason}</span></li>`)}</ul>`}</dd>
</dl><details><summary>configuration</summary><pre class="text config">${JSON.stringify(config, null, 2)}</pre></details></div>`;
}

function rolesTable(run: LoadedRun): Html {
  const rows = run.costs.flatMap(({ stage, cost }) => cost.roles.map((r) => html`<tr><td>${stage}</td><td>${r.role}</td><td>${r.model}</td><td class="num">${r.calls}</td><td class="num">${r.promptTokens}</td><td class="num">${r.completionTokens}</td><td class="num" data-value="${r.dollars ?? ""}">${formatDollars(r.dollars)}</td></tr>`));
  if (rows.length === 0) return html``;
  return html`<table class="grid compact"><thead><tr><th>stage</th><th>role</th><th>model</th><th>calls</th><th>prompt tokens</th><th>completion tokens</th><th>dollars</th></tr></thead><tbody>${rows}</tbody></table>`;
}

/** A run in a line, for its closed block: what answered and what judged. */
function synopsis(run: LoadedRun): string {
  const name = (value: unknown): string | undefined => (typeof value === "string" ? value : modelsOf({ judge: value })[0]?.name);
  const parts: string[] = [];
  const answer = run.answer?.config;
  if (answer) parts.push(`${String(answer.agent ?? "agent")}${typeof answer.model === "string" ? ` (${answer.model})` : ""}`);
  const score = run.score?.config;
  if (score) parts.push(`judge ${name(score.judge) ?? "?"}${typeof score.mode === "string" ? `, ${score.mode}` : ""}`);
  const tag = run.tag?.summary?.config;
  if (tag && typeof tag.agent === "string") parts.push(tag.agent);
  if (tag) parts.push(`structured judge ${name(tag.judge) ?? "none"}${typeof tag.similarity === "string" ? `, ${tag.similarity}` : ""}`);
  return parts.join(" · ");
}

/** The panel: one closed block per run, its line saying what answered and judged (click it to open the block). */
export function runInfoSection(runs: LoadedRun[]): Html {
  const blocks = runs.map((run, r) => {
    const stages = stagesOf(run);
    return html`<details class="run-info" data-run="${r}"><summary><i class="swatch" style="background:${RUN_COLOURS[r % RUN_COLOURS.length]!}"></i><b>${run.label}</b> <span class="synopsis">${synopsis(run)}</span> <span class="hint">${run.kind} · ${run.dir}</span></summary>${stages.length === 0 ? html`<p class="hint">No summary: nothing is known of how this run was made.</p>` : html`<div class="stages">${stages.map((stage) => stageBlock(stage, run.commands.at(-1)))}</div>`}${rolesTable(run)}</details>`;
  });
  return html`<section id="runs-info"><h2>Runs</h2>${blocks}</section>`;
}
