import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawn, type ChildProcess } from "node:child_process";
import { request } from "node:http";
import { cliEnv, collect, startCli } from "../helpers/cli.js";
import { temporaryDir } from "../helpers/paths.js";

/**
 * Standard-library clients send the whole body before they read a reply: Python's http.client
 * (which urllib uses) raises BrokenPipeError when the server answers and closes while it is
 * still writing. Each client below posts a body over the cap and prints what it read.
 */
const CLIENT = String.raw`
import http.client, json, sys, urllib.error, urllib.request
host, port, how = sys.argv[1], int(sys.argv[2]), sys.argv[3]
body = json.dumps({"query": ["x" * (5 * 1024 * 1024)], "labels": ["1"]}).encode()
try:
    if how == "urllib":
        request = urllib.request.Request("http://%s:%d/get_reward" % (host, port), data=body, headers={"content-type": "application/json"}, method="POST")
        try:
            urllib.request.urlopen(request, timeout=60)
            print(json.dumps({"status": 200}))
        except urllib.error.HTTPError as error:
            print(json.dumps({"status": error.code, "body": error.read().decode()}))
    else:
        connection = http.client.HTTPConnection(host, port, timeout=60)
        if how == "chunked":
            pieces = (body[i:i + 65536] for i in range(0, len(body), 65536))
            connection.request("POST", "/get_reward", body=pieces, headers={"content-type": "application/json"}, encode_chunked=True)
        else:
            connection.request("POST", "/get_reward", body=body, headers={"content-type": "application/json"})
        response = connection.getresponse()
        print(json.dumps({"status": response.status, "body": response.read().decode(), "connection": response.getheader("connection")}))
except Exception as error:
    print(json.dumps({"error": type(error).__name__, "detail": str(error)}))
`;

async function python(how: string, url: URL): Promise<{ status?: number; body?: string; connection?: string; error?: string; detail?: string }> {
  const result = await collect(spawn("python3", ["-c", CLIENT, url.hostname, url.port, how], { stdio: ["ignore", "pipe", "pipe"] }));
  assert.equal(result.code, 0, result.stderr);
  return JSON.parse(result.stdout) as { status?: number; body?: string; connection?: string; error?: string; detail?: string };
}

describe("eqa rm serve --max-body-bytes 4194304 and a 5 MB body from Python's standard library", () => {
  let server: ChildProcess;
  let url: URL;
  before(async () => {
    server = startCli(["rm", "serve", "--port", "0", "--max-body-bytes", "4194304"], cliEnv(temporaryDir()));
    url = await new Promise<URL>((resolve, reject) => {
      let out = "";
      server.stdout!.on("data", (d: Buffer) => {
        out += d.toString();
        const match = /listening on (http:\/\/[^/\s]+)\/get_reward/.exec(out);
        if (match) resolve(new URL(match[1]!));
      });
      server.on("exit", (code) => reject(new Error(`eqa rm serve exited with ${code}`)));
    });
  });
  after(() => {
    server.kill("SIGTERM");
  });

  for (const how of ["http.client", "urllib", "chunked"]) {
    test(`${how}: the client reads the 413 and its message, then the server closes the connection`, async () => {
      const reply = await python(how, url);
      assert.equal(reply.error, undefined, `${reply.error}: ${reply.detail ?? ""}`);
      assert.equal(reply.status, 413);
      assert.match(reply.body ?? "", /at most 4194304 are accepted \(--max-body-bytes\)/);
      if (how !== "urllib") assert.equal(reply.connection, "close");
    });
  }

  test("Expect: 100-continue (curl's way with large bodies): the 413 comes before the body is sent", async () => {
    const reply = await new Promise<{ status: number; body: string; continued: boolean }>((resolve, reject) => {
      let continued = false;
      const req = request(`${url.origin}/get_reward`, { method: "POST", headers: { expect: "100-continue", "content-length": String(5 * 1024 * 1024) } }, (res) => {
        let body = "";
        res.on("data", (d: Buffer) => (body += d.toString()));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body, continued }));
      });
      req.on("continue", () => {
        continued = true;
        req.destroy();
      });
      req.on("error", reject);
      req.flushHeaders();
    });
    assert.equal(reply.continued, false);
    assert.equal(reply.status, 413);
    assert.match(reply.body, /at most 4194304 are accepted/);
  });

  test("the server still answers after refusing them", async () => {
    const response = await fetch(`${url.origin}/get_reward`, { method: "POST", body: JSON.stringify({ query: ["<critique>ok</critique><score>7</score>"], labels: ["7"] }) });
    assert.equal(response.status, 200);
  });
});
