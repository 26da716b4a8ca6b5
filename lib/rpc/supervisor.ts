/**
 * The child supervisor: runs the command after `--` without a shell, with
 * inherited stdio and an environment stripped of the platform secrets,
 * forwards SIGINT/SIGTERM/SIGHUP to it, and reports its exit code (128+N
 * when it died of signal N). A program that does not exist is
 * {@linkcode ChildNotFoundError} (exit 127, as shells do).
 *
 * @module
 */

/** Environment variables that never reach the child. */
export const SECRET_ENV_VARS: readonly string[] = [
  "SERVICE_API_KEY",
  "SERVICE_API_PRIVATE_KEY_PATH",
];

/** Signals forwarded to the child. */
export const FORWARDED_SIGNALS: readonly Deno.Signal[] = ["SIGINT", "SIGTERM", "SIGHUP"];

const SIGNAL_NUMBERS: Record<string, number> = {
  SIGHUP: 1,
  SIGINT: 2,
  SIGQUIT: 3,
  SIGILL: 4,
  SIGTRAP: 5,
  SIGABRT: 6,
  SIGBUS: 7,
  SIGFPE: 8,
  SIGKILL: 9,
  SIGUSR1: 10,
  SIGSEGV: 11,
  SIGUSR2: 12,
  SIGPIPE: 13,
  SIGALRM: 14,
  SIGTERM: 15,
};

/** The child program could not be found (exit 127). */
export class ChildNotFoundError extends Error {
  /** Creates the error for `command`. */
  constructor(command: string, options?: ErrorOptions) {
    super(
      `Cannot run ${
        JSON.stringify(command)
      }: no such program. Check the command after "--" (is it installed and on PATH?).`,
      options,
    );
    this.name = "ChildNotFoundError";
  }
}

/** The child program exists but could not be started (exit 126). */
export class ChildStartError extends Error {
  /** Creates the error for `command` and the reason. */
  constructor(command: string, why: string, options?: ErrorOptions) {
    super(`Cannot run ${JSON.stringify(command)}: ${why}.`, options);
    this.name = "ChildStartError";
  }
}

/**
 * Replaces every `{}` in every argument with `address` (`{}{}` gives the
 * address twice).
 *
 * @example
 * ```ts
 * substituteAddress(["--rpc-url", "{}", "x{}{}"], "http://a"); // ["--rpc-url", "http://a", "xhttp://ahttp://a"]
 * ```
 */
export function substituteAddress(args: readonly string[], address: string): string[] {
  return args.map((a) => a.replaceAll("{}", address));
}

/** The child's environment: `env` without the secrets, plus `extra`. */
export function childEnv(
  env: Record<string, string>,
  extra: Record<string, string>,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) {
    if (!SECRET_ENV_VARS.includes(k)) out[k] = v;
  }
  return { ...out, ...extra };
}

/** Options of {@linkcode runChild}. */
export interface ChildOptions {
  /** Program and arguments (already substituted). */
  command: readonly string[];
  /** The complete environment of the child (see {@linkcode childEnv}). */
  env: Record<string, string>;
  /** Called once the child runs, with its pid. */
  onSpawn?: (pid: number) => void;
  /** Called for each forwarded signal. */
  onSignal?: (signal: Deno.Signal) => void;
}

/** The exit code a shell would report for a status. */
export function exitCodeOf(status: Deno.CommandStatus): number {
  if (status.signal) return 128 + (SIGNAL_NUMBERS[status.signal] ?? 0);
  return status.code;
}

/**
 * Runs the child to its end and returns its exit code (128+N on signal N).
 * Signals received meanwhile are forwarded to it.
 */
export async function runChild(options: ChildOptions): Promise<number> {
  const [program, ...args] = options.command;
  if (!program) throw new TypeError("no command to run");
  let child: Deno.ChildProcess;
  try {
    child = new Deno.Command(program, {
      args,
      env: options.env,
      clearEnv: true,
      stdin: "inherit",
      stdout: "inherit",
      stderr: "inherit",
    }).spawn();
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) throw new ChildNotFoundError(program, { cause: e });
    if (e instanceof Deno.errors.PermissionDenied) {
      throw new ChildStartError(program, "permission denied (is it executable?)", { cause: e });
    }
    throw new ChildStartError(program, e instanceof Error ? e.message : String(e), { cause: e });
  }
  options.onSpawn?.(child.pid);
  const handlers: [Deno.Signal, () => void][] = [];
  for (const sig of FORWARDED_SIGNALS) {
    const h = () => {
      options.onSignal?.(sig);
      try {
        child.kill(sig);
      } catch { /* already gone */ }
    };
    try {
      Deno.addSignalListener(sig, h);
      handlers.push([sig, h]);
    } catch { /* signal not supported here (Windows) */ }
  }
  try {
    return exitCodeOf(await child.status);
  } finally {
    for (const [sig, h] of handlers) Deno.removeSignalListener(sig, h);
  }
}
