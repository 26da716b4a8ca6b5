/**
 * The only impure edge of `service`: reads the arguments and environment,
 * runs the CLI, exits with its code.
 *
 * @module
 */

import { run } from "./lib/cli/run.ts";
import { denoIo } from "./lib/cli/output.ts";

if (import.meta.main) {
  let args = [...Deno.args];
  // Invoked as `service-json-rpc` (like the platform's own bridge): act as `service rpc`.
  const exe = Deno.execPath().split(/[\\/]/).pop() ?? "";
  if (/^service-json-rpc(\.exe)?$/i.test(exe)) args = ["rpc", ...args];
  const controller = new AbortController();
  const code = await run(args, { io: denoIo(), signal: controller.signal });
  Deno.exit(code);
}
