/**
 * The emulator's error that the CLI maps to an exit code (in
 * `lib/cli/errors.ts`, by `instanceof`): options that cannot work. Light on
 * purpose (no store, no server), so the CLI's error mapping can import it on
 * the `--help` path.
 *
 * @module
 */

import { BaseError } from "../core/mod.ts";

/** A start-up problem caused by the options (exit code 2 in the CLI). */
export class EmulatorConfigError extends BaseError {
  /** A start-up problem described in one line. */
  constructor(message: string) {
    super(message);
    this.name = "EmulatorConfigError";
  }
}
