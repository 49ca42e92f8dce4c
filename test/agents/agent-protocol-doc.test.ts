import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { AGENT_METHODS, agentProtocolJsonSchemas } from "../../src/agents/index.js";
import { projectRoot } from "../helpers/paths.js";

describe("docs/agent-protocol.md", () => {
  test("shows, for every method, the JSON Schemas generated from the zod schemas that validate the messages", () => {
    const page = readFileSync(join(projectRoot, "docs", "agent-protocol.md"), "utf8");
    const shown = new Map([...page.matchAll(/<!-- schema (\S+) (params|result) -->\n```json\n([\s\S]*?)\n```/g)].map((m) => [`${m[1]} ${m[2]}`, JSON.parse(m[3]!) as unknown]));
    const generated = agentProtocolJsonSchemas();
    assert.deepEqual([...shown.keys()].sort(), Object.keys(AGENT_METHODS).flatMap((m) => [`${m} params`, `${m} result`]).sort());
    for (const [method, schemas] of Object.entries(generated)) {
      for (const part of ["params", "result"] as const) {
        assert.deepEqual(shown.get(`${method} ${part}`), schemas[part], `${method} ${part} differs: run node --import tsx scripts/agent-protocol-doc.ts`);
      }
    }
  });
});
