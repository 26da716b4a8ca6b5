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
        // An answer already whole in the buffer is taken with no further async step (the hot
        // path: a small answer comes in one read); a chunked one, or one read to its end, by
        // #readResponse.
        let res = this.#takeWhole();
        while (res === undefined) {
          const n = await this.#readMore();
          if (n === null) {
            if (indexOf(this.#buf, this.#len, CRLFCRLF) === -1) return; // closed between answers
            throw new Error("the node closed the connection mid-answer");
          }
          this.#len += n;
          res = this.#takeWhole();
        }
        if (res === STREAMED) res = await this.#readResponse();
        if (res === undefined) return;
        const w = this.take();
        if (!w) throw new Error("unexpected data from the node");
        if (!res.keepAlive) this.close();
        w.resolve(res.text);
        if (!res.keepAlive) return;
        // The next read starts once this answer has gone on its way to the client (its steps
        // through the exchange, the batcher, the transport and the server are about six microtask
        // turns): starting it first put a call into the runtime before them (~3 µs per
        // pass-through request at one connection, measured in-process). The node answers nothing
        // before it is asked again, so nothing waits on this read meanwhile.
        if (this.#len === 0) { for (let i = 0; i < ANSWER_TURNS; i++) await undefined; }
      }
    });
  }

  async #fill(): Promise<boolean> {
    const n = await this.#readMore();
    if (n === null) return false;
    this.#len += n;
    return true;
  }

  /** Reads into the buffer after what it holds (grown when full); the caller counts the bytes. */
  #readMore(): Promise<number | null> {
    if (this.#len === this.#buf.length) {
      const bigger = new Uint8Array(this.#buf.length * 2);
      bigger.set(this.#buf.subarray(0, this.#len));
      this.#buf = bigger;
    }
    return this.conn.read(this.#buf.subarray(this.#len));
  }

  /**
   * The answer at the start of the buffer when it is there whole with a
   * `Content-Length` (or no body), taken out of the buffer; `undefined` when
   * more must be read first; {@linkcode STREAMED} for a chunked answer or one
   * that ends with the connection (then `#readResponse` reads it).
   */
  #takeWhole(): Answer | undefined | typeof STREAMED {
    const headEnd = indexOf(this.#buf, this.#len, CRLFCRLF);
    if (headEnd === -1) return undefined;
    const head = parseHead(this.#buf, headEnd);
    const start = headEnd + 4;
    if (!hasBody(head.status)) {
      this.#consume(start);
      return answerOf("", head);
    }
    if (head.chunked || head.length < 0) return STREAMED;
    if (this.#len < start + head.length) return undefined;
    // decoded in place: no copy of the body (hot path)
    const text = decoder.decode(this.#buf.subarray(start, start + head.length));
    this.#consume(start + head.length);
    return answerOf(text, head);
  }

  #consume(n: number): void {
    this.#buf.copyWithin(0, n, this.#len);
    this.#len -= n;
  }

  async #readResponse(): Promise<Answer | undefined> {
    let headEnd = -1;
    for (;;) {
      headEnd = indexOf(this.#buf, this.#len, CRLFCRLF);
      if (headEnd !== -1) break;
      if (!(await this.#fill())) return undefined;
    }
    const head = parseHead(this.#buf, headEnd);
    this.#consume(headEnd + 4);
    let body: Uint8Array;
    if (!hasBody(head.status)) {
      body = new Uint8Array(); // no body by definition (anvil answers notifications with 204)
    } else if (head.chunked) body = await this.#readChunked();
    else if (head.length >= 0) {
      while (this.#len < head.length) {
        if (!(await this.#fill())) throw new Error("the node closed the connection mid-answer");
      }
      const text = decoder.decode(this.#buf.subarray(0, head.length));
      this.#consume(head.length);
      return answerOf(text, head);
    } else {
      while (await this.#fill()) { /* read to end */ }
      body = this.#buf.slice(0, this.#len);
      this.#len = 0;
      head.keepAlive = false;
    }
    return answerOf(decoder.decode(body), head);
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

/** A node's answer: its text, and whether the connection stays open after it. */
interface Answer {
  text: string;
  keepAlive: boolean;
}

/** Microtask turns an answer takes to reach the client's server (see `HttpConnection`). */
const ANSWER_TURNS = 6;

/** {@linkcode HttpConnection}'s marker for an answer read by its slower path. */
const STREAMED = Symbol("streamed");

/** What an answer's head says about its body and its connection. */
interface Head {
  status: number;
  /** `Content-Length`, or -1 when there is none. */
  length: number;
  chunked: boolean;
  keepAlive: boolean;
}

/**
 * The status and the three headers read of an answer's head (the first
 * `headEnd` bytes of `buf`, before its blank line), read from the bytes:
 * no string is made of the head (decoding it and cutting its lines cost
 * about 5 µs of each pass-through request; `scripts/bench/passthrough_peers.ts`).
 */
function parseHead(buf: Uint8Array, headEnd: number): Head {
  // "HTTP/1.x NNN ...": the version's minor digit at 7, the status at 9-11
  const status = (buf[9] - 48) * 100 + (buf[10] - 48) * 10 + (buf[11] - 48);
  const out: Head = {
    status: buf[8] === 32 && status >= 100 && status <= 999 ? status : NaN,
    length: -1,
    chunked: false,
    keepAlive: buf[7] !== 48, // HTTP/1.0 closes unless told otherwise
  };
  let line = buf.indexOf(10) + 1; // the first header line (after the status line's LF)
  while (line > 0 && line < headEnd) {
    let next = buf.indexOf(10, line) + 1;
    if (next === 0 || next > headEnd) next = headEnd + 2; // the last line ends at the blank line
    const first = buf[line] | 0x20; // lower case
    if (first === 0x63 /* c */ || first === 0x74 /* t */) {
      const colon = buf.indexOf(58, /* : */ line);
      if (colon !== -1 && colon < next) {
        const name = nameOf(buf, line, colon);
        if (name !== undefined) readHeader(out, name, buf, colon + 1, next);
      }
    }
    line = next;
  }
  return out;
}

/** The three header names read, as {@linkcode nameOf} tells them. */
const HEADER_NAMES = ["content-length", "transfer-encoding", "connection"] as const;

/** Which of {@linkcode HEADER_NAMES} the bytes `[from, to)` are (any case), if any. */
function nameOf(
  buf: Uint8Array,
  from: number,
  to: number,
): typeof HEADER_NAMES[number] | undefined {
  while (to > from && (buf[to - 1] === 32 || buf[to - 1] === 9)) to--;
  outer: for (const name of HEADER_NAMES) {
    if (to - from !== name.length) continue;
    for (let i = 0; i < name.length; i++) {
      if ((buf[from + i] | 0x20) !== name.charCodeAt(i)) continue outer;
    }
    return name;
  }
  return undefined;
}

/** Reads the value `[from, to)` (to: after its line's end) of header `name` into `out`. */
function readHeader(
  out: Head,
  name: typeof HEADER_NAMES[number],
  buf: Uint8Array,
  from: number,
  to: number,
): void {
  const value = latin1Lower(buf, from, to);
  if (name === "content-length") out.length = Number(value);
  else if (name === "transfer-encoding") out.chunked = value.includes("chunked");
  else out.keepAlive = value !== "close";
}

/** The bytes `[from, to)` as text in lower case, without the spaces and CR/LF around it. */
function latin1Lower(buf: Uint8Array, from: number, to: number): string {
  while (from < to && (buf[from] === 32 || buf[from] === 9)) from++;
  while (to > from && (buf[to - 1] <= 32)) to--;
  let text = "";
  for (let i = from; i < to; i++) {
    text += String.fromCharCode(buf[i] | (buf[i] >= 65 && buf[i] <= 90 ? 0x20 : 0));
  }
  return text;
}

/** Whether an answer with `status` has a body (204, 304 and 1xx have none). */
const hasBody = (status: number) =>
  !(status === 204 || status === 304 || (status >= 100 && status < 200));

/**
 * The answer of `text` under `head`: a 2xx (or a 204) as it is; an error
 * status kept when its body is JSON (nodes answer JSON-RPC errors with
 * 4xx/5xx), else an {@linkcode UpstreamError}.
 */
function answerOf(text: string, head: Head): Answer {
  const { status, keepAlive } = head;
  if (status === 204 || (status >= 200 && status < 300)) return { text, keepAlive };
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
