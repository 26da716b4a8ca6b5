/**
 * HTTP/1.1 served by the program itself, on a connection the fast
 * per-connection server (`http_engine.ts`) cannot take yet: its first
 * request, because only there can a WebSocket upgrade come and Deno's fast
 * server closes the WebSockets it upgraded; and the requests that follow
 * while a read of ours is still pending (a slow answer is watched for its
 * client leaving). As soon as a request has been answered with nothing of
 * the connection read ahead, {@linkcode serveHttp1} returns `"handoff"` and
 * the fast server serves the rest of the connection.
 *
 * What it takes: `Content-Length` or `chunked` bodies, `Expect:
 * 100-continue`, keep-alive and `Connection: close`, HTTP/1.0 (closed after
 * the answer), pipelined requests. A head larger than 64 KiB is answered
 * 431, a malformed one 400, HTTP/2 without upgrade 505; each closes the
 * connection. A body the handler did not read closes the connection after
 * the answer (its end cannot be found without reading it).
 *
 * @module
 */

import { closeQuietly } from "./connection_guard.ts";
import { concatBytes, fromBase64 } from "./encoding.ts";
import { acceptKey, ServerWebSocket } from "./websocket_server.ts";

/** Largest request line and headers. */
export const MAX_HEAD_BYTES = 64 * 1024;

/** An answer slower than this has its connection watched for the client leaving. */
const WATCH_AFTER_MS = 50;

const encoder = new TextEncoder();
const latin1 = new TextDecoder("latin1");

/** What a request served here may do besides answering. */
export interface Http1Request {
  /** Aborted when the client has closed the connection before the answer. */
  clientGone: AbortSignal;
  /**
   * Accepts a WebSocket upgrade (the standard `Deno.upgradeWebSocket`'s
   * shape): answer with `response`; `socket` opens once the 101 is written.
   * Throws a `TypeError` for a request that is not a valid upgrade.
   */
  upgradeWebSocket(
    request: Request,
    options: { idleTimeout: number },
  ): { socket: ServerWebSocket; response: Response };
}

/** Options of {@linkcode serveHttp1}. */
export interface Http1Options {
  /** `http://host:port` of the listener, for a request without `Host`. */
  origin: string;
  /** Answers a request. */
  handle(request: Request, extra: Http1Request): Promise<Response>;
  /** Largest WebSocket message. */
  maxMessageBytes: number;
}

/** Why a request could not be read: the status to answer. */
class BadHead extends Error {
  constructor(readonly status: number, message: string) {
    super(message);
  }
}

/**
 * The unread bytes of a connection and the one read that may be in flight.
 * Bytes are read into one buffer that doubles when full (a head trickled
 * byte by byte costs linear time); what {@linkcode Reader.take} returns is
 * valid until the next read.
 */
class Reader {
  eof = false;
  pending: Promise<void> | undefined;
  #store = new Uint8Array(4096);
  #start = 0;
  #end = 0;
  constructor(readonly conn: Deno.Conn) {}

  /** The bytes read and not taken. */
  get buf(): Uint8Array {
    return this.#store.subarray(this.#start, this.#end);
  }

  /** Lets go of the buffer (the connection went to the fast server or became a WebSocket). */
  release(): void {
    this.#store = new Uint8Array(0);
    this.#start = this.#end = 0;
  }

  /** Reads once more (or waits for the read in flight); false at the end of the stream. */
  more(): Promise<boolean> {
    this.pending ??= this.#read();
    return this.pending.then(() => !this.eof);
  }

  async #read(): Promise<void> {
    try {
      if (this.#start === this.#end) this.#start = this.#end = 0;
      if (this.#store.length - this.#end < 1024) {
        const live = this.#end - this.#start;
        const grown = new Uint8Array(Math.max(4096, live * 2 + 1024));
        grown.set(this.#store.subarray(this.#start, this.#end));
        this.#store = grown;
        this.#start = 0;
        this.#end = live;
      }
      const n = await this.conn.read(this.#store.subarray(this.#end));
      if (n === null) this.eof = true;
      else this.#end += n;
    } catch {
      this.eof = true;
    } finally {
      this.pending = undefined;
    }
  }

  /** The next `n` bytes (valid until the next read). */
  take(n: number): Uint8Array {
    const out = this.#store.subarray(this.#start, this.#start + n);
    this.#start += n;
    return out;
  }
}

/**
 * Serves requests on `conn` until the fast server can take it
 * (`"handoff"`), it became a WebSocket (`"upgraded"`), or it is closed
 * (`"closed"`).
 */
export async function serveHttp1(
  conn: Deno.Conn,
  options: Http1Options,
): Promise<"handoff" | "upgraded" | "closed"> {
  // small writes (an answer after `100 Continue`, WebSocket frames) go out at once
  (conn as Deno.TcpConn).setNoDelay?.(true);
  const reader = new Reader(conn);
  const close = async (unread = false) => {
    if (unread) await lingeringClose(conn, reader);
    closeQuietly(conn);
    return "closed" as const;
  };
  try {
    for (;;) {
      let head: Head | undefined;
      try {
        head = await readHead(reader);
      } catch (e) {
        if (e instanceof BadHead) await writeAll(conn, plainAnswer(e.status, e.message));
        return close();
      }
      if (!head) return close();
      const outcome = await serveOne(conn, reader, head, options);
      if (outcome === "upgraded") return outcome;
      if (outcome !== "next") return await close(outcome === "unread");
      if (reader.buf.length === 0 && !reader.pending && !reader.eof) {
        reader.release();
        return "handoff";
      }
    }
  } catch {
    return close();
  }
}

interface Head {
  method: string;
  target: string;
  http10: boolean;
  headers: [string, string][];
}

async function readHead(reader: Reader): Promise<Head | undefined> {
  let from = 0; // where the end of the head may start (bytes before were looked at)
  for (;;) {
    // blank lines before a request are allowed (RFC 9112 section 2.2)
    while (reader.buf.length >= 2 && reader.buf[0] === 13 && reader.buf[1] === 10) {
      reader.take(2);
      from = 0;
    }
    const end = headEnd(reader.buf, from);
    if (end !== -1 && end <= MAX_HEAD_BYTES) {
      return parseHead(latin1.decode(reader.take(end + 4)).slice(0, -4));
    }
    if (reader.buf.length > MAX_HEAD_BYTES) {
      throw new BadHead(431, "Request header fields too large.");
    }
    from = Math.max(0, reader.buf.length - 3);
    if (!(await reader.more())) {
      if (reader.buf.length === 0) return undefined;
      throw new BadHead(400, "The request ended inside its head.");
    }
  }
}

function headEnd(b: Uint8Array, from: number): number {
  for (let i = b.indexOf(13, from); i !== -1 && i + 3 < b.length; i = b.indexOf(13, i + 1)) {
    if (b[i + 1] === 10 && b[i + 2] === 13 && b[i + 3] === 10) return i;
  }
  return -1;
}

const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

function parseHead(text: string): Head {
  const lines = text.split("\r\n");
  const line = lines[0].split(" ");
  if (line.length !== 3 || !TOKEN.test(line[0]) || line[1] === "") {
    throw new BadHead(400, "Bad request line.");
  }
  const [method, target, version] = line;
  if (version === "HTTP/2.0") throw new BadHead(505, "HTTP/2 needs an upgrade; use HTTP/1.1.");
  if (version !== "HTTP/1.1" && version !== "HTTP/1.0") {
    throw new BadHead(505, "HTTP version not supported.");
  }
  const headers: [string, string][] = [];
  for (let i = 1; i < lines.length; i++) {
    const l = lines[i];
    const colon = l.indexOf(":");
    if (colon <= 0 || !TOKEN.test(l.slice(0, colon))) throw new BadHead(400, "Bad header line.");
    headers.push([l.slice(0, colon), l.slice(colon + 1).trim()]);
  }
  return { method, target, http10: version === "HTTP/1.0", headers };
}

/** How a request's body is framed: bytes left of a `Content-Length`, or `chunked`. */
interface Framing {
  length: number;
  chunked: boolean;
  done: boolean;
}

async function serveOne(
  conn: Deno.Conn,
  reader: Reader,
  head: Head,
  options: Http1Options,
): Promise<"next" | "upgraded" | "closed" | "unread"> {
  const refuse = async (status: number, message: string) => {
    await writeAll(conn, plainAnswer(status, message));
    return "closed" as const;
  };
  let headers: Headers;
  try {
    headers = new Headers(head.headers);
  } catch {
    return await refuse(400, "Bad header value.");
  }
  const te = headers.get("transfer-encoding");
  const cl = headers.get("content-length");
  if (te !== null && (cl !== null || te.toLowerCase() !== "chunked")) {
    return await refuse(te.toLowerCase() === "chunked" ? 400 : 501, "Bad body framing.");
  }
  if (cl !== null && !/^\d{1,15}$/.test(cl)) return await refuse(400, "Bad Content-Length.");
  const framing: Framing = {
    length: cl === null ? 0 : Number(cl),
    chunked: te !== null,
    done: cl === null && te === null || cl === "0",
  };
  const noBody = head.method === "GET" || head.method === "HEAD";
  let continued = headers.get("expect")?.toLowerCase() !== "100-continue";
  // a body already read whole (the usual small JSON-RPC one) is given as bytes, not a stream
  const whole = !framing.done && !noBody && !framing.chunked && reader.buf.length >= framing.length;
  if (whole) framing.done = true;
  const body = whole
    ? reader.take(framing.length).slice()
    : framing.done || noBody
    ? null
    : bodyStream(reader, framing, async () => {
      if (continued) return;
      continued = true;
      if (reader.buf.length === 0) {
        await writeAll(conn, encoder.encode("HTTP/1.1 100 Continue\r\n\r\n"));
      }
    });
  const url = head.target.startsWith("/")
    ? `${headers.has("host") ? `http://${headers.get("host")}` : options.origin}${head.target}`
    : head.target;
  let request: Request;
  try {
    request = new Request(url, {
      method: head.method,
      headers,
      body,
      ...(body ? { duplex: "half" } : {}),
    } as RequestInit);
  } catch {
    return await refuse(400, "Bad request target.");
  }
  const gone = new AbortController();
  const upgrades = new WeakMap<Response, { socket: ServerWebSocket; key: string }>();
  const extra: Http1Request = {
    clientGone: gone.signal,
    upgradeWebSocket(req, { idleTimeout }) {
      const key = req.headers.get("sec-websocket-key") ?? "";
      if (
        req.method !== "GET" || req.headers.get("upgrade")?.toLowerCase() !== "websocket" ||
        !/(^|,)\s*upgrade\s*(,|$)/i.test(req.headers.get("connection") ?? "") ||
        req.headers.get("sec-websocket-version") !== "13" ||
        base64Length(key) !== 16
      ) throw new TypeError("Invalid WebSocket upgrade request.");
      const socket = new ServerWebSocket({
        idleTimeoutSeconds: idleTimeout,
        maxMessageBytes: options.maxMessageBytes,
      });
      const response = new Response(null, { status: 200 });
      upgrades.set(response, { socket, key });
      return { socket, response };
    },
  };
  const answering = options.handle(request, extra);
  // watch for the client leaving once its request is in and the answer is slow
  let watching = true;
  const watch = setTimeout(async () => {
    while (watching && !reader.eof && (framing.done || noBody)) {
      await reader.more();
      if (reader.eof) gone.abort();
      if (reader.buf.length > 0) break; // the next request (pipelined): the client is there
    }
  }, WATCH_AFTER_MS);
  let response: Response;
  try {
    response = await answering;
  } finally {
    watching = false;
    clearTimeout(watch);
  }
  const upgrade = upgrades.get(response);
  if (upgrade) {
    const accept = await acceptKey(upgrade.key);
    await writeAll(
      conn,
      encoder.encode(
        "HTTP/1.1 101 Switching Protocols\r\nupgrade: websocket\r\nconnection: Upgrade\r\n" +
          `sec-websocket-accept: ${accept}\r\n\r\n`,
      ),
    );
    if (reader.pending) await reader.pending;
    upgrade.socket.start(conn, reader.take(reader.buf.length).slice());
    reader.release();
    return "upgraded";
  }
  const closing = head.http10 ||
    /(^|,)\s*close\s*(,|$)/i.test(headers.get("connection") ?? "") ||
    response.headers.get("connection")?.toLowerCase() === "close" ||
    !framing.done || reader.eof;
  await writeAll(conn, await serialize(response, head.method === "HEAD", closing));
  return !closing ? "next" : framing.done ? "closed" : "unread";
}

/** Time and bytes a connection closed with its body unread is drained for. */
const LINGER_MS = 2_000;
const LINGER_BYTES = 4 * 1024 * 1024;

/**
 * Closes our side for writing, then reads and discards what the client still
 * sends for a moment: closing with unread input would reset the connection,
 * and the reset can destroy the answer before the client reads it.
 */
async function lingeringClose(conn: Deno.Conn, reader: Reader): Promise<void> {
  try {
    await conn.closeWrite();
  } catch {
    return;
  }
  const until = Date.now() + LINGER_MS;
  let drained = 0;
  const timer = setTimeout(() => closeQuietly(conn), LINGER_MS);
  try {
    while (Date.now() < until && drained < LINGER_BYTES && (await reader.more())) {
      drained += reader.buf.length;
      reader.take(reader.buf.length);
    }
  } finally {
    clearTimeout(timer);
  }
}

/** The body as a stream that reads `framing`'s bytes from `reader`. */
function bodyStream(
  reader: Reader,
  framing: Framing,
  beforeFirstRead: () => Promise<void>,
): ReadableStream<Uint8Array> {
  let chunkLeft = 0;
  const need = async () => {
    if (reader.buf.length === 0) {
      await beforeFirstRead();
      if (!(await reader.more())) {
        throw new Error("The client closed the connection inside the body.");
      }
    }
  };
  /** Reads a CRLF-ended line of the chunked framing. */
  const line = async (): Promise<string> => {
    for (;;) {
      const at = reader.buf.indexOf(10);
      if (at !== -1) return latin1.decode(reader.take(at + 1)).trim();
      if (reader.buf.length > 4096) throw new Error("A chunk line is too long.");
      if (!(await reader.more())) {
        throw new Error("The client closed the connection inside the body.");
      }
    }
  };
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        if (!framing.chunked) {
          await need();
          const part = reader.take(Math.min(framing.length, reader.buf.length)).slice();
          framing.length -= part.length;
          controller.enqueue(part);
          if (framing.length === 0) {
            framing.done = true;
            controller.close();
          }
          return;
        }
        if (chunkLeft === 0) {
          await beforeFirstRead();
          const size = parseInt((await line()).split(";")[0], 16);
          if (!Number.isFinite(size) || size < 0) throw new Error("Bad chunk size.");
          if (size === 0) {
            // trailers, if any, end at an empty line
            while ((await line()) !== "") { /* skipped */ }
            framing.done = true;
            controller.close();
            return;
          }
          chunkLeft = size;
        }
        await need();
        const part = reader.take(Math.min(chunkLeft, reader.buf.length)).slice();
        chunkLeft -= part.length;
        controller.enqueue(part);
        if (chunkLeft === 0) await line(); // the CRLF after the chunk
      } catch (e) {
        controller.error(e);
      }
    },
  });
}

const REASONS: Record<number, string> = {
  200: "OK",
  204: "No Content",
  400: "Bad Request",
  403: "Forbidden",
  404: "Not Found",
  405: "Method Not Allowed",
  408: "Request Timeout",
  413: "Content Too Large",
  431: "Request Header Fields Too Large",
  500: "Internal Server Error",
  501: "Not Implemented",
  503: "Service Unavailable",
  505: "HTTP Version Not Supported",
};

let dateSecond = 0;
let dateText = "";

/** The answer's bytes: head and whole body, `Content-Length` framed. */
async function serialize(
  response: Response,
  isHead: boolean,
  closing: boolean,
): Promise<Uint8Array> {
  const status = response.status;
  const bodyless = status === 204 || status === 304 || status < 200;
  const body = bodyless || !response.body
    ? new Uint8Array(0)
    : new Uint8Array(await response.arrayBuffer());
  const now = Math.floor(Date.now() / 1000);
  if (now !== dateSecond) {
    dateSecond = now;
    dateText = new Date(now * 1000).toUTCString();
  }
  let head = `HTTP/1.1 ${status} ${response.statusText || REASONS[status] || ""}\r\n`;
  for (const [k, v] of response.headers) {
    if (k !== "content-length" && k !== "transfer-encoding" && k !== "connection") {
      head += `${k}: ${v}\r\n`;
    }
  }
  if (closing) head += "connection: close\r\n";
  if (!bodyless) head += `content-length: ${body.length}\r\n`;
  head += `date: ${dateText}\r\n\r\n`;
  return isHead ? encoder.encode(head) : concatBytes([encoder.encode(head), body]);
}

function plainAnswer(status: number, message: string): Uint8Array {
  const body = encoder.encode(message);
  return concatBytes([
    encoder.encode(
      `HTTP/1.1 ${status} ${REASONS[status] ?? ""}\r\ncontent-type: text/plain\r\n` +
        `content-length: ${body.length}\r\nconnection: close\r\n\r\n`,
    ),
    body,
  ]);
}

async function writeAll(conn: Deno.Conn, bytes: Uint8Array): Promise<void> {
  let off = 0;
  while (off < bytes.length) off += await conn.write(bytes.subarray(off));
}

/** Bytes a base64 text decodes to, or -1 when it is not base64. */
function base64Length(b64: string): number {
  try {
    return fromBase64(b64).length;
  } catch {
    return -1;
  }
}
