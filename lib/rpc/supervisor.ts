/**
 * The child supervisor: runs the command after `--` without a shell, with
 * inherited stdio and an environment stripped of the platform secrets,
 * forwards SIGINT/SIGTERM/SIGHUP to it (as the caller delivers them: the
 * CLI's stop signals, never a listener of its own), and reports its exit code (128+N
 * when it died of signal N). A program that does not exist is
 * {@linkcode ChildNotFoundError} (exit 127, as shells do).
 *
 * The whole tree: with `group` (what the CLI asks for when its standard input
 * is not a terminal) the child starts in a process group of its own (a new
 * session: `Deno.Command`'s `detached`, which runs `setsid()` in the child;
 * no `setsid` program is needed, and macOS has none; tested on Linux) and
 * each signal goes to that whole group, so the
 * child's own children (`sh -c 'server & wait'`) stop with it instead of
 * living on under PID 1. Without `group` the child stays in the bridge's
 * process group: a terminal then delivers Ctrl-C and a hang-up to every
 * process of the job itself, and the child keeps the terminal as its
 * controlling terminal (job control, password prompts on `/dev/tty`), which a
 * new session would take away; a signal sent to the bridge alone then reaches
 * the child only.
 *
 * @module
 */

import { ChildNotFoundError, ChildStartError } from "./errors.ts";
import { signalExitCode } from "../core/mod.ts";

/** Environment variables that never reach the child. */
export const SECRET_ENV_VARS: readonly string[] = [
  "SERVICE_API_KEY",
  "SERVICE_API_PRIVATE_KEY_PATH",
];

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
  const kept = Object.entries(env).filter(([k]) => !SECRET_ENV_VARS.includes(k));
  return { ...Object.fromEntries(kept), ...extra };
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
  /**
   * Where the signals to forward come from: called before the child is
   * spawned with the function that forwards one; returns the function that
   * ends the subscription. The CLI passes its stop signals (SIGINT, SIGTERM,
   * SIGHUP). Default: nothing is forwarded.
   */
  signals?: (forward: (signal: Deno.Signal) => void) => () => void;
  /**
   * Start the child in a process group of its own and send each forwarded
   * signal to the whole group (the child's own children included). Default
   * false: the child shares the bridge's group (see the module doc).
   */
  group?: boolean;
}

/**
 * Runs the child to its end and returns its exit code (128+N on signal N).
 * Signals delivered meanwhile through `options.signals` are forwarded to it.
 */
export async function runChild(options: ChildOptions): Promise<number> {
  const [program, ...args] = options.command;
  if (!program) throw new TypeError("no command to run");
  // Subscribe before spawning: a signal that arrives while the child starts
  // is passed on as soon as it exists, instead of killing the bridge and
  // orphaning the child.
  let child: Deno.ChildProcess | undefined;
  let early: Deno.Signal | undefined;
  const group = options.group ?? false;
  const send = (c: Deno.ChildProcess, sig: Deno.Signal) => {
    if (group) {
      try {
        Deno.kill(-c.pid, sig); // the group: the child and its descendants
        return;
      } catch { /* no such group any more: try the child alone */ }
    }
    try {
      c.kill(sig);
    } catch { /* already gone */ }
  };
  const unlisten = options.signals?.((sig) => {
    options.onSignal?.(sig);
    if (!child) {
      early = sig;
      return;
    }
    send(child, sig);
  }) ?? (() => {});
  try {
    child = new Deno.Command(program, {
      args,
      env: options.env,
      clearEnv: true,
      stdin: "inherit",
      stdout: "inherit",
      stderr: "inherit",
      detached: group,
    }).spawn();
  } catch (e) {
    unlisten();
    if (e instanceof Deno.errors.NotFound) throw new ChildNotFoundError(program, { cause: e });
    if (e instanceof Deno.errors.PermissionDenied) {
      throw new ChildStartError(program, "permission denied (is it executable?)", { cause: e });
    }
    throw new ChildStartError(program, e instanceof Error ? e.message : String(e), { cause: e });
  }
  options.onSpawn?.(child.pid);
  if (early) send(child, early);
  // If the bridge must stop on an error nothing caught (it ends the process), the child stops
  // with it instead of being re-parented to PID 1 and left running without its bridge.
  const running = child;
  const fatal = () => send(running, "SIGTERM");
  globalThis.addEventListener("error", fatal);
  globalThis.addEventListener("unhandledrejection", fatal);
  try {
    const status = await child.status; // the exit code as a shell reports it
    return status.signal ? signalExitCode(status.signal) : status.code;
  } finally {
    globalThis.removeEventListener("error", fatal);
    globalThis.removeEventListener("unhandledrejection", fatal);
    unlisten();
  }
}
