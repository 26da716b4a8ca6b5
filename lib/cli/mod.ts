/**
 * The CLI as a library: `run()` (arguments in, exit code out), the one
 * mapping from errors to exit codes, the output writer, the flag parser, and
 * the stop signals `main.ts` delivers. The commands themselves are loaded by
 * `run()` on demand.
 *
 * @example
 * ```ts
 * import { denoIo, run } from "./mod.ts";
 * const code = await run(["webhooks", "list", "--format", "ndjson"], { io: denoIo() });
 * ```
 *
 * @module
 */

export { run } from "./run.ts";
export type { CommandContext } from "./command.ts";
export { CliError, ExitCode, exitCodeFor, UsageError } from "./errors.ts";
export { denoIo, Output } from "./output.ts";
export type { Column, Format, Io, Writer } from "./output.ts";
export { environmentSource, parseFlags } from "./flags.ts";
export { parseDuration, parseDurationRange, parseTime } from "../core/durations.ts";
export type { DurationRange } from "../core/durations.ts";
export type {
  FlagSpec,
  FlagSpecs,
  FlagType,
  ParsedFlags,
  ParseOptions,
  ParseResult,
  ValueOf,
  ValueSource,
} from "./flags.ts";
export { loadValueSources } from "./config_sources.ts";
export type { LoadedSources, SourceInputs } from "./config_sources.ts";
export { STOP_SIGNALS, StopRequest, stopSignals } from "./stop_signals.ts";
export type { SignalHost, StopSignals, TakeSignals } from "./stop_signals.ts";
// Types the exports above name, re-exported so that this barrel documents them.
export type { BaseError } from "../core/mod.ts";
