/** Python agents that tests write on the fly, built on eqakit's one-file client in clients/python. */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { projectRoot } from "./paths.js";

/** The client's folder, which every such agent puts first on its `sys.path`. */
export const pythonClientDir = join(projectRoot, "clients", "python");

/** What a test's agent is made of: the modules it imports (`sys` among them), the names it takes from `eqakit_agent`, and the rest of its source. */
export interface PythonAgentSource {
  modules: readonly string[];
  names: readonly string[];
  /** Its classes and the `serve(…)` call, after the imports. */
  body: string;
}

/** Writes the agent to `dir/file` and returns its path. */
export function writePythonAgent(dir: string, file: string, agent: PythonAgentSource): string {
  const path = join(dir, file);
  writeFileSync(path, `import ${agent.modules.join(", ")}\nsys.path.insert(0, ${JSON.stringify(pythonClientDir)})\nfrom eqakit_agent import ${agent.names.join(", ")}\n${agent.body}`);
  return path;
}
