/**
 * One connection to a node, with one request in flight at a time
 * ({@linkcode NodeConnection}: what the pool of `upstream.ts` hands out; the
 * HTTP one is `http_node_connection.ts`, the IPC one in `ipc_upstream.ts`),
 * and the error every failure of a node becomes ({@linkcode UpstreamError}).
 *
 * @module
 */

import { BaseError } from "../core/mod.ts";
import { closeQuietly } from "../core/connection_guard.ts";

/** The node could not be reached or answered with something that is not JSON-RPC. */
export class UpstreamError extends BaseError {
  /** The class name. */
  override name = "UpstreamError";
}

/** Writes all of `bytes` to `conn`. */
export async function writeFull(conn: Deno.Conn, bytes: Uint8Array): Promise<void> {
  let o = 0;
  while (o < bytes.length) o += await conn.write(bytes.subarray(o));
}

type Waiter = Omit<PromiseWithResolvers<string>, "promise">;

/**
 * One connection of a pool (`upstream.ts`'s `PooledUpstream`), with one request in flight
 * at a time; a subclass reads the answers and hands each to {@linkcode take}'s waiter.
 */
export abstract class NodeConnection {
  /** True once closed (it is then never handed out again). */
  closed = false;
  /** When the request in flight was sent (`performance.now()`); 0 when idle. */
  busySince = 0;
  /** Requests sent on this connection so far. */
  uses = 0;
  #waiter: Waiter | undefined;
  readonly #onClose: (c: NodeConnection) => void;

  /** `onClose` is called once the connection closes, for any reason. */
  constructor(protected readonly conn: Deno.Conn, onClose: (c: NodeConnection) => void) {
    this.#onClose = onClose;
  }

  /** Writes `parts` in order; resolves with the answer. */
  send(...parts: Uint8Array[]): Promise<string> {
    this.uses++;
    this.busySince = performance.now();
    return new Promise<string>((resolve, reject) => {
      this.#waiter = { resolve, reject };
      const fail = (e: unknown) => this.#fail(e);
      if (parts.length === 1) {
        // one write, usually whole (the hot path): the rest only if it was not
        const bytes = parts[0];
        this.conn.write(bytes).then((n) => {
          if (n < bytes.length) return writeFull(this.conn, bytes.subarray(n));
        }).catch(fail);
      } else {
        (async () => {
          for (const p of parts) await writeFull(this.conn, p);
        })().catch(fail);
      }
    });
  }

  /** Fails the request in flight (its timeout) and closes the connection. */
  expire(error: unknown): void {
    this.#fail(error);
  }

  /** Closes the connection. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    closeQuietly(this.conn);
    this.#onClose(this);
  }

  /** The waiter of the request in flight, now answered (the connection is idle again). */
  protected take(): Waiter | undefined {
    const w = this.#waiter;
    this.#waiter = undefined;
    this.busySince = 0;
    return w;
  }

  /** Runs the subclass's read loop; its end or failure fails what is in flight and closes. */
  protected async readAll(read: () => Promise<void>): Promise<void> {
    try {
      await read();
      this.#fail(new Error("the node closed the connection"));
    } catch (e) {
      this.#fail(e);
    }
  }

  #fail(error: unknown): void {
    const w = this.take();
    this.close();
    w?.reject(error);
  }
}
