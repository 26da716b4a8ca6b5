/**
 * The CLI as a library: `run()`, the command declarations, the flag parser,
 * output and exit codes.
 *
 * @module
 */

export { COMMANDS, run } from "./run.ts";
export { CliError, describeError, ExitCode, exitCodeFor, UsageError } from "./errors.ts";
export type { ExitCodeValue } from "./errors.ts";
export {
  commonFlags,
  connectionFlags,
  formatFlag,
  group,
  leaf,
  platformClient,
} from "./command.ts";
export type { Command, CommandContext, LeafSpec } from "./command.ts";
export { kebab, parseDuration, parseFlags, parseTime, renderFlags } from "./flags.ts";
export type {
  FlagSpec,
  FlagSpecs,
  FlagType,
  ParsedFlags,
  ParseOptions,
  ParseResult,
} from "./flags.ts";
export { denoIo, FORMATS, Output, writeAll } from "./output.ts";
export type { Column, Format, Io, Writer } from "./output.ts";
