/**
 * One keep-alive HTTP/1.1 connection to a node (`http:` or, over TLS,
 * `https:`): requests written from a reused buffer, answers read from the
 * bytes (`Content-Length`, chunked, or to the connection's end; a head
 * parsed without making a string of it).
 *
 * @module
 */

import { concatBytes } from "../core/mod.ts";
import { NodeConnection, UpstreamError } from "./node_connection.ts";

const encoder = new TextEncoder();
const decoder = new TextDecoder();
const CRLFCRLF = [13, 10, 13, 10];

/** Bodies up to this many UTF-16 units are written through a connection's reused buffer. */
export const SMALL_REQUEST_UNITS = 16 * 1024;

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
export class HttpConnection extends NodeConnection {
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
        // #readStreamed.
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
        if (res === STREAMED) res = await this.#readStreamed();
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
   * that ends with the connection (then `#readStreamed` reads it).
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

  /**
   * A chunked answer, or one that ends with the connection, whose head
   * `#takeWhole` found whole at the start of the buffer (parsed
   * again here: these answers are rare).
   */
  async #readStreamed(): Promise<Answer> {
    const headEnd = indexOf(this.#buf, this.#len, CRLFCRLF);
    const head = parseHead(this.#buf, headEnd);
    this.#consume(headEnd + 4);
    let body: Uint8Array;
    if (head.chunked) body = await this.#readChunked();
    else {
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
