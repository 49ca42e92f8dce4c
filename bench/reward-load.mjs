// Load generator for the reward server, run in its own process: `connections` keep-alive
// clients, each sending one request after another (batch size 1) until `requests` have been
// sent or `seconds` have passed. Prints one JSON line of figures.
import { Agent, request } from "node:http";

const [url, connections, requests, seconds, warmup] = [process.argv[2], Number(process.argv[3]), Number(process.argv[4]), Number(process.argv[5]), Number(process.argv[6] ?? 500)];
const agent = new Agent({ keepAlive: true, maxSockets: connections });
const target = new URL("/get_reward", url);
const prompt = "<|im_start|>user\nEvaluate the agent's response to: Where is the black backpack?<|im_end|>\n<|im_start|>assistant\n";
const bodies = Array.from({ length: 11 }, (_, s) =>
  Buffer.from(JSON.stringify({ query: [`${prompt}<critique>The agent located the backpack next to the chair; the frames show it there.</critique><score>${s}</score><|im_end|>`], prompts: [prompt], labels: [JSON.stringify({ score: 7, variant: "original" })] })),
);

function once(i) {
  return new Promise((resolve, reject) => {
    const body = bodies[i % bodies.length];
    const started = process.hrtime.bigint();
    const req = request(target, { method: "POST", agent, headers: { "content-type": "application/json", "content-length": body.length } }, (res) => {
      let size = 0;
      res.on("data", (c) => (size += c.length));
      res.on("end", () => resolve({ ok: res.statusCode === 200 && size > 0, ns: Number(process.hrtime.bigint() - started) }));
    });
    req.on("error", reject);
    req.end(body);
  });
}

async function run(total, limitMs, record) {
  let next = 0;
  let errors = 0;
  const latencies = [];
  const deadline = Date.now() + limitMs;
  const worker = async () => {
    while (next < total && Date.now() < deadline) {
      const i = next++;
      try {
        const r = await once(i);
        if (!r.ok) errors++;
        if (record) latencies.push(r.ns);
      } catch {
        errors++;
      }
    }
  };
  const started = process.hrtime.bigint();
  await Promise.all(Array.from({ length: connections }, worker));
  return { sent: next, errors, latencies, seconds: Number(process.hrtime.bigint() - started) / 1e9 };
}

await run(warmup, 5000, false);
const result = await run(requests, seconds * 1000, true);
const sorted = Float64Array.from(result.latencies).sort();
const pct = (q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] / 1e6;
console.log(JSON.stringify({ connections, requests: result.sent, errors: result.errors, seconds: result.seconds, requestsPerSecond: result.sent / result.seconds, p50Ms: pct(0.5), p90Ms: pct(0.9), p99Ms: pct(0.99), maxMs: sorted[sorted.length - 1] / 1e6 }));
agent.destroy();
