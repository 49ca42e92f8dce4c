import { Command, Option } from "commander";
import { portNumber } from "./options.js";
import { runFolders, startViewer } from "../report/index.js";

interface ViewFlags {
  port: number;
  host: string;
  token?: string;
}

export function viewCommand(): Command {
  return new Command("view")
    .description("browse runs in a local web viewer, live while they run: sort and filter questions, open one to read its transcript (every model call, the frames sent, an exploration's plan and steps), rate answers 1-5 for eqa judge-agreement, compare two runs")
    .argument("<run-dirs...>", "run folders of any eqa command that writes one (score, answer, run, explore, score-tag, answer-tag, rm score, rm bench, memory build, generate tag), or a folder holding run folders (eqa demo's)")
    .option("--port <n>", "the port to listen on (0: any free port)", portNumber, 8765)
    .option("--host <address>", "the address to bind (the viewer serves run contents: keep it local; any other address needs --token)", "127.0.0.1")
    .addOption(new Option("--token <secret>", "a secret every request must carry (Authorization: Bearer, or the printed URL's ?token= once per browser); required beyond loopback").env("EQA_VIEW_TOKEN"))
    .action(async (dirs: string[], flags: ViewFlags) => {
      const viewer = await startViewer({ runDirs: dirs, port: flags.port, host: flags.host, ...(flags.token !== undefined ? { token: flags.token } : {}) });
      // a folder of runs (eqa demo's) counts as each of its runs
      const runs = dirs.flatMap((d) => runFolders(d)).length;
      console.log(`eqa view: serving ${runs} run(s) at ${viewer.openUrl} (Ctrl-C to stop)`);
      await new Promise<void>((done) => {
        const stop = (): void => {
          void viewer.close().then(done);
        };
        process.once("SIGINT", stop);
        process.once("SIGTERM", stop);
      });
    });
}
