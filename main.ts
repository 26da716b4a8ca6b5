/**
 * The only impure edge of `service`: reads the arguments, the environment and
 * the current directory (where `.env` is looked for), runs the CLI, exits with
 * its code.
 *
 * @module
 */

import { denoIo, run, stopSignals } from "./lib/cli/mod.ts";
import { signalExitCode } from "./lib/core/mod.ts";

if (import.meta.main) {
  let args = [...Deno.args];
  // Invoked as `service-json-rpc` (like the platform's own bridge): act as `service rpc`.
  const exe = Deno.execPath().split(/[\\/]/).pop() ?? "";
  if (/^service-json-rpc(\.exe)?$/i.test(exe)) args = ["rpc", ...args];
  // SIGINT, SIGTERM and SIGHUP abort the signal given to run() when a command
  // has taken them; otherwise they end the process as if nobody listened.
  const stop = stopSignals({
    listen: (s, h) => Deno.addSignalListener(s, h),
    unlisten: (s, h) => Deno.removeSignalListener(s, h),
    raise: (s) => {
      try {
        Deno.kill(Deno.pid, s);
      } catch {
        Deno.exit(signalExitCode(s));
      }
    },
  });
  const code = await run(args, {
    io: denoIo(),
    cwd: Deno.cwd(),
    signal: stop.signal,
    takeSignals: stop.take,
  });
  Deno.exit(code);
}
