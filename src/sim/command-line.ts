import { parse } from "shell-quote";
import { UserError, type InputLocation } from "../core/index.js";

/** A program and its arguments, ready for `spawn` without a shell. */
export interface CommandLine {
  command: string;
  args: string[];
}

const NO_SHELL_HINT = "the command is started without a shell: quote the character to pass it as an argument, or put the pipeline in a script and give the script's path";

/**
 * Splits a command line the way a POSIX shell splits words: quotes ('…', "…") and backslashes
 * keep spaces inside one word (`python3 "my env/run.py" {scene}`), and `$NAME` is replaced by
 * the variable's value in `env` (empty when unset). No shell runs, so what only a shell could
 * do is refused with a UserError at `at`: operators (`|`, `&&`, `;`, `>`, `<`, `(`), file
 * patterns (`*`, `?`) and comments.
 */
export function parseCommandLine(line: string, at: InputLocation = {}, env: NodeJS.ProcessEnv = process.env): CommandLine {
  const words: string[] = [];
  for (const token of parse(line, (name) => env[name] ?? "")) {
    if (typeof token === "string") {
      words.push(token);
    } else if ("comment" in token) {
      throw new UserError(`"#${token.comment}" is a shell comment`, at, NO_SHELL_HINT);
    } else if (token.op === "glob") {
      throw new UserError(`"${token.pattern}" is a file pattern that only a shell would expand`, at, NO_SHELL_HINT);
    } else {
      throw new UserError(`"${token.op}" is a shell operator`, at, NO_SHELL_HINT);
    }
  }
  const [command, ...args] = words;
  if (command === undefined || command === "") throw new UserError("expected a command", at, 'e.g. python3 "my env/run.py" --scene {scene}');
  return { command, args };
}
