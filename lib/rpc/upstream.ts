/**
 * The upstream node client: sends JSON-RPC text to `--rpcUrl` and returns the
 * node's answer as text. Plain `http:` URLs use a small pool of keep-alive
 * HTTP/1.1 connections written and read directly (no `fetch` per request:
 * it costs more than the node's own answer); `https:` URLs use TLS sockets
 * with the same code. A node that is down yields {@linkcode UpstreamError},
 * which the method table turns into one JSON-RPC error per request. The pool
 * ({@linkcode PooledUpstream}) is shared with the IPC client (`ipc_upstream.ts`).
 *
 * @module
 */

import { BaseError, concatBytes, messageOf, toBase64 } from "../core/mod.ts";
import { closeQuietly } from "../core/connection_guard.ts";

/** The node could not be reached or answered with something that is not JSON-RPC. */
export class UpstreamError extends BaseError {
  /** The class name. */
  override name = "UpstreamError";
}

/** Options of {@linkcode UpstreamClient} and the IPC client. */
export interface UpstreamOptions {
  /** Per-request timeout in ms; default 120000. */
  timeoutMs?: number;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();
const CRLFCRLF = [13, 10, 13, 10];

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

/** Writes all of `bytes` to `conn`. */
export async function writeFull(conn: Deno.Conn, bytes: Uint8Array): Promise<void> {
  let o = 0;
  while (o < bytes.length) o += await conn.write(bytes.subarray(o));
}

type Waiter = Omit<PromiseWithResolvers<string>, "promise">;

/**
 * One connection of a {@linkcode PooledUpstream}, with one request in flight
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

/** Bodies up to this many UTF-16 units are written through a connection's reused buffer. */
const SMALL_REQUEST_UNITS = 16 * 1024;

/** Room before the body in the reused buffer for the head (prefix, length digits, CRLFCRLF). */
const headRoom = (prefixBytes: number) => prefixBytes + 24;

/**
 * One keep-alive HTTP/1.1 connection. A small request is encoded into the
 * connection's own buffer and an answer decoded from its read buffer, with no
 * new `ArrayBuffer` per request (each costs about 1 µs, and the garbage
 * collector's time after: `scripts/bench/passthrough_peers.ts`). The write
 * buffer is reused only by the next request, which a connection sends once
 * the node has answered (so after the node read the whole of this one).
 */
class HttpConnection extends NodeConnection {
  #buf = new Uint8Array(64 * 1024);
  #len = 0;
  #out: Uint8Array | undefined;

  /**
   * Sends `prefix` (the head up to `Content-Length: `), the body's length and
   * `body` (at most {@linkcode SMALL_REQUEST_UNITS} long) in one write from the
   * reused buffer.
   */
  sendSmall(prefix: string, prefixBytes: number, body: string): Promise<string> {
    const room = headRoom(prefixBytes);
    const out = this.#out ??= new Uint8Array(room + SMALL_REQUEST_UNITS * 3);
    const written = encoder.encodeInto(body, out.subarray(room)).written;
    const head = prefix + written + "\r\n\r\n";
    const start = room - (prefixBytes + head.length - prefix.length); // the rest is ASCII
    encoder.encodeInto(head, out.subarray(start, room));
    return this.send(out.subarray(start, room + written));
  }

  constructor(conn: Deno.Conn, onClose: (c: NodeConnection) => void) {
    super(conn, onClose);
    this.readAll(async () => {
      for (;;) {
        const res = await this.#readResponse();
        if (res === undefined) return;
        const w = this.take();
        if (!w) throw new Error("unexpected data from the node");
        if (!res.keepAlive) this.close();
        w.resolve(res.text);
        if (!res.keepAlive) return;
      }
    });
  }

  async #fill(): Promise<boolean> {
    if (this.#len === this.#buf.length) {
      const bigger = new Uint8Array(this.#buf.length * 2);
      bigger.set(this.#buf.subarray(0, this.#len));
      this.#buf = bigger;
    }
    const n = await this.conn.read(this.#buf.subarray(this.#len));
    if (n === null) return false;
    this.#len += n;
    return true;
  }

  #consume(n: number): void {
    this.#buf.copyWithin(0, n, this.#len);
    this.#len -= n;
  }

  async #readResponse(): Promise<{ text: string; keepAlive: boolean } | undefined> {
    let headEnd = -1;
    for (;;) {
      headEnd = indexOf(this.#buf, this.#len, CRLFCRLF);
      if (headEnd !== -1) break;
      if (!(await this.#fill())) return undefined;
    }
    const head = decoder.decode(this.#buf.subarray(0, headEnd));
    this.#consume(headEnd + 4);
    let lineEnd = head.indexOf("\r\n");
    if (lineEnd === -1) lineEnd = head.length;
    const status = Number(head.slice(head.indexOf(" ") + 1, head.indexOf(" ") + 4));
    let length = -1;
    let chunked = false;
    let keepAlive = !head.startsWith("HTTP/1.0");
    // Only the lines that may be one of the three headers read are cut out (hot path).
    for (let start = lineEnd + 2; start < head.length;) {
      let end = head.indexOf("\r\n", start);
      if (end === -1) end = head.length;
      const first = head.charCodeAt(start) | 0x20; // lower case
      if (first === 0x63 /* c */ || first === 0x74 /* t */) {
        const line = head.slice(start, end);
        const colon = line.indexOf(":");
        const name = line.slice(0, colon).trim().toLowerCase();
        const value = line.slice(colon + 1).trim().toLowerCase();
        if (name === "content-length") length = Number(value);
        else if (name === "transfer-encoding") chunked = value.includes("chunked");
        else if (name === "connection") keepAlive = value !== "close";
      }
      start = end + 2;
    }
    let body: Uint8Array;
    if (status === 204 || status === 304 || (status >= 100 && status < 200)) {
      body = new Uint8Array(); // no body by definition (anvil answers notifications with 204)
    } else if (chunked) body = await this.#readChunked();
    else if (length >= 0) {
      while (this.#len < length) {
        if (!(await this.#fill())) throw new Error("the node closed the connection mid-answer");
      }
      // decoded in place: no copy of the body (hot path)
      const text = decoder.decode(this.#buf.subarray(0, length));
      this.#consume(length);
      return status >= 200 && status < 300 ? { text, keepAlive } : okJson(text, status, keepAlive);
    } else {
      while (await this.#fill()) { /* read to end */ }
      body = this.#buf.slice(0, this.#len);
      this.#len = 0;
      keepAlive = false;
    }
    const text = decoder.decode(body);
    return status === 204 || (status >= 200 && status < 300)
      ? { text, keepAlive }
      : okJson(text, status, keepAlive);
  }

  async #readChunked(): Promise<Uint8Array> {
    const parts: Uint8Array[] = [];
    for (;;) {
      let lineEnd: number;
      while ((lineEnd = indexOf(this.#buf, this.#len, [13, 10])) === -1) {
        if (!(await this.#fill())) throw new Error("the node closed the connection mid-answer");
      }
      const size = parseInt(decoder.decode(this.#buf.subarray(0, lineEnd)).split(";")[0], 16);
      this.#consume(lineEnd + 2);
      if (!Number.isFinite(size)) throw new Error("bad chunked encoding from the node");
      while (this.#len < size + 2) {
        if (!(await this.#fill())) throw new Error("the node closed the connection mid-answer");
      }
      if (size === 0) {
        // trailers are not expected; skip to the final CRLF
        this.#consume(2);
        break;
      }
      parts.push(this.#buf.slice(0, size));
      this.#consume(size + 2);
    }
    return concatBytes(parts);
  }
}

/** An answer with an error status: kept when its body is JSON (nodes answer JSON-RPC errors with 4xx/5xx). */
function okJson(
  text: string,
  status: number,
  keepAlive: boolean,
): { text: string; keepAlive: boolean } {
  const t = text.trimStart();
  if (!(t.startsWith("{") || t.startsWith("["))) {
    throw new UpstreamError(`the node answered HTTP ${status}`);
  }
  return { text, keepAlive };
}

/** Where `needle` starts in the first `len` bytes of `buf` (the rest is stale), or -1. */
function indexOf(buf: Uint8Array, len: number, needle: number[]): number {
  const first = needle[0];
  // Searched in a view of the filled part: a miss must not scan the buffer's whole capacity.
  const filled = len === buf.length ? buf : buf.subarray(0, len);
  outer: for (let i = filled.indexOf(first); i !== -1 && i <= len - needle.length;) {
    for (let j = 1; j < needle.length; j++) {
      if (buf[i + j] !== needle[j]) {
        i = filled.indexOf(first, i + 1);
        continue outer;
      }
    }
    return i;
  }
  return -1;
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
  protected async exchange(
    send: (c: C) => Promise<string>,
    retryOnce: (c: C) => boolean = () => false,
  ): Promise<string> {
    for (let attempt = 0;; attempt++) {
      // An idle connection without a further async step (the hot path).
      const conn = (!this.#closed && this.#idle.pop()) || await this.#acquire();
      try {
        const pending = send(conn);
        this.#arm();
        const answer = await pending;
        this.#release(conn);
        return answer;
      } catch (e) {
        conn.close();
        if (e instanceof UpstreamError) throw e;
        if (attempt === 0 && retryOnce(conn) && !this.#closed) continue;
        throw new UpstreamError(
          `the node at ${this.shownUrl} failed: ${e instanceof Error ? e.message : String(e)}`,
          { cause: e },
        );
      }
    }
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
  async send(body: string | Uint8Array): Promise<string> {
    if (typeof body === "string" && body.length <= SMALL_REQUEST_UNITS) {
      const prefix = this.#headPrefix;
      const prefixBytes = this.#headPrefixBytes;
      return await this.exchange(
        (c) => c.sendSmall(prefix, prefixBytes, body),
        (c) => c.uses > 1,
      );
    }
    const bytes = typeof body === "string" ? encoder.encode(body) : body;
    const head = encoder.encode(this.#headPrefix + bytes.length + "\r\n\r\n");
    // A small body goes in the same write as the head.
    const parts = bytes.length < 256 * 1024 ? [concatBytes([head, bytes])] : [head, bytes];
    // One retry on a reused connection that the node closed while idle.
    return await this.exchange((c) => c.send(...parts), (c) => c.uses > 1);
  }
}
