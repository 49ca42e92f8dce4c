/**
 * A stdio server of the built-in household simulator (JSON-RPC, see protocol.ts):
 *
 *   node --import tsx src/sim/server-main.ts --seed 3 [--width 320 --height 240 --hfov 90 --no-masks]
 *
 * Options for tests: `--hang-on <method>` never answers that method; `--die-on <method>` exits
 * with code 3 when it is called; `--garbage-on <method>` answers it with a line that is not JSON.
 */
import { Readable, Transform } from "node:stream";
import { HouseholdEnvironment } from "./household.js";
import { serveEnvironment } from "./stdio.js";

function flag(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

const number = (name: string, fallback: number): number => {
  const v = flag(name);
  return v === undefined ? fallback : Number(v);
};

const env = HouseholdEnvironment.fromSeed(number("seed", 0), {
  width: number("width", 320),
  height: number("height", 240),
  hfovDeg: number("hfov", 90),
  masks: !process.argv.includes("--no-masks"),
});

const hangOn = flag("hang-on");
const dieOn = flag("die-on");
const garbageOn = flag("garbage-on");
let rest = "";
const faults = new Transform({
  transform(chunk: Buffer, _encoding, done) {
    const lines = (rest + chunk.toString("utf8")).split("\n");
    rest = lines.pop() ?? "";
    for (const line of lines) {
      if (line.trim() === "") continue;
      const method = /"method":"([^"]+)"/.exec(line)?.[1];
      if (method !== undefined && method === dieOn) process.exit(3);
      if (method !== undefined && method === hangOn) continue;
      if (method !== undefined && method === garbageOn) {
        process.stdout.write("this is not json\n");
        continue;
      }
      this.push(`${line}\n`);
    }
    done();
  },
});
const input: Readable = hangOn || dieOn || garbageOn ? process.stdin.pipe(faults) : process.stdin;
await serveEnvironment(env, input, process.stdout);
