import { CommanderError, type Command } from "commander";
import { OutputError, isUserError } from "../core/index.js";
import { withRunCommandLine } from "../store/index.js";
import { buildProgram } from "./program.js";

/** What every error the CLI prints for the user starts with: commander's own ("error: unknown option") and eqakit's. */
const ERROR_PREFIX = "eqa: ";

/** Commander's usage errors with eqakit's prefix instead of its own "error: ", on every command. */
function withErrorPrefix(command: Command): void {
  command.configureOutput({ outputError: (text, write) => write(text.replace(/^error: /, ERROR_PREFIX)) });
  command.commands.forEach(withErrorPrefix);
}

/** Exit code for errors the user can fix (bad input, bad flags, unusable endpoint). */
const USAGE_ERROR = 2;
/** Exit code when results cannot be written (a full disk, a read-only folder): the run resumes once fixed. */
const OUTPUT_ERROR = 3;

export async function main(argv: string[] = process.argv): Promise<void> {
  try {
    const program = buildProgram();
    withErrorPrefix(program);
    // the manifests of the run folders the command opens name its command line
    await withRunCommandLine(argv.slice(2), () => program.parseAsync(argv));
  } catch (error) {
    if (error instanceof CommanderError) {
      // help and --version exit 0; every other commander error is a usage error it already printed
      process.exitCode = error.exitCode === 0 ? 0 : USAGE_ERROR;
      return;
    }
    if (isUserError(error)) {
      process.stderr.write(`${ERROR_PREFIX}${error.message}\n`);
      process.exitCode = error instanceof OutputError ? OUTPUT_ERROR : USAGE_ERROR;
      return;
    }
    throw error;
  }
}

await main();
