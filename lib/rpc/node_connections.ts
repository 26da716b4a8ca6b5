/**
 * What the HTTP and the IPC node clients share: a {@linkcode ConnectionPool}
 * of connections with one request in flight each, the
 * {@linkcode RequestTimeouts} sweep over them, and one exchange (take a
 * connection, send, arm the timeout, give it back; on a failure close it
 * and fail with the client's error naming the node).
 *
 * @module
 */

import type { BaseErrorOptions } from "../core/mod.ts";
import { ConnectionPool, type Pooled } from "./connection_pool.ts";
import { RequestTimeouts, type TimedConnection } from "./request_timeouts.ts";

/** Options of {@linkcode NodeConnections}. */
export interface NodeConnectionsOptions<C> {
  /** Opens a connection; it calls `onClose(c)` when it closes for any reason. */
  open: (onClose: (c: C) => void) => Promise<C>;
  /** Most connections open at once. */
  max: number;
  /** Per-request timeout, ms. */
  timeoutMs: number;
  /** The node as it may be shown in messages (no secrets). */
  shownUrl: string;
  /** The client's error (e.g. `UpstreamError`): every failure is one. */
  error: new (message: string, options?: BaseErrorOptions) => Error;
}

/**
 * A node client's connections, their timeout and the exchange of one message.
 *
 * @example
 * ```ts
 * import type { Pooled } from "./connection_pool.ts";
 * import type { TimedConnection } from "./request_timeouts.ts";
 * import { UpstreamError } from "./upstream.ts";
 * type Conn = Pooled & TimedConnection & { send(text: string): Promise<string> };
 * declare const open: (onClose: (c: Conn) => void) => Promise<Conn>;
 * const nodes = new NodeConnections<Conn>({
 *   open,
 *   max: 32,
 *   timeoutMs: 120_000,
 *   shownUrl: "/tmp/anvil.ipc",
 *   error: UpstreamError,
 * });
 * await nodes.exchange((c) => c.send('{"jsonrpc":"2.0","id":1,"method":"eth_chainId"}\n'));
 * nodes.close();
 * ```
 */
export class NodeConnections<C extends Pooled & TimedConnection> {
  readonly #pool: ConnectionPool<C>;
  readonly #timeouts: RequestTimeouts;
  readonly #shownUrl: string;
  readonly #Error: NodeConnectionsOptions<C>["error"];

  /** Nothing is opened until the first {@linkcode exchange}. */
  constructor(options: NodeConnectionsOptions<C>) {
    this.#shownUrl = options.shownUrl;
    this.#Error = options.error;
    this.#pool = new ConnectionPool<C>({
      max: options.max,
      error: (message, cause) => new this.#Error(message, { cause }),
      shownUrl: options.shownUrl,
      open: options.open,
    });
    this.#timeouts = new RequestTimeouts(
      options.timeoutMs,
      () => this.#pool.connections,
      () => this.#pool.closed,
      (message) => new this.#Error(message),
    );
  }

  /**
   * Sends one message with `send` on a connection and returns the answer. A failure closes the
   * connection; `retryOnce(c)` true lets a first failure on `c` (e.g. a kept-alive connection
   * the node closed while idle) be tried again on another connection.
   */
  async exchange(
    send: (c: C) => Promise<string>,
    retryOnce: (c: C) => boolean = () => false,
  ): Promise<string> {
    for (let attempt = 0;; attempt++) {
      const conn = await this.#pool.acquire();
      try {
        const pending = send(conn);
        this.#timeouts.arm();
        const answer = await pending;
        this.#pool.release(conn);
        return answer;
      } catch (e) {
        conn.close();
        if (e instanceof this.#Error) throw e;
        if (attempt === 0 && retryOnce(conn) && !this.#pool.closed) continue;
        throw new this.#Error(
          `the node at ${this.#shownUrl} failed: ${e instanceof Error ? e.message : String(e)}`,
          { cause: e },
        );
      }
    }
  }

  /** Closes every connection; later exchanges fail (an armed sweep then stops). */
  close(): void {
    this.#pool.close();
  }
}
