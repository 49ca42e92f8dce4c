import { CommanderError } from "commander";
import { OutputError, isUserError } from "../core/index.js";
import { buildProgram } from "./program.js";

/** Exit code for errors the user can fix (bad input, bad flags, unusable endpoint). */
const USAGE_ERROR = 2;
/** Exit code when results cannot be written (a full disk, a read-only folder): the run resumes once fixed. */
const OUTPUT_ERROR = 3;

export async function main(argv: string[] = process.argv): Promise<void> {
  try {
    await buildProgram().parseAsync(argv);
  } catch (error) {
    if (error instanceof CommanderError) {
      // help and --version exit 0; every other commander error is a usage error it already printed
      process.exitCode = error.exitCode === 0 ? 0 : USAGE_ERROR;
      return;
    }
    if (isUserError(error)) {
      process.stderr.write(`eqa: ${error.message}\n`);
      process.exitCode = error instanceof OutputError ? OUTPUT_ERROR : USAGE_ERROR;
      return;
    }
    throw error;
  }
}

await main();
