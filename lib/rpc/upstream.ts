/**
 * The upstream node client: sends JSON-RPC text to `--rpcUrl` and returns the
 * node's answer as text. Plain `http:` URLs use a small pool of keep-alive
 * HTTP/1.1 connections written and read directly (no `fetch` per request:
 * it costs more than the node's own answer); `https:` URLs use TLS sockets
 * with the same code. A node that is down yields {@linkcode UpstreamError},
 * which the method table turns into one JSON-RPC error per request.
 *
 * @module
 */

import { BaseError, type BaseErrorOptions, toBase64 } from "../core/mod.ts";
import { NodeConnections } from "./node_connections.ts";

/** The node could not be reached or answered with something that is not JSON-RPC. */
export class UpstreamError extends BaseError {
  /** Creates the error with its reason. */
  constructor(message: string, options?: BaseErrorOptions) {
    super(message, options);
    this.name = "UpstreamError";
  }
}

/** Options of {@linkcode UpstreamClient}. */
export interface UpstreamOptions {
  /** Most connections kept open at once; default 64. */
  maxConnections?: number;
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

interface Waiter {
  resolve(text: string): void;
  reject(error: unknown): void;
}

/** One keep-alive connection; one request in flight at a time. */
class Connection {
  readonly #conn: Deno.Conn;
  #buf = new Uint8Array(64 * 1024);
  #len = 0;
  #waiter: Waiter | undefined;
  closed = false;
  /** Requests sent on this connection so far. */
  uses = 0;
  readonly #onClose: (c: Connection) => void;

  constructor(conn: Deno.Conn, onClose: (c: Connection) => void) {
    this.#conn = conn;
    this.#onClose = onClose;
    this.#readLoop();
  }

  /** When the request in flight was sent (ms, monotonic); 0 when idle. */
  busySince = 0;

  /** Fails the request in flight (e.g. on timeout) and closes the connection. */
  expire(error: unknown): void {
    this.#fail(error);
  }

  send(head: Uint8Array, body: Uint8Array): Promise<string> {
    this.uses++;
    this.busySince = performance.now();
    return new Promise<string>((resolve, reject) => {
      this.#waiter = { resolve, reject };
      this.#write(head, body).catch((e) => this.#fail(e));
    });
  }

  async #write(head: Uint8Array, body: Uint8Array): Promise<void> {
    if (body.length < 256 * 1024) {
      const all = new Uint8Array(head.length + body.length);
      all.set(head);
      all.set(body, head.length);
      await writeFull(this.#conn, all);
    } else {
      await writeFull(this.#conn, head);
      await writeFull(this.#conn, body);
    }
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    try {
      this.#conn.close();
    } catch { /* already closed */ }
    this.#onClose(this);
  }

  #fail(error: unknown): void {
    const w = this.#waiter;
    this.#waiter = undefined;
    this.close();
    w?.reject(error);
  }

  async #readLoop(): Promise<void> {
    try {
      for (;;) {
        const res = await this.#readResponse();
        if (res === undefined) break;
        const w = this.#waiter;
        this.#waiter = undefined;
        this.busySince = 0;
        if (!w) throw new Error("unexpected data from the node");
        if (!res.keepAlive) {
          this.close();
          w.resolve(res.text);
          return;
        }
        w.resolve(res.text);
      }
      this.#fail(new Error("the node closed the connection"));
    } catch (e) {
      this.#fail(e);
    }
  }

  async #fill(): Promise<boolean> {
    if (this.#len === this.#buf.length) {
      const bigger = new Uint8Array(this.#buf.length * 2);
      bigger.set(this.#buf.subarray(0, this.#len));
      this.#buf = bigger;
    }
    const n = await this.#conn.read(this.#buf.subarray(this.#len));
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
    const lines = head.split("\r\n");
    const status = Number(lines[0].split(" ")[1]);
    let length = -1;
    let chunked = false;
    let keepAlive = !lines[0].startsWith("HTTP/1.0");
    for (let i = 1; i < lines.length; i++) {
      const line = lines[i];
      const colon = line.indexOf(":");
      const name = line.slice(0, colon).trim().toLowerCase();
      const value = line.slice(colon + 1).trim().toLowerCase();
      if (name === "content-length") length = Number(value);
      else if (name === "transfer-encoding") chunked = value.includes("chunked");
      else if (name === "connection") keepAlive = value !== "close";
    }
    let body: Uint8Array;
    if (status === 204 || status === 304 || (status >= 100 && status < 200)) {
      body = new Uint8Array(); // no body by definition (anvil answers notifications with 204)
    } else if (chunked) body = await this.#readChunked();
    else if (length >= 0) {
      while (this.#len < length) {
        if (!(await this.#fill())) throw new Error("the node closed the connection mid-answer");
      }
      body = this.#buf.slice(0, length);
      this.#consume(length);
    } else {
      while (await this.#fill()) { /* read to end */ }
      body = this.#buf.slice(0, this.#len);
      this.#len = 0;
      keepAlive = false;
    }
    const text = decoder.decode(body);
    if (status !== 204 && (status < 200 || status >= 300)) {
      // Nodes answer JSON-RPC errors with 4xx/5xx bodies too: keep a JSON body.
      const t = text.trimStart();
      if (!(t.startsWith("{") || t.startsWith("["))) {
        throw new UpstreamError(`the node answered HTTP ${status}`);
      }
    }
    return { text, keepAlive };
  }

  async #readChunked(): Promise<Uint8Array> {
    const parts: Uint8Array[] = [];
    let total = 0;
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
      total += size;
      this.#consume(size + 2);
    }
    const out = new Uint8Array(total);
    let o = 0;
    for (const p of parts) {
      out.set(p, o);
      o += p.length;
    }
    return out;
  }
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

async function writeFull(conn: Deno.Conn, bytes: Uint8Array): Promise<void> {
  let o = 0;
  while (o < bytes.length) o += await conn.write(bytes.subarray(o));
}

/**
 * A node the bridge reads from: HTTP(S) ({@linkcode UpstreamClient}) or a
 * local IPC socket (`IpcUpstreamClient`). Subclasses implement `send`.
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
 * A JSON-RPC client for one node URL.
 *
 * @example
 * ```ts
 * const node = new UpstreamClient("http://127.0.0.1:8545");
 * await node.send('{"jsonrpc":"2.0","id":1,"method":"eth_blockNumber"}');
 * node.close();
 * ```
 */
export class UpstreamClient extends Upstream {
  /** The node URL, as given. */
  readonly url: string;
  /** The URL safe to show. */
  readonly shownUrl: string;
  readonly #host: string;
  readonly #port: number;
  readonly #tls: boolean;
  readonly #headPrefix: string;
  readonly #nodes: NodeConnections<Connection>;

  /** Creates a client for `url` (http or https); no connection is opened yet. */
  constructor(url: string, options: UpstreamOptions = {}) {
    super();
    const u = new URL(url);
    if (u.protocol !== "http:" && u.protocol !== "https:") {
      throw new TypeError(`unsupported node URL scheme ${u.protocol} (expected http or https)`);
    }
    this.url = url;
    this.shownUrl = redactUrl(url);
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
    this.#nodes = new NodeConnections<Connection>({
      max: options.maxConnections ?? 64,
      timeoutMs: options.timeoutMs ?? 120_000,
      error: UpstreamError,
      shownUrl: this.shownUrl,
      open: async (onClose) => {
        const conn = this.#tls
          ? await Deno.connectTls({ hostname: this.#host, port: this.#port })
          : await Deno.connect({ hostname: this.#host, port: this.#port });
        if (!this.#tls) (conn as Deno.TcpConn).setNoDelay(true);
        return new Connection(conn, onClose);
      },
    });
  }

  /**
   * Sends one JSON-RPC message (single or batch) and returns the node's
   * answer text. Throws {@linkcode UpstreamError} when the node cannot be
   * reached or does not answer in time.
   */
  async send(body: string | Uint8Array): Promise<string> {
    const bytes = typeof body === "string" ? encoder.encode(body) : body;
    const head = encoder.encode(this.#headPrefix + bytes.length + "\r\n\r\n");
    // One retry on a reused connection that the node closed while idle.
    return await this.#nodes.exchange((c) => c.send(head, bytes), (c) => c.uses > 1);
  }

  /** Closes every connection; later sends fail. */
  close(): void {
    this.#nodes.close();
  }
}
