/**
 * A node reached over its IPC socket (geth `geth.ipc`, anvil `--ipc`):
 * `--rpcUrl /path/to/node.ipc`. Raw JSON in both directions, framed with
 * the same streaming decoder as the bridge's own IPC server; a small pool of
 * connections with one request in flight each, so answers need no id
 * matching. A request unanswered after the timeout (default 120 s, as over
 * HTTP) fails and its connection is closed (`node_connections.ts`, as for
 * the HTTP client).
 *
 * @module
 */

import { NodeConnections } from "./node_connections.ts";
import { JsonStreamDecoder } from "./json_stream.ts";
import { Upstream, UpstreamClient, UpstreamError } from "./upstream.ts";
import { WsUpstreamClient } from "./node_stream.ts";

const encoder = new TextEncoder();
const decoder = new TextDecoder();

interface Waiter {
  resolve(text: string): void;
  reject(error: unknown): void;
}

class IpcConnection {
  readonly #conn: Deno.Conn;
  readonly #frames = new JsonStreamDecoder();
  #waiter: Waiter | undefined;
  #pending: string[] = [];
  closed = false;
  /** When the request in flight was sent (`performance.now()`); 0 when idle. */
  busySince = 0;
  readonly #onClose: (c: IpcConnection) => void;

  constructor(conn: Deno.Conn, onClose: (c: IpcConnection) => void) {
    this.#conn = conn;
    this.#onClose = onClose;
    this.#readLoop();
  }

  send(bytes: Uint8Array): Promise<string> {
    this.busySince = performance.now();
    return new Promise((resolve, reject) => {
      this.#waiter = { resolve, reject };
      (async () => {
        let o = 0;
        while (o < bytes.length) o += await this.#conn.write(bytes.subarray(o));
      })().catch((e) => this.#fail(e));
    });
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    try {
      this.#conn.close();
    } catch { /* closed */ }
    this.#onClose(this);
  }

  /** Fails the request in flight (its timeout) and closes the connection. */
  expire(error: unknown): void {
    this.#fail(error);
  }

  #fail(e: unknown): void {
    this.busySince = 0;
    const w = this.#waiter;
    this.#waiter = undefined;
    this.close();
    w?.reject(e);
  }

  async #readLoop(): Promise<void> {
    const buf = new Uint8Array(256 * 1024);
    try {
      for (;;) {
        const n = await this.#conn.read(buf);
        if (n === null) break;
        for (const frame of this.#frames.push(buf.subarray(0, n))) {
          this.#pending.push(decoder.decode(frame));
        }
        while (this.#pending.length && this.#waiter) {
          const w = this.#waiter;
          this.#waiter = undefined;
          this.busySince = 0;
          w.resolve(this.#pending.shift()!);
        }
      }
      this.#fail(new Error("the node closed the connection"));
    } catch (e) {
      this.#fail(e);
    }
  }
}

/**
 * A JSON-RPC client for a node's IPC socket.
 *
 * @example
 * ```ts
 * const node = new IpcUpstreamClient("/tmp/anvil.ipc");
 * await node.request("eth_chainId");
 * node.close();
 * ```
 */
export class IpcUpstreamClient extends Upstream {
  /** The socket path. */
  readonly url: string;
  /** The socket path (not a secret). */
  readonly shownUrl: string;
  readonly #nodes: NodeConnections<IpcConnection>;

  /**
   * Creates a client for the socket at `path`; nothing is opened yet. `timeoutMs`: how long a
   * request may wait for its answer (default 120 s).
   */
  constructor(path: string, options: { maxConnections?: number; timeoutMs?: number } = {}) {
    super();
    this.url = path;
    this.shownUrl = path;
    this.#nodes = new NodeConnections<IpcConnection>({
      max: options.maxConnections ?? 32,
      timeoutMs: options.timeoutMs ?? 120_000,
      error: UpstreamError,
      shownUrl: this.shownUrl,
      open: async (onClose) => {
        return new IpcConnection(
          await Deno.connect({ transport: "unix", path: this.url }),
          onClose,
        );
      },
    });
  }

  /** Sends one message; a message that does not end in a newline gets one. */
  async send(body: string | Uint8Array): Promise<string> {
    const text = typeof body === "string" ? body : decoder.decode(body);
    const bytes = encoder.encode(text.endsWith("\n") ? text : text + "\n");
    return await this.#nodes.exchange((c) => c.send(bytes));
  }

  /** Closes every connection; later sends fail. */
  close(): void {
    this.#nodes.close();
  }
}

/**
 * The client for a `--rpcUrl`: an IPC socket for a path (`/…`, `./…`,
 * `file://…`, or a name ending in `.ipc`), a WebSocket for `ws://` and
 * `wss://`, else HTTP(S). Throws `TypeError` for anything else.
 */
export function connectUpstream(url: string): Upstream {
  if (/^wss?:\/\//i.test(url)) {
    new URL(url); // a TypeError for a malformed URL
    return new WsUpstreamClient(url);
  }
  if (url.startsWith("file://")) return new IpcUpstreamClient(new URL(url).pathname);
  if (
    url.startsWith("/") || url.startsWith("./") || url.startsWith("../") || url.endsWith(".ipc")
  ) {
    return new IpcUpstreamClient(url);
  }
  return new UpstreamClient(url);
}
