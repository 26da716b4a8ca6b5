/**
 * The process's stop signals (SIGINT, SIGTERM, SIGHUP) as commands see them.
 * `main.ts` listens to the operating system and hands each signal to
 * {@linkcode stopSignals}; nothing in `lib/` listens itself.
 *
 * A signal that no command has taken keeps its default action: the process
 * ends at once, as if nobody listened. Once a taken signal has asked the
 * command to stop, later ones are absorbed until the process exits, so that a
 * stop asked for ends as the command says (exit 0), whoever else passed the
 * signal on. A command that must stop cleanly (the
 * emulator, the `rpc` bridge) takes the signals while it waits: then a signal
 * aborts the command's `AbortSignal` (the first one, with a
 * {@linkcode StopRequest} naming it as the reason) and is passed to the
 * taker (the `rpc` supervisor forwards every one to its child).
 *
 * @module
 */

import { BaseError } from "../core/mod.ts";

/** The signals that ask `service` to stop. */
export const STOP_SIGNALS: readonly Deno.Signal[] = ["SIGINT", "SIGTERM", "SIGHUP"];

/**
 * The abort reason of a command's signal when the process was asked to stop.
 *
 * @example
 * ```ts
 * const reason = new StopRequest("SIGTERM");
 * reason.signal; // "SIGTERM"
 * ```
 */
export class StopRequest extends BaseError {
  /** The signal that arrived. */
  readonly signal: Deno.Signal;
  /** Creates the reason for `signal`. */
  constructor(signal: Deno.Signal) {
    super(`Stopped by ${signal}.`);
    this.name = "StopRequest";
    this.signal = signal;
  }
}

/**
 * Takes `signals` over from their default action until the returned function
 * is called: each one then aborts the command's signal (the first time) and
 * is passed to `onSignal`.
 */
export type TakeSignals = (
  signals: readonly Deno.Signal[],
  onSignal?: (signal: Deno.Signal) => void,
) => () => void;

/** What {@linkcode stopSignals} needs from the runtime (`main.ts` gives `Deno`'s). */
export interface SignalHost {
  /** Starts listening to `signal`; throws when the platform does not support it. */
  listen(signal: Deno.Signal, handler: () => void): void;
  /** Stops listening. */
  unlisten(signal: Deno.Signal, handler: () => void): void;
  /** The default action of `signal`: ends the process. Called with no listener left. */
  raise(signal: Deno.Signal): void;
}

/** The stop signals of one run: the signal to give `run()`, and how to take them. */
export interface StopSignals {
  /** Aborted at the first taken signal, with a {@linkcode StopRequest}. */
  signal: AbortSignal;
  /** See {@linkcode TakeSignals}. */
  take: TakeSignals;
}

/**
 * Listens to the stop signals through `host` and turns them into an abort of one
 * `AbortSignal` for whoever has taken them, or into their default action.
 *
 * @example
 * ```ts
 * const handlers = new Map<Deno.Signal, () => void>();
 * const stop = stopSignals({
 *   listen: (s, h) => void handlers.set(s, h),
 *   unlisten: (s) => void handlers.delete(s),
 *   raise: (s) => console.log(`default action of ${s}`),
 * });
 * const release = stop.take(["SIGTERM"]);
 * handlers.get("SIGTERM")?.(); // stop.signal is aborted, its reason a StopRequest for SIGTERM
 * release();
 * handlers.get("SIGINT")?.(); // not taken: "default action of SIGINT"
 * ```
 */
export function stopSignals(host: SignalHost): StopSignals {
  const controller = new AbortController();
  type Taker = { signals: readonly Deno.Signal[]; onSignal?: (signal: Deno.Signal) => void };
  const takers = new Set<Taker>();
  const listening: [Deno.Signal, () => void][] = [];
  for (const sig of STOP_SIGNALS) {
    const handler = () => {
      const mine = [...takers].filter((t) => t.signals.includes(sig));
      // Once a command is stopping, a stop signal nobody has taken is the same stop again (a
      // terminal's Ctrl-C reaches `service` and the npm launcher or `deno task`, which pass it on
      // too): it must not turn a clean stop into death by the signal.
      if (mine.length === 0 && controller.signal.aborted) return;
      if (mine.length === 0) {
        for (const [s, h] of listening.splice(0)) host.unlisten(s, h);
        host.raise(sig);
        return;
      }
      if (!controller.signal.aborted) controller.abort(new StopRequest(sig));
      for (const t of mine) t.onSignal?.(sig);
    };
    try {
      host.listen(sig, handler);
      listening.push([sig, handler]);
    } catch { /* not supported on this platform (Windows): its default action stays */ }
  }
  return {
    signal: controller.signal,
    take(wanted, onSignal) {
      const taker: Taker = { signals: wanted, onSignal };
      takers.add(taker);
      return () => void takers.delete(taker);
    },
  };
}

/**
 * Resolves when `signal` aborts, with the name of the stop signal that
 * aborted it, or `"abort"` for any other reason. Never resolves without a
 * signal.
 *
 * @example
 * ```ts
 * import type { CommandContext } from "./command.ts";
 * declare const ctx: CommandContext;
 * const why = await whenStopped(ctx.signal); // "SIGTERM"
 * ```
 */
export function whenStopped(signal: AbortSignal | undefined): Promise<string> {
  return new Promise((resolve) => {
    const why = () =>
      resolve(signal?.reason instanceof StopRequest ? signal.reason.signal : "abort");
    if (signal?.aborted) why();
    else signal?.addEventListener("abort", why, { once: true });
  });
}
