/**
 * The upstream node client: sends JSON-RPC text to `--rpcUrl` and returns the
 * node's answer as text. Plain `http:` URLs use a small pool of keep-alive
 * HTTP/1.1 connections written and read directly (no `fetch` per request:
 * it costs more than the node's own answer); `https:` URLs use TLS sockets
 * with the same code. A node that is down yields {@linkcode UpstreamError},
 * which the method table turns into one JSON-RPC error per request. The pool
 * ({@linkcode PooledUpstream}) is shared with the IPC client (`ipc_upstream.ts`);
 * one connection is `node_connection.ts`, its HTTP kind `http_node_connection.ts`.
 *
 * @module
 */

import { concatBytes, messageOf, toBase64 } from "../core/mod.ts";
import { type NodeConnection, UpstreamError } from "./node_connection.ts";
import { HttpConnection, SMALL_REQUEST_UNITS } from "./http_node_connection.ts";

// the error of every node client, where its callers import the clients from
export { UpstreamError } from "./node_connection.ts";

/** Options of {@linkcode UpstreamClient} and the IPC client. */
export interface UpstreamOptions {
  /** Per-request timeout in ms; default 120000. */
  timeoutMs?: number;
}

const encoder = new TextEncoder();

/**
 * Shows a node URL without anything that may be a secret: public node URLs
 * often carry an API key in their path or query, so only the origin is shown.
 */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    return u.pathname.length > 1 || u.search ? `${u.origin}/…` : u.origin;
  } catch {
    return "(invalid URL)";
  }
}

/**
 * A node the bridge reads from: HTTP(S) ({@linkcode UpstreamClient}), a
 * local IPC socket (`IpcUpstreamClient`) or a WebSocket (`WsUpstreamClient`).
 * Subclasses implement `send`.
 */
export abstract class Upstream {
  /** The node address, as given. */
  abstract readonly url: string;
  /** The address safe to show. */
  abstract readonly shownUrl: string;
  /** Sends one JSON-RPC message text; resolves with the node's answer text. */
  abstract send(body: string | Uint8Array): Promise<string>;
  /** Closes every connection; later sends fail. */
  abstract close(): void;

  /** Sends a JSON value and parses the answer. */
  async call(value: unknown): Promise<unknown> {
    const text = await this.send(JSON.stringify(value));
    try {
      return JSON.parse(text);
    } catch {
      throw new UpstreamError(`the node at ${this.shownUrl} answered with something not JSON`);
    }
  }

  /** Calls one method and returns its result, or throws with the node's error. */
  async request(method: string, params: unknown[] = []): Promise<unknown> {
    const answer = await this.call({ jsonrpc: "2.0", id: 1, method, params }) as {
      result?: unknown;
      error?: { code: number; message: string };
    };
    if (answer && typeof answer === "object" && "error" in answer && answer.error) {
      throw new UpstreamError(
        `the node answered ${method} with error ${answer.error.code}: ${answer.error.message}`,
      );
    }
    return answer?.result;
  }
}

/**
 * A node client over a pool of at most `max` connections with one request in
 * flight each (HTTP and IPC); callers beyond wait in order. Every failure is an
 * {@linkcode UpstreamError} naming the node. The request timeout is one sweep
 * every `min(1 s, timeout)` while a request is in flight (a timer per request
 * costs more than a pass-through request), on `AbortSignal.timeout`: Deno 2.9's
 * first `setTimeout` loads the Node timers layer (~5 ms of start-up,
 * `scripts/bench/rpc_startup.ts`).
 */
export abstract class PooledUpstream<C extends NodeConnection> extends Upstream {
  /** The node address, as given. */
  readonly url: string;
  /** The address safe to show. */
  readonly shownUrl: string;
  readonly #max: number;
  readonly #timeoutMs: number;
  readonly #idle: C[] = [];
  readonly #all = new Set<C>();
  readonly #queue: { resolve: (c: C) => void; reject: (e: unknown) => void }[] = [];
  #opening = 0;
  #closed = false;
  #armed = false;

  /** Nothing is opened until the first exchange; at most `max` connections are open at once. */
  constructor(url: string, shownUrl: string, options: UpstreamOptions, max: number) {
    super();
    this.url = url;
    this.shownUrl = shownUrl;
    this.#max = max;
    this.#timeoutMs = options.timeoutMs ?? 120_000;
  }

  /** Opens a connection that calls `onClose(c)` when it closes. */
  protected abstract open(onClose: (c: NodeConnection) => void): Promise<C>;

  /**
   * Sends one message with `send` on a connection and returns the answer. A failure closes the
   * connection; `retryOnce(c)` true lets a first failure on `c` (e.g. a kept-alive connection
   * the node closed while idle) be tried again on another connection.
   */
  protected exchange(
    send: (c: C) => Promise<string>,
    retryOnce: (c: C) => boolean = () => false,
  ): Promise<string> {
    // An idle connection, and the answer handed on in one step (the hot path).
    const conn = !this.#closed && this.#idle.pop();
    if (!conn) return this.#exchangeAfterWait(send, retryOnce);
    let pending: Promise<string>;
    try {
      pending = send(conn);
    } catch (e) {
      return this.#failed(conn, e, 0, send, retryOnce);
    }
    this.#arm();
    return pending.then((answer) => {
      this.#release(conn);
      return answer;
    }, (e) => this.#failed(conn, e, 0, send, retryOnce));
  }

  /** {@linkcode exchange} when no connection is idle: opened, or waited for. */
  async #exchangeAfterWait(
    send: (c: C) => Promise<string>,
    retryOnce: (c: C) => boolean,
    attempt = 0,
  ): Promise<string> {
    const conn = await this.#acquire();
    try {
      const pending = send(conn);
      this.#arm();
      const answer = await pending;
      this.#release(conn);
      return answer;
    } catch (e) {
      return this.#failed(conn, e, attempt, send, retryOnce);
    }
  }

  /**
   * A failed exchange on `conn`: the connection is closed; the error is the
   * node's, or one first failure on a reused connection (the node may have
   * closed it while idle) is tried once more on another connection.
   */
  #failed(
    conn: C,
    e: unknown,
    attempt: number,
    send: (c: C) => Promise<string>,
    retryOnce: (c: C) => boolean,
  ): Promise<string> {
    conn.close();
    if (e instanceof UpstreamError) return Promise.reject(e);
    if (attempt === 0 && retryOnce(conn) && !this.#closed) {
      return this.#exchangeAfterWait(send, retryOnce, 1);
    }
    return Promise.reject(
      new UpstreamError(
        `the node at ${this.shownUrl} failed: ${e instanceof Error ? e.message : String(e)}`,
        { cause: e },
      ),
    );
  }

  /** Closes every connection and fails every waiter; later sends fail. */
  close(): void {
    this.#closed = true;
    for (const c of [...this.#all]) c.close();
    for (const q of this.#queue.splice(0)) q.reject(new UpstreamError("the bridge is stopping"));
  }

  /** An idle connection, a new one while under `max`, or the next released one. */
  async #acquire(): Promise<C> {
    if (this.#closed) throw new UpstreamError("the bridge is stopping");
    const idle = this.#idle.pop();
    if (idle) return idle;
    if (this.#all.size + this.#opening >= this.#max) {
      return await new Promise<C>((resolve, reject) => this.#queue.push({ resolve, reject }));
    }
    this.#opening++;
    try {
      const c = await this.open((x) => this.#forget(x as C)).catch((e) => {
        throw new UpstreamError(
          `the node at ${this.shownUrl} cannot be reached (${messageOf(e)})`,
          { cause: e },
        );
      });
      this.#all.add(c);
      return c;
    } finally {
      this.#opening--;
    }
  }

  #release(c: C): void {
    if (c.closed) return;
    const next = this.#queue.shift();
    if (next) next.resolve(c);
    else this.#idle.push(c);
  }

  #forget(c: C): void {
    this.#all.delete(c);
    const i = this.#idle.indexOf(c);
    if (i !== -1) this.#idle.splice(i, 1);
    // A waiter queued for a connection may now open a new one.
    const next = this.#queue.shift();
    if (next && !this.#closed) this.#acquire().then(next.resolve, next.reject);
  }

  /** Makes sure a timeout sweep is due (after sending a request). */
  #arm(): void {
    if (this.#armed || this.#closed) return;
    this.#armed = true;
    AbortSignal.timeout(Math.min(1000, this.#timeoutMs)).addEventListener("abort", () => {
      this.#armed = false;
      if (this.#closed) return;
      const now = performance.now();
      let busy = false;
      for (const c of [...this.#all]) {
        if (!c.busySince) continue;
        if (now - c.busySince > this.#timeoutMs) {
          c.expire(new UpstreamError(`no answer from the node within ${this.#timeoutMs} ms`));
        } else busy = true;
      }
      if (busy) this.#arm();
    }, { once: true });
  }
}

/**
 * A JSON-RPC client for one node URL.
 *
 * @example
 * ```ts
 * const node = new UpstreamClient("http://127.0.0.1:8545");
 * await node.send('{"jsonrpc":"2.0","id":1,"method":"eth_blockNumber"}');
 * node.close();
 * ```
 */
export class UpstreamClient extends PooledUpstream<HttpConnection> {
  readonly #host: string;
  readonly #port: number;
  readonly #tls: boolean;
  readonly #headPrefix: string;
  readonly #headPrefixBytes: number;

  /** Creates a client for `url` (http or https); no connection is opened yet. */
  constructor(url: string, options: UpstreamOptions = {}) {
    super(url, redactUrl(url), options, 64);
    const u = new URL(url);
    if (u.protocol !== "http:" && u.protocol !== "https:") {
      throw new TypeError(`unsupported node URL scheme ${u.protocol} (expected http or https)`);
    }
    this.#tls = u.protocol === "https:";
    this.#host = u.hostname.replace(/^\[|\]$/g, "");
    this.#port = Number(u.port || (this.#tls ? 443 : 80));
    const auth = u.username
      ? `Authorization: Basic ${
        toBase64(decodeURIComponent(u.username) + ":" + decodeURIComponent(u.password))
      }\r\n`
      : "";
    this.#headPrefix = `POST ${u.pathname}${u.search} HTTP/1.1\r\nHost: ${u.host}\r\n` +
      `User-Agent: service-rpc\r\nAccept: application/json\r\n${auth}` +
      `Content-Type: application/json\r\nContent-Length: `;
    this.#headPrefixBytes = encoder.encode(this.#headPrefix).length;
  }

  protected async open(onClose: (c: NodeConnection) => void): Promise<HttpConnection> {
    const conn = this.#tls
      ? await Deno.connectTls({ hostname: this.#host, port: this.#port })
      : await Deno.connect({ hostname: this.#host, port: this.#port });
    if (!this.#tls) (conn as Deno.TcpConn).setNoDelay(true);
    return new HttpConnection(conn, onClose);
  }

  /**
   * Sends one JSON-RPC message (single or batch) and returns the node's
   * answer text. Throws {@linkcode UpstreamError} when the node cannot be
   * reached or does not answer in time.
   */
  send(body: string | Uint8Array): Promise<string> {
    if (typeof body === "string" && body.length <= SMALL_REQUEST_UNITS) {
      // the exchange's own promise, with no further async step (the hot path)
      const prefix = this.#headPrefix;
      const prefixBytes = this.#headPrefixBytes;
      return this.exchange((c) => c.sendSmall(prefix, prefixBytes, body), retryIfReused);
    }
    return this.#sendLarge(body);
  }

  async #sendLarge(body: string | Uint8Array): Promise<string> {
    const bytes = typeof body === "string" ? encoder.encode(body) : body;
    const head = encoder.encode(this.#headPrefix + bytes.length + "\r\n\r\n");
    // A small body goes in the same write as the head.
    const parts = bytes.length < 256 * 1024 ? [concatBytes([head, bytes])] : [head, bytes];
    return await this.exchange((c) => c.send(...parts), retryIfReused);
  }
}

/** One retry on a reused connection (the node may have closed it while idle). */
const retryIfReused = (c: NodeConnection) => c.uses > 1;
