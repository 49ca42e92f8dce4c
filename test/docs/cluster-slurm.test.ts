/**
 * docs/cluster.md's recipe on a real single-node Slurm: the job array, the merge job and the
 * submit lines are read from the page (the blocks after `<!-- cluster-recipe: NAME -->`) and
 * run as written, by `slurmctld`, `slurmd` and `munged` started here on loopback with state in a
 * temporary folder. A loopback model server answers every question but one, which fails until
 * its task is requeued. The merged run must equal an unsharded run, file for file.
 *
 * Skipped, saying why, where Slurm and munge are not installed (`apt-get install slurm-wlm
 * munge`; .ci/run installs them).
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { chmodSync, existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { createServer, type AddressInfo } from "node:net";
import { availableParallelism, userInfo } from "node:os";
import { delimiter, join } from "node:path";
import { canonicalJson } from "../../src/core/index.js";
import { cliEnv, collect, type CliResult } from "../helpers/cli.js";
import { writeRgbEpisode } from "../helpers/frames.js";
import { lastUserText, openAiReply, withModelServer, type ReceivedRequest, type ScriptedReply } from "../helpers/model-server.js";
import { projectRoot, readRawBenchmark, temporaryDir } from "../helpers/paths.js";

const DAEMONS = ["munged", "slurmctld", "slurmd", "sbatch", "squeue", "scontrol", "scancel", "sinfo"];
const SEARCH = [...(process.env.PATH ?? "").split(delimiter), "/usr/sbin", "/sbin"];

function which(name: string): string | undefined {
  return SEARCH.map((dir) => join(dir, name)).find((path) => existsSync(path));
}

const missing = DAEMONS.filter((name) => which(name) === undefined);
const skip = missing.length > 0 ? `Slurm and munge are not installed (no ${missing.join(", ")}): apt-get install slurm-wlm munge` : false;

/** The blocks of docs/cluster.md marked `<!-- cluster-recipe: NAME -->`, by name. */
function recipe(): Map<string, string> {
  const page = readFileSync(join(projectRoot, "docs", "cluster.md"), "utf8");
  const blocks = new Map<string, string>();
  for (const match of page.matchAll(/<!-- cluster-recipe: (\S+) -->\n```bash\n([\s\S]*?)```/g)) blocks.set(match[1]!, match[2]!);
  return blocks;
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** A single-node Slurm with its own munge, ports and state folders; `stop` ends every daemon it started. */
interface Cluster {
  env: NodeJS.ProcessEnv;
  run(command: string, args: string[], cwd?: string): string;
  waitForJobs(what: string): Promise<void>;
  stop(): Promise<void>;
}

async function startCluster(dir: string, env: NodeJS.ProcessEnv): Promise<Cluster> {
  const daemons: ChildProcess[] = [];
  const output: string[] = [];
  const start = (name: string, args: string[]): void => {
    const child = spawn(which(name)!, args, { env, stdio: ["ignore", "pipe", "pipe"] });
    child.stdout?.on("data", (d: Buffer) => output.push(`${name}: ${d.toString()}`));
    child.stderr?.on("data", (d: Buffer) => output.push(`${name}: ${d.toString()}`));
    daemons.push(child);
  };
  const killAll = (): void => {
    for (const child of daemons) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  };
  process.once("exit", killAll);
  const stop = async (): Promise<void> => {
    spawnSync(which("scancel")!, ["--user", userInfo().username], { env, stdio: "ignore" });
    for (const child of [...daemons].reverse()) {
      if (child.exitCode !== null || child.signalCode !== null) continue;
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.kill("SIGTERM");
      await Promise.race([exited, sleep(5000)]);
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    }
    process.removeListener("exit", killAll);
  };
  const run = (command: string, args: string[], cwd = dir): string => {
    const result = spawnSync(which(command)!, args, { env: clusterEnv, cwd, encoding: "utf8" });
    if (result.status !== 0) throw new Error(`${command} ${args.join(" ")} exited ${result.status}: ${result.stderr}\n${output.join("")}`);
    return result.stdout;
  };

  const munge = join(dir, "munge");
  mkdirSync(munge, { recursive: true, mode: 0o700 });
  writeFileSync(join(munge, "munge.key"), randomBytes(1024), { mode: 0o600 });
  const socket = join(munge, "munge.socket");
  for (const sub of ["state", "spool"]) mkdirSync(join(dir, sub));
  const user = userInfo().username;
  const conf = join(dir, "slurm.conf");
  writeFileSync(
    conf,
    [
      "ClusterName=eqakit-test",
      `SlurmctldHost=localhost(127.0.0.1)`,
      `SlurmctldPort=${await freePort()}`,
      `SlurmdPort=${await freePort()}`,
      "AuthType=auth/munge",
      "CryptoType=crypto/munge",
      `AuthInfo=socket=${socket}`,
      "ProctrackType=proctrack/linuxproc",
      "TaskPlugin=task/none",
      "MpiDefault=none",
      "SwitchType=switch/none",
      "JobAcctGatherType=jobacct_gather/none",
      "AccountingStorageType=accounting_storage/none",
      "JobCompType=jobcomp/none",
      "SchedulerType=sched/builtin",
      "SelectType=select/cons_tres",
      "SelectTypeParameters=CR_Core",
      "ReturnToService=2",
      "MailProg=/bin/true",
      `SlurmUser=${user}`,
      `SlurmdUser=${user}`,
      `StateSaveLocation=${join(dir, "state")}`,
      `SlurmdSpoolDir=${join(dir, "spool")}`,
      `SlurmctldPidFile=${join(dir, "slurmctld.pid")}`,
      `SlurmdPidFile=${join(dir, "slurmd.pid")}`,
      `SlurmctldLogFile=${join(dir, "slurmctld.log")}`,
      `SlurmdLogFile=${join(dir, "slurmd.log")}`,
      `NodeName=eqakit-node NodeHostname=localhost NodeAddr=127.0.0.1 CPUs=${Math.max(2, availableParallelism())} State=UNKNOWN`,
      "PartitionName=eqakit Nodes=eqakit-node Default=YES MaxTime=INFINITE State=UP",
      "",
    ].join("\n"),
  );
  const clusterEnv: NodeJS.ProcessEnv = { ...env, SLURM_CONF: conf };

  try {
    start("munged", ["-F", "--force", `--key-file=${join(munge, "munge.key")}`, `--socket=${socket}`, `--pid-file=${join(munge, "munged.pid")}`, `--log-file=${join(munge, "munged.log")}`, `--seed-file=${join(munge, "munged.seed")}`]);
    for (let i = 0; i < 100 && !existsSync(socket); i++) await sleep(100);
    assert.ok(existsSync(socket), `munged did not start: ${output.join("")}`);
    chmodSync(munge, 0o755);
    start("slurmctld", ["-D", "-i", "-f", conf]);
    start("slurmd", ["-D", "-N", "eqakit-node", "-f", conf]);
    let state = "";
    for (let i = 0; i < 150 && state !== "idle"; i++) {
      await sleep(200);
      state = spawnSync(which("sinfo")!, ["-h", "-o", "%t"], { env: clusterEnv, encoding: "utf8" }).stdout?.trim() ?? "";
    }
    assert.equal(state, "idle", `the Slurm node did not come up: ${output.join("")}`);
  } catch (error) {
    await stop();
    throw error;
  }
  return {
    env: clusterEnv,
    run,
    async waitForJobs(what) {
      for (let i = 0; i < 600; i++) {
        if (run("squeue", ["-h", "-o", "%i"]).trim() === "") return;
        await sleep(200);
      }
      assert.fail(`${what}: jobs still queued after 120 s: ${run("squeue", [])}`);
    },
    stop,
  };
}

const readJson = (path: string): unknown => JSON.parse(readFileSync(path, "utf8"));
const readLines = (path: string): Record<string, unknown>[] =>
  readFileSync(path, "utf8")
    .split("\n")
    .filter((l) => l !== "")
    .map((l) => JSON.parse(l) as Record<string, unknown>);

/**
 * What two runs of the same work may differ in: when and how fast it ran, how the processes ran,
 * and how many records a resumed process found (the requeued task resumed its shard, the
 * unsharded run resumed all of it).
 */
const UNCOMPARED = new Set(["at", "finishedAt", "createdAt", "updatedAt", "wallTimeMs", "latencyMs", "thisProcess", "cache", "shard", "reused"]);

function comparable(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(comparable);
  if (typeof value !== "object" || value === null) return value;
  return Object.fromEntries(Object.entries(value).filter(([k]) => !UNCOMPARED.has(k)).map(([k, v]) => [k, comparable(v)]));
}

/**
 * A file of a run as comparable content: records by question id (the standing one), other JSONL
 * (the ledger of model calls) as a sorted list, JSON without times; of the manifest, what the
 * run computed with (its command line, folder and inputs say how it was made).
 */
function contentOf(path: string): unknown {
  if (path.endsWith(".jsonl")) {
    const records = readLines(path);
    if (records.every((r) => typeof r.questionId === "string")) return new Map(records.map((r) => [String(r.questionId), comparable(r)]));
    return records.map((r) => canonicalJson(comparable(r))).sort();
  }
  const value = comparable(readJson(path));
  if (path.endsWith("manifest.json") && typeof value === "object" && value !== null) {
    const { kind, settings, settingsHash } = value as Record<string, unknown>;
    return { kind, settings, settingsHash };
  }
  return value;
}

/** The files of an unsharded run that a merged run writes too; the merged run adds merge.json. */
function assertSameRun(merged: string, whole: string): void {
  const own = new Set(["commands.jsonl"]);
  const files = readdirSync(whole).filter((name) => !own.has(name));
  assert.deepEqual(
    readdirSync(merged).filter((name) => !own.has(name) && name !== "merge.json").sort(),
    [...files].sort(),
    "the merged run holds the files of an unsharded run",
  );
  for (const name of files) assert.deepEqual(contentOf(join(merged, name)), contentOf(join(whole, name)), name);
}

describe("docs/cluster.md on a single-node Slurm", () => {
  test("the job array and the merge job, as written: a failed item merged with exit 1, its task requeued, merged again equal to an unsharded run; an array of one task refused in a shard's folder, an array with gaps in every task", { skip, timeout: 170_000 }, async () => {
    const blocks = recipe();
    for (const name of ["answer.sh", "merge.sh", "submit", "requeue"]) assert.ok(blocks.has(name), `docs/cluster.md has the ${name} block`);
    const home = temporaryDir("eqakit-slurm-");
    const work = join(home, "work");
    mkdirSync(work);

    // the benchmark, two episodes' frames, and the eqa command on the PATH (as npm link puts it there)
    const all = readRawBenchmark();
    const episodes = [...new Set(all.map((q) => q.episode_history))].slice(0, 2);
    const questions = all.filter((q) => episodes.includes(q.episode_history)).slice(0, 12);
    writeFileSync(join(work, "open-eqa-v0.json"), JSON.stringify(questions));
    const frames = join(home, "frames");
    for (const episode of episodes) await writeRgbEpisode(join(frames, episode), 4, 64, 48);
    const bin = join(home, "bin");
    mkdirSync(bin);
    const tsx = import.meta.resolve("tsx");
    writeFileSync(join(bin, "eqa"), `#!/bin/sh\nexec "${process.execPath}" --import "${tsx}" "${join(projectRoot, "src", "cli", "main.ts")}" "$@"\n`, { mode: 0o755 });

    const failing = questions[5]!.question;
    let broken = true;
    const script = (request: ReceivedRequest): ScriptedReply => {
      const text = lastUserText(request) + JSON.stringify(request.body);
      if (broken && text.includes(failing)) return { status: 400, body: { error: { message: "this request is refused until the task is requeued", type: "invalid_request_error" } } };
      return openAiReply(`A: thing number ${text.length % 7}`);
    };

    await withModelServer(script, async (server) => {
      const env = cliEnv(home, { PATH: `${bin}${delimiter}${process.env.PATH ?? ""}`, FRAMES: frames, MODEL: "openai/gpt-4o", VLM_URL: `${server.url}/v1`, OPENAI_API_KEY: "sk-test" });
      const cluster = await startCluster(join(home, "slurm"), env);
      try {
        for (const name of ["answer.sh", "merge.sh"]) writeFileSync(join(work, name), blocks.get(name)!, { mode: 0o755 });
        // the unsharded run (beside the array, with the model still refusing the one question)
        const unsharded = ["answer", "--benchmark", "open-eqa-v0.json", "--frames", frames, "--agent", "vlm", "--model", "openai/gpt-4o", "--model-base-url", `${server.url}/v1`, "--no-cache", "--out", join(home, "whole")];
        const runUnsharded = (): Promise<CliResult> => collect(spawn(join(bin, "eqa"), unsharded, { env, cwd: work, stdio: ["ignore", "pipe", "pipe"] }));
        const submitted = cluster.run("bash", ["-c", `${blocks.get("submit")!}\necho "array job $array"`], work);
        const array = /array job (\d+)/.exec(submitted)?.[1];
        const firstMerge = /Submitted batch job (\d+)/.exec(submitted)?.[1];
        assert.ok(array && firstMerge, submitted);
        const wholeRun = runUnsharded();
        await cluster.waitForJobs("the array and the merge job");
        const whole = await wholeRun;
        assert.equal(whole.code, 1, whole.stderr);
        assert.match(whole.stdout, /1 failed/);

        const shards = readdirSync(join(work, "runs", "answer")).filter((name) => name.startsWith("shard-")).sort();
        assert.equal(shards.length, 8, `one run directory per task: ${shards.join(", ")}`);
        const logs = readdirSync(join(work, "logs"));
        assert.equal(logs.filter((name) => name.startsWith(`answer-${array}_`)).length, 8, logs.join(", "));
        const failedShard = shards.find((name) => (readJson(join(work, "runs", "answer", name, "summary.json")) as { counts: { failed: number } }).counts.failed > 0);
        assert.ok(failedShard, "the refused question failed in its shard");
        const task = failedShard.slice("shard-".length);
        assert.match(cluster.run("scontrol", ["-o", "show", "job", `${array}_${task}`]), /ExitCode=1:0/);
        // afterany: the merge job ran although a task exited 1, merged, and exited 1 for the failed item
        assert.match(cluster.run("scontrol", ["-o", "show", "job", firstMerge]), /JobState=FAILED .*ExitCode=1:0/);
        assert.match(readFileSync(join(work, "logs", `merge-${firstMerge}.out`), "utf8"), /merged 8 shard\(s\)/);
        assertSameRun(join(work, "runs", "answer", `merged-${firstMerge}`), join(home, "whole"));

        // the model is fixed: requeue the task as the page says, merge again (and resume the unsharded run)
        broken = false;
        const requeue = blocks.get("requeue")!.replaceAll("4242_3", `${array}_${task}`);
        cluster.run("bash", ["-c", requeue], work);
        const againRun = runUnsharded();
        await cluster.waitForJobs("the requeued task");
        const secondMerge = cluster.run("sbatch", ["--parsable", "merge.sh"], work).trim();
        // and sbatch --array=N to redo one shard: an array of one task (shard 0/1), refused in shard N's folder
        const one = cluster.run("sbatch", ["--parsable", `--array=${task}`, "answer.sh"], work).trim();
        // and an array with gaps, refused in every task (Slurm gives each MIN 1, MAX 9, COUNT 3)
        const gaps = cluster.run("sbatch", ["--parsable", "--array=1,5,9", "answer.sh"], work).trim();
        await cluster.waitForJobs("the second merge job, the array of one task and the array with gaps");
        const again = await againRun;
        assert.equal(again.code, 0, again.stderr);
        assert.match(cluster.run("scontrol", ["-o", "show", "job", secondMerge]), /JobState=COMPLETED .*ExitCode=0:0/);
        assertSameRun(join(work, "runs", "answer", `merged-${secondMerge}`), join(home, "whole"));

        const log = readFileSync(join(work, "logs", `answer-${one}_${task}.out`), "utf8");
        assert.match(log, /a job array of one task works on every item/);
        assert.match(log, new RegExp(`shard-${task}: holds shard ${task}/8 of a run, not shard 0/1`));
        assert.match(cluster.run("scontrol", ["-o", "show", "job", `${one}_${task}`]), /ExitCode=2:0/);
        for (const id of ["1", "5", "9"]) {
          assert.match(readFileSync(join(work, "logs", `answer-${gaps}_${id}.out`), "utf8"), /the job array's 3 tasks \(1 to 9\) are not one range with one step/, `task ${id}`);
          assert.match(cluster.run("scontrol", ["-o", "show", "job", `${gaps}_${id}`]), /ExitCode=2:0/, `task ${id}`);
        }
        assert.ok(!existsSync(join(work, "runs", "answer", "shard-9")), "nothing written by the array with gaps");
      } finally {
        await cluster.stop();
      }
    });
  });
});
