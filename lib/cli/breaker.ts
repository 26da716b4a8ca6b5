/**
 * `service breaker`: placeholder until issue 5 lands (see the issue tracker).
 *
 * @module
 */

import type { Command } from "./command.ts";
import { CliError } from "./errors.ts";

/** `service breaker` (not built yet: issue 5). */
export const breakerCommand: Command = {
  summary: "not built yet",
  run() {
    return Promise.reject(
      new CliError("`service breaker` is not built yet in this version (issue 5).", 1),
    );
  },
};
