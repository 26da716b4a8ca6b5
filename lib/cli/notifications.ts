/**
 * `service notifications`: placeholder until issue 7 lands (see the issue tracker).
 *
 * @module
 */

import type { Command } from "./command.ts";
import { CliError } from "./errors.ts";

/** `service notifications` (not built yet: issue 7). */
export const notificationsCommand: Command = {
  summary: "not built yet",
  run() {
    return Promise.reject(
      new CliError("`service notifications` is not built yet in this version (issue 7).", 1),
    );
  },
};
