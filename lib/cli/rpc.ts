/**
 * `service rpc`: placeholder until issue 4 lands (see the issue tracker).
 *
 * @module
 */

import type { Command } from "./command.ts";
import { CliError } from "./errors.ts";

/** `service rpc` (not built yet: issue 4). */
export const rpcCommand: Command = {
  summary: "not built yet",
  run() {
    return Promise.reject(
      new CliError("`service rpc` is not built yet in this version (issue 4).", 1),
    );
  },
};
