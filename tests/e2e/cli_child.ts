/**
 * A long-running `service` command (`webhooks listen`, `notifications tail
 * --follow`) spawned as a user would run it (`deno run -A main.ts ...`, a
 * clean environment), with its standard output read line by line as it
 * comes, so a test can wait for a line (an event, not a sleep), then send
 * SIGINT and read the exit code.
 *
 * @module
 */

import { mainCommand, ROOT } from "../support/main_command.ts";

/** A running CLI process. */
export interface CliChild {
  /** Lines of standard output so far. */
  lines: string[];
  /** Standard error so far. */
  stderr(): string;
  /** Resolves with the first stdout line matching `pred` (fails after `timeoutMs`). */
  waitLine(pred: (line: string) => boolean, what: string, timeoutMs?: number): Promise<string>;
  /** Resolves when standard error contains `text`. */
  waitStderr(text: string, timeoutMs?: number): Promise<void>;
  /** Sends `signal` (default SIGINT) and waits for the exit code. */
  stop(signal?: Deno.Signal): Promise<number>;
}

/** Spawns `main.ts ...args` with `env`, in `cwd` (default the checkout). */
export function spawnCli(
  args: string[],
  env: Record<string, string> = {},
  cwd: string = ROOT,
): CliChild {
  const child = mainCommand(args, { cwd, env }).spawn();
  const lines: string[] = [];
  let partial = "";
  let err = "";
  const listeners = new Set<() => void>();
  const notify = () => {
    for (const l of [...listeners]) l();
  };
  const dec = new TextDecoder();
  const outDone = (async () => {
    for await (const c of child.stdout) {
      partial += dec.decode(c, { stream: true });
      let nl: number;
      while ((nl = partial.indexOf("\n")) >= 0) {
        lines.push(partial.slice(0, nl));
        partial = partial.slice(nl + 1);
      }
      notify();
    }
  })().catch(() => {});
  const errDec = new TextDecoder();
  const errDone = (async () => {
    for await (const c of child.stderr) {
      err += errDec.decode(c, { stream: true });
      notify();
    }
  })().catch(() => {});
  let exited = false;
  const status = child.status.then((s) => {
    exited = true;
    notify();
    return s;
  });
  const until = <T>(check: () => T | undefined, what: string, timeoutMs: number): Promise<T> =>
    new Promise((resolve, reject) => {
      const tick = () => {
        const v = check();
        if (v !== undefined) {
          done();
          resolve(v);
        } else if (exited) {
          done();
          reject(new Error(`the command exited before ${what}; stderr:\n${err}`));
        }
      };
      const timer = setTimeout(() => {
        done();
        reject(new Error(`timed out after ${timeoutMs} ms waiting for ${what}; stderr:\n${err}`));
      }, timeoutMs);
      const done = () => {
        clearTimeout(timer);
        listeners.delete(tick);
      };
      listeners.add(tick);
      tick();
    });
  return {
    lines,
    stderr: () => err,
    waitLine: (pred, what, timeoutMs = 30_000) => until(() => lines.find(pred), what, timeoutMs),
    waitStderr: (text, timeoutMs = 30_000) =>
      until(() => (err.includes(text) ? true : undefined), JSON.stringify(text), timeoutMs)
        .then(() => {}),
    async stop(signal: Deno.Signal = "SIGINT") {
      if (!exited) {
        try {
          child.kill(signal);
        } catch { /* gone */ }
      }
      const s = await status;
      await outDone;
      await errDone;
      return s.code;
    },
  };
}
