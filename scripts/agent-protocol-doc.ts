/**
 * Writes the JSON Schemas of docs/agent-protocol.md from the zod schemas that validate the
 * protocol's messages: each fenced block after a `<!-- schema METHOD params|result -->` line
 * is replaced. Run with `node --import tsx scripts/agent-protocol-doc.ts`;
 * test/agents/agent-protocol-doc.test.ts checks that the page is up to date.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { agentProtocolJsonSchemas } from "../src/agents/index.js";

const page = join(dirname(fileURLToPath(import.meta.url)), "..", "docs", "agent-protocol.md");
const schemas = agentProtocolJsonSchemas();
const text = readFileSync(page, "utf8").replace(/(<!-- schema (\S+) (params|result) -->\n)```json\n(?:[\s\S]*?\n)?```/g, (_all, marker: string, method: string, part: "params" | "result") => {
  const schema = schemas[method]?.[part];
  if (schema === undefined) throw new Error(`docs/agent-protocol.md names an unknown method ${method}`);
  return `${marker}\`\`\`json\n${JSON.stringify(schema, null, 2)}\n\`\`\``;
});
writeFileSync(page, text);
