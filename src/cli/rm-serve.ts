import { Command, Option } from "commander";
import { CONTRASTIVE_DEFAULTS, SERVER_DEFAULTS, startRewardServer } from "../reward/index.js";
import { finiteNumber, portNumber, positiveInteger, positiveSeconds } from "./options.js";

interface ServeFlags {
  host: string;
  port: number;
  token?: string;
  maxBodyBytes: number;
  maxBatch: number;
  groupSize?: number;
  groupTimeout: number;
  delta: number;
  mu: number;
  minAccuracy: number;
}

export function rmServeCommand(): Command {
  return new Command("serve")
    .description("serve C-GRPO rewards over OpenRLHF's remote reward-model protocol (POST /get_reward)")
    .option("--host <host>", "address to listen on (another than loopback needs --token)", SERVER_DEFAULTS.host)
    .option("--port <port>", "port (0: any free port)", portNumber, SERVER_DEFAULTS.port)
    .addOption(new Option("--token <token>", "bearer token clients must send").env("EQA_RM_TOKEN"))
    .option("--max-body-bytes <n>", "largest request body", positiveInteger, SERVER_DEFAULTS.maxBodyBytes)
    .option("--max-batch <n>", "most items in one request", positiveInteger, SERVER_DEFAULTS.maxBatch)
    .option("--group-size <g>", "the trainer's samples per prompt (OpenRLHF's --rollout.n_samples_per_prompt, TRL's num_generations, verl's rollout.n): hold each prompt's samples until all G are in, then compute the contrasts over them (unset: over each request's batch)", positiveInteger)
    .option("--group-timeout <seconds>", "answer a group that is still incomplete after this long, its rewards marked full_group false", positiveSeconds, SERVER_DEFAULTS.groupTimeoutMs / 1000)
    .option("--delta <d>", "δ of Eq. 4", finiteNumber, CONTRASTIVE_DEFAULTS.delta)
    .option("--mu <m>", "μ of Eq. 4", finiteNumber, CONTRASTIVE_DEFAULTS.mu)
    .option("--min-accuracy <h>", "H_min_acc: no boost for an original evaluation with R_a below it (0: Eq. 4 alone)", finiteNumber, CONTRASTIVE_DEFAULTS.minAccuracyForBoost)
    .action(async (flags: ServeFlags) => {
      const running = await startRewardServer({
        host: flags.host,
        port: flags.port,
        ...(flags.token ? { token: flags.token } : {}),
        maxBodyBytes: flags.maxBodyBytes,
        maxBatch: flags.maxBatch,
        ...(flags.groupSize !== undefined ? { groupSize: flags.groupSize } : {}),
        groupTimeoutMs: flags.groupTimeout * 1000,
        contrastive: { delta: flags.delta, mu: flags.mu, minAccuracyForBoost: flags.minAccuracy },
      });
      const grouping = flags.groupSize === undefined ? "" : `, groups of ${flags.groupSize} samples per prompt (waiting at most ${flags.groupTimeout} s)`;
      console.log(`reward server listening on ${running.url}/get_reward${flags.token ? " (bearer token required)" : ""}${grouping}`);
      const stop = (): void => {
        void running.close().then(() => process.exit(0));
      };
      process.once("SIGINT", stop);
      process.once("SIGTERM", stop);
    });
}
