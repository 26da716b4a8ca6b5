/**
 * Errors of the bridge that the CLI maps to exit codes (in `lib/cli/errors.ts`,
 * by `instanceof`): the socket path cannot be used, the child cannot be run.
 * Light on purpose (no viem, no platform client), so the CLI's error mapping can import
 * it on the `--help` path.
 *
 * @module
 */

import { BaseError, type BaseErrorOptions } from "../core/mod.ts";

/**
 * The IPC socket path cannot be listened on (exit 2 in the CLI).
 *
 * @example
 * ```ts
 * throw new SocketPathError("/tmp/x", "a file that is not a socket is there");
 * ```
 */
export class SocketPathError extends BaseError {
  /** The path that cannot be used. */
  readonly path: string;
  /** Creates the error for `path` and the reason. */
  constructor(path: string, why: string, options?: BaseErrorOptions) {
    super(`Cannot listen on ${path}: ${why}.`, options);
    this.name = "SocketPathError";
    this.path = path;
  }
}

/**
 * The socket path is in use by a live server.
 *
 * @example
 * ```ts
 * throw new SocketInUseError("/tmp/service.ipc");
 * ```
 */
export class SocketInUseError extends SocketPathError {
  /** Creates the error for `path`. */
  constructor(path: string) {
    super(path, "another server is answering on it. Stop it or choose another --ipcPath");
    this.name = "SocketInUseError";
  }
}

/**
 * The child program could not be found (exit 127, as shells do).
 *
 * @example
 * ```ts
 * throw new ChildNotFoundError("forge");
 * ```
 */
export class ChildNotFoundError extends BaseError {
  /** Creates the error for `command`. */
  constructor(command: string, options?: BaseErrorOptions) {
    super(
      `Cannot run ${
        JSON.stringify(command)
      }: no such program. Check the command after "--" (is it installed and on PATH?).`,
      options,
    );
    this.name = "ChildNotFoundError";
  }
}

/**
 * The child program exists but could not be started (exit 126).
 *
 * @example
 * ```ts
 * throw new ChildStartError("./deploy.sh", "permission denied (is it executable?)");
 * ```
 */
export class ChildStartError extends BaseError {
  /** Creates the error for `command` and the reason. */
  constructor(command: string, why: string, options?: BaseErrorOptions) {
    super(`Cannot run ${JSON.stringify(command)}: ${why}.`, options);
    this.name = "ChildStartError";
  }
}
