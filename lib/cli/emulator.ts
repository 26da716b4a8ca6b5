/**
 * `service emulator`: placeholder until issue 3 lands (see the issue tracker).
 *
 * @module
 */

import type { Command } from "./command.ts";
import { CliError } from "./errors.ts";

/** `service emulator` (not built yet: issue 3). */
export const emulatorCommand: Command = {
  summary: "not built yet",
  run() {
    return Promise.reject(
      new CliError("`service emulator` is not built yet in this version (issue 3).", 1),
    );
  },
};
