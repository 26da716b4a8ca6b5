/**
 * The CLI's error base and the one mapping from errors to exit codes
 * (`../shared/spec/cli.md`, "Exit codes"). Nothing else decides an exit code.
 *
 * @module
 */

import { BaseError, type BaseErrorOptions, messageOf, walk } from "../core/mod.ts";
// Not the mod.ts barrels: these two files are light, and keep viem and the
// platform client off the --help path.
import {
  CredentialsError,
  PlatformApiError,
  PlatformResponseError,
  PlatformTimeoutError,
  PlatformUnreachableError,
} from "../platform/errors.ts";
import { ChildNotFoundError, ChildStartError, SocketPathError } from "../rpc/errors.ts";
import { EmulatorConfigError } from "../emulator/errors.ts";
import { BreakerError } from "../breaker/errors.ts";

/** Exit codes of `service`, exactly as cli.md defines them. */
export const ExitCode = {
  ok: 0,
  failed: 1,
  usage: 2,
  auth: 3,
  notFound: 4,
  rateLimited: 5,
  platform: 6,
  timeout: 7,
  suspension: 8,
} as const;

/**
 * An error whose message is meant for the user as it is: one line that says
 * what failed and what to do. `exitCode` defaults to 1.
 *
 * @example
 * ```ts
 * throw new CliError('Cannot read "log.ndjson": no such file. Check the path.', 1);
 * ```
 */
export class CliError extends BaseError {
  /** The process exit code this error maps to. */
  readonly exitCode: number;
  /** `message` is shown as it is; `exitCode` defaults to 1. */
  constructor(message: string, exitCode: number = ExitCode.failed, options?: BaseErrorOptions) {
    super(message, options);
    this.name = "CliError";
    this.exitCode = exitCode;
  }
}

/**
 * Bad command-line usage: unknown flag, missing or malformed value, missing
 * credentials. Always exit code 2.
 *
 * @example
 * ```ts
 * throw new UsageError('Unknown flag "--fo". Run `service webhooks list --help`.');
 * ```
 */
export class UsageError extends CliError {
  /** `message` is shown as it is. */
  constructor(message: string, options?: BaseErrorOptions) {
    super(message, ExitCode.usage, options);
    this.name = "UsageError";
  }
}

/**
 * Maps any thrown value to the exit code of cli.md. This is the only place
 * that does so.
 *
 * @example
 * ```ts
 * exitCodeFor(new UsageError("x")); // 2
 * ```
 */
export function exitCodeFor(error: unknown): number {
  if (error instanceof CliError) return error.exitCode;
  if (error instanceof CredentialsError) return ExitCode.usage;
  if (error instanceof EmulatorConfigError) return ExitCode.usage;
  if (error instanceof SocketPathError) return ExitCode.usage;
  if (error instanceof ChildNotFoundError) return 127; // as shells do
  if (error instanceof ChildStartError) return 126;
  if (error instanceof PlatformApiError) {
    const s = error.status;
    if (s === 401 || s === 403) return ExitCode.auth;
    if (s === 404) return ExitCode.notFound;
    if (s === 429) return ExitCode.rateLimited;
    if (s === 408) return ExitCode.timeout;
    if (s >= 500) return ExitCode.platform;
    // A redirect is not followed (signed requests go nowhere else): the API is not at that
    // address, which for the caller is the platform unreachable there.
    if (s >= 300 && s < 400) return ExitCode.platform;
    return ExitCode.failed;
  }
  // A 2xx whose body is not the API's (an HTML page, another service): nothing at
  // --apiBaseUrl speaks the platform's API, so "platform unreachable" (6), not "refused" (1).
  if (error instanceof PlatformResponseError) return ExitCode.platform;
  if (error instanceof PlatformTimeoutError) return ExitCode.timeout;
  if (error instanceof PlatformUnreachableError) return ExitCode.platform;
  if (error instanceof BreakerError) {
    if (error.reason === "platform-bound") return ExitCode.platform; // the answers broke a bound
    if (error.reason === "usage") return ExitCode.usage;
  }
  return ExitCode.failed;
}

/**
 * `text` without the value a runtime error quotes after "Invalid header
 * value"/"name" (it can be a credential: the API key or a bearer token).
 */
function withoutHeaderValues(text: string): string {
  return text.replace(/(invalid header (?:value|name))\b.*$/i, "$1 (not shown)");
}

/**
 * The one-line message for an error, and with `verbose` its cause chain,
 * request id and status. Never a stack trace.
 *
 * @example
 * ```ts
 * describeError(new CliError("Cannot do it."), false); // "Cannot do it."
 * ```
 */
export function describeError(error: unknown, verbose: boolean): string {
  const lines = [messageOf(error).split("\n")[0]];
  if (verbose) {
    if (error instanceof PlatformApiError) {
      lines.push(
        `  status: ${error.status}` +
          (error.code !== undefined ? `, platform code: ${error.code}` : "") +
          (error.requestId ? `, request id: ${error.requestId}` : ""),
      );
    }
    let depth = 0;
    walk(error, (e) => {
      if (e === error) return false;
      lines.push(`  caused by: ${withoutHeaderValues(messageOf(e).split("\n")[0])}`);
      return ++depth >= 8;
    });
  }
  return lines.join("\n");
}
