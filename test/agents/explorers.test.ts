import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { Command } from "commander";
import { EXPLORERS, EXPLORER_NAMES, MIXED_AGENT_NAMES, answeringExplorerNames, createExplorer, explorerChoices, type Explorer, type ExplorerName } from "../../src/agents/index.js";
import { exploreCommand } from "../../src/cli/explore.js";
import { UserError } from "../../src/core/index.js";
import { CallPlan } from "../../src/models/index.js";

const registered = Object.entries(EXPLORERS) as [ExplorerName, Explorer][];

describe("the explorers' registry", () => {
  test("each registered explorer has every part", async () => {
    assert.ok(registered.length >= 4);
    for (const [name, explorer] of registered) {
      assert.equal(explorer.name, name, `${name}: registered under its own name`);
      assert.match(name, /^[a-z]+(-[a-z]+)*(:[a-z]+)?$/, name);
      for (const flag of ["answersWithVlm", "takesAnswerer", "ownAgent", "concurrent"] as const) assert.equal(typeof explorer[flag], "boolean", `${name}.${flag}`);
      assert.ok(!(explorer.answersWithVlm && explorer.takesAnswerer), `${name}: an explorer that answers itself takes no answering agent`);
      assert.ok(Array.isArray(explorer.roles) && explorer.roles.every((role) => typeof role === "string" && role.length > 0), `${name}.roles`);
      if (explorer.answersWithVlm) assert.ok(explorer.roles.length > 0, `${name}: the role its VLM's calls are recorded under`);
      if (explorer.about !== undefined) assert.ok(explorer.about.length > 3, `${name}.about`);
      if (explorer.observation) assert.ok(Number.isInteger(explorer.observation.width) && explorer.observation.width > 0 && Number.isInteger(explorer.observation.height) && explorer.observation.height > 0, `${name}.observation`);
      for (const part of ["promptHashes", "plan", "planNotes", "explore"] as const) assert.equal(typeof explorer[part], "function", `${name}.${part}`);
      const hashes = explorer.promptHashes();
      if (hashes !== undefined) {
        assert.ok(Object.keys(hashes).length > 0, `${name}: the prompts it sends`);
        for (const hash of Object.values(hashes)) assert.match(hash, /^[0-9a-f]{64}$/, `${name}: a prompt's sha256`);
      }
      for (const steps of [null, 0, 12]) {
        const notes = explorer.planNotes(steps);
        assert.ok(Array.isArray(notes) && notes.every((n) => typeof n === "string" && n.length > 0), `${name}.planNotes(${steps})`);
      }
      // with nothing pending, planning counts no step and no call
      const plan = new CallPlan(undefined, { batch: false });
      assert.equal(await explorer.plan([], { observation: { width: 64, height: 48 } }, plan), 0, `${name}.plan of no episode`);
      assert.deepEqual(plan.roles(), [], `${name}.plan of no episode calls nothing`);
    }
  });

  test("explorers are chosen by name from the registry; the user's own agent is chosen by its command, not by a name", () => {
    assert.deepEqual(EXPLORER_NAMES, registered.filter(([, e]) => !e.ownAgent).map(([name]) => name));
    for (const name of Object.keys(EXPLORERS)) assert.equal(createExplorer(name), EXPLORERS[name as ExplorerName]);
    assert.throws(() => createExplorer("walk"), (e: unknown) => e instanceof UserError && /no explorer named walk/.test(e.message));
    assert.throws(() => createExplorer("toString"), UserError, "only the registry's own names");
    assert.deepEqual(answeringExplorerNames(), EXPLORER_NAMES.filter((name) => EXPLORERS[name].takesAnswerer));
  });

  test("eqa explore's --agent choices come from the registry", () => {
    const command: Command = exploreCommand();
    const agent = command.options.find((o) => o.long === "--agent");
    assert.ok(agent);
    assert.ok(agent.description.startsWith(explorerChoices()), agent.description);
    for (const name of EXPLORER_NAMES) {
      assert.ok(agent.description.includes(name), `--help names ${name}`);
      assert.equal(agent.parseArg?.(name, undefined), name);
    }
    // beside the explorers, the built-in agents of Mixed EQA sets, which run only those
    assert.throws(() => agent.parseArg?.("walk", undefined), (e: unknown) => e instanceof Error && e.message === `expected one of: ${[...EXPLORER_NAMES, ...MIXED_AGENT_NAMES].join(", ")}`);
    // an explorer of the user's own is a command or a module, not one of the names
    assert.equal(typeof agent.parseArg?.("./my-agent.mjs", undefined), "object");
  });
});
