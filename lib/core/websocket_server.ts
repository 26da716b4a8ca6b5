/**
 * The server side of a WebSocket (RFC 6455) on a connection the program
 * upgraded itself (`http1.ts`): Deno's own WebSocket cannot be used there,
 * because Deno's fast per-connection HTTP server closes the sockets it
 * upgraded as soon as the connection's HTTP part ends (`http_engine.ts`).
 *
 * It offers what the bridge's WebSocket transport uses of the standard
 * `WebSocket`: `send` (text), `close`, `readyState`, `bufferedAmount` and the
 * `message`, `close` and `error` events (text received as strings, binary
 * as `ArrayBuffer`). No extension is negotiated (a client's offer of
 * `permessage-deflate` is declined by not answering it). Bounds: a message
 * (all its fragments) of at most `maxMessageBytes` (close 1009); a frame
 * that breaks the protocol (unmasked, reserved bits, a bad control frame)
 * closes with 1002, text that is not UTF-8 with 1007; a connection silent
 * for half of `idleTimeoutSeconds` is pinged and closed when nothing comes
 * back by the end of it; a close handshake the client does not finish
 * within 5 s, or answers with more than 1 MiB of other frames, ends with the
 * connection.
 *
 * @module
 */

import { closeQuietly } from "./connection_guard.ts";
import { concatBytes, toBase64 } from "./encoding.ts";

/** The GUID of RFC 6455 section 1.3, for `Sec-WebSocket-Accept`. */
const GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";

/** Time the client has to answer our close frame before the connection is closed. */
const CLOSE_WAIT_MS = 5_000;

/** First read buffer: small, since a subscriber mostly listens (1,000 of them hold 1,000 of these). */
const FIRST_READ_BYTES = 256;

/** What a client may still send after our close frame before its connection is closed. */
const AFTER_CLOSE_BYTES = 1024 * 1024;

/** Largest encoding buffer a socket keeps for its text frames. */
const MAX_KEPT_OUT_BYTES = 64 * 1024;

/** How often idle sockets are looked for. */
const IDLE_CHECK_MS = 1_000;

/** Largest single read. */
const MAX_READ_BYTES = 64 * 1024;

const encoder = new TextEncoder();
const NO_BYTES = new Uint8Array(0);

/**
 * `Sec-WebSocket-Accept` for a client's `Sec-WebSocket-Key`.
 *
 * @example
 * ```ts
 * await acceptKey("dGhlIHNhbXBsZSBub25jZQ=="); // "s3pPLMBiTxaQ9kYGzzhZRbK+xOo="
 * ```
 */
export async function acceptKey(key: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-1", encoder.encode(key + GUID));
  return toBase64(new Uint8Array(digest));
}

/** Options of {@linkcode ServerWebSocket}. */
export interface ServerWebSocketOptions {
  /** Seconds of silence before a ping; closed when nothing came by twice that. 0: never. */
  idleTimeoutSeconds: number;
  /** Largest message, all fragments together. */
  maxMessageBytes: number;
}

/** A server-side WebSocket on a raw connection (see the module doc). */
export class ServerWebSocket extends EventTarget {
  /** `WebSocket.CONNECTING` until {@linkcode ServerWebSocket.start}, then OPEN, CLOSING, CLOSED. */
  readyState: number = WebSocket.CONNECTING;
  /** Bytes of messages queued and not yet written. */
  bufferedAmount = 0;
  /** Standard handler properties (one each, beside `addEventListener`). */
  onmessage: ((e: MessageEvent) => void) | null = null;
  /** Called once the socket has closed. */
  onclose: ((e: CloseEvent) => void) | null = null;
  /** Called when the connection failed. */
  onerror: ((e: Event) => void) | null = null;

  readonly #options: ServerWebSocketOptions;
  #conn: Deno.Conn | undefined;
  /** Text messages (strings) and ready frames, in order. */
  #queue: (string | Uint8Array)[] = [];
  /** Where text frames are encoded before their write: kept, so that sending makes no garbage. */
  #out = new Uint8Array(0);
  /** Whether a write is in flight: of `#item`, as `#bytes`, `#written` of them so far. */
  #writing = false;
  #item: string | Uint8Array | undefined;
  #bytes: Uint8Array = NO_BYTES;
  #written = 0;
  #lastHeard = Date.now();
  #pinged = false;
  #closeSent = false;
  #ended = false;

  /** A socket not yet started. */
  constructor(options: ServerWebSocketOptions) {
    super();
    this.#options = options;
  }

  /** Starts reading `conn` (after the 101 was written); `rest`: bytes already read past the request. */
  start(conn: Deno.Conn, rest: Uint8Array): void {
    this.#conn = conn;
    this.readyState = WebSocket.OPEN;
    if (this.#options.idleTimeoutSeconds > 0) watchIdle(this);
    void this.#readLoop(rest);
  }

  /**
   * Sends a text message; ignored unless open. `bufferedAmount` counts it in
   * characters (its UTF-8 bytes for ASCII).
   */
  send(text: string): void {
    if (this.readyState !== WebSocket.OPEN) return;
    this.bufferedAmount += text.length;
    this.#enqueue(text);
  }

  /** Starts the closing handshake (code 1000 unless given). */
  close(code = 1000, reason = ""): void {
    if (this.readyState === WebSocket.CONNECTING) {
      this.#finish(1006, "", false);
      return;
    }
    if (this.readyState !== WebSocket.OPEN) return;
    this.#closeWithin(code, reason, CLOSE_WAIT_MS);
  }

  /** Fires `event` to its listeners and its `on…` property. */
  #fire(event: Event): void {
    const own = event.type === "message"
      ? this.onmessage
      : event.type === "close"
      ? this.onclose
      : this.onerror;
    try {
      (own as ((e: Event) => void) | null)?.(event);
    } finally {
      this.dispatchEvent(event);
    }
  }

  #sendClose(code: number, reason: string): void {
    if (this.#closeSent) return;
    this.#closeSent = true;
    const r = encoder.encode(reason).subarray(0, 123);
    const payload = new Uint8Array(2 + r.length);
    payload[0] = code >> 8;
    payload[1] = code & 0xff;
    payload.set(r, 2);
    this.#enqueue(frame(8, code === 1005 ? new Uint8Array(0) : payload));
  }

  /** Writes `item` now, or after what is being written (nothing is queued while idle). */
  #enqueue(item: string | Uint8Array): void {
    if (this.#writing) this.#queue.push(item);
    else this.#writeItem(item);
  }

  /**
   * A text frame of `text`. The same text sent again right after, by any
   * socket (a notification fanned out to every subscriber), is encoded once
   * into a frame they all write; other texts go into this socket's kept
   * buffer, sized to the text (ASCII: its length), not to its worst case.
   */
  #textFrame(text: string): Uint8Array {
    if (text === shared.text) return shared.frame;
    if (text === shared.last) {
      shared.text = text;
      shared.frame = frame(1, encoder.encode(text));
      return shared.frame;
    }
    shared.last = text;
    const { read, written } = encoder.encodeInto(text, this.#out.subarray(10));
    if (read === text.length && this.#out.length >= 10) {
      return this.#out.subarray(putHead(this.#out, 1, written), 10 + written);
    }
    const bytes = encoder.encode(text);
    const size = Math.ceil((10 + bytes.length) / 256) * 256;
    if (size > MAX_KEPT_OUT_BYTES) return frame(1, bytes); // large: not kept
    this.#out = new Uint8Array(size);
    this.#out.set(bytes, 10);
    return this.#out.subarray(putHead(this.#out, 1, bytes.length), 10 + bytes.length);
  }

  /**
   * Writes one item, then the next queued one when it is written. Written
   * with `then` and two callbacks made once per socket rather than an `async`
   * loop: a block fanned out to 1,000 sockets starts 1,000 writes at once, and
   * what each one allocates while in flight outlives a young-generation
   * collection and is promoted (an async loop's frame and promise, a queue's
   * storage: the old generation grew by megabytes a second of such garbage).
   */
  #writeItem(item: string | Uint8Array): void {
    if (!this.#conn) return;
    this.#writing = true;
    this.#item = item;
    this.#bytes = typeof item === "string" ? this.#textFrame(item) : item;
    this.#written = 0;
    this.#write(this.#bytes);
  }

  #write(bytes: Uint8Array): void {
    try {
      this.#conn!.write(bytes).then(this.#onWritten, this.#onWriteFailed);
    } catch {
      this.#onWriteFailed();
    }
  }

  readonly #onWritten = (n: number): void => {
    try {
      this.#written += n;
      if (this.#written < this.#bytes.length) {
        this.#write(this.#bytes.subarray(this.#written));
        return;
      }
      if (typeof this.#item === "string") this.bufferedAmount -= this.#item.length;
      const next = this.#queue.shift();
      if (next !== undefined) return this.#writeItem(next);
      this.#writing = false;
      this.#item = undefined;
      this.#bytes = NO_BYTES;
    } catch {
      this.#onWriteFailed();
    }
  };

  readonly #onWriteFailed = (): void => {
    this.#writing = false;
    this.#fail();
  };

  /** Pings a socket silent for half its idle time; closes one silent for all of it. */
  checkIdle(): void {
    const idleMs = this.#options.idleTimeoutSeconds * 1000;
    const quiet = Date.now() - this.#lastHeard;
    if (quiet >= idleMs) {
      this.#finish(1001, "idle: no answer to a ping", false);
    } else if (quiet >= idleMs / 2 && !this.#pinged && this.readyState === WebSocket.OPEN) {
      this.#pinged = true;
      this.#enqueue(frame(9, new Uint8Array(0)));
    }
  }

  async #readLoop(first: Uint8Array): Promise<void> {
    let buf = first;
    const message: Uint8Array[] = [];
    let messageBytes = 0;
    let messageOp = 0;
    let afterClose = 0;
    const need = async (n: number): Promise<boolean> => {
      while (buf.length < n) {
        const chunk = new Uint8Array(
          Math.min(MAX_READ_BYTES, Math.max(FIRST_READ_BYTES, n - buf.length)),
        );
        const got = await this.#conn!.read(chunk);
        if (got === null) return false;
        if (this.#closeSent && (afterClose += got) > AFTER_CLOSE_BYTES) return false;
        this.#lastHeard = Date.now();
        this.#pinged = false;
        buf = concatBytes([buf, chunk.subarray(0, got)]);
      }
      return true;
    };
    try {
      for (;;) {
        if (!(await need(2))) break;
        const fin = (buf[0] & 0x80) !== 0;
        const op = buf[0] & 0x0f;
        let len = buf[1] & 0x7f;
        let at = 2;
        if ((buf[0] & 0x70) !== 0 || (buf[1] & 0x80) === 0) {
          return this.#closeWithin(1002, "bad frame");
        }
        if (len === 126) {
          if (!(await need(4))) break;
          len = (buf[2] << 8) | buf[3];
          at = 4;
        } else if (len === 127) {
          if (!(await need(10))) break;
          const n = new DataView(buf.buffer, buf.byteOffset, 10).getBigUint64(2);
          if (n > BigInt(this.#options.maxMessageBytes)) return this.#tooBig();
          len = Number(n);
          at = 10;
        }
        const control = op >= 8;
        if (control && (!fin || len > 125)) return this.#closeWithin(1002, "bad control frame");
        if (!control && messageBytes + len > this.#options.maxMessageBytes) return this.#tooBig();
        if (!(await need(at + 4 + len))) break;
        const mask = buf.subarray(at, at + 4);
        const payload = buf.slice(at + 4, at + 4 + len);
        for (let i = 0; i < payload.length; i++) payload[i] ^= mask[i & 3];
        buf = buf.subarray(at + 4 + len);
        if (op === 8) {
          const code = payload.length >= 2 ? (payload[0] << 8) | payload[1] : 1005;
          const reason = payload.length > 2 ? new TextDecoder().decode(payload.subarray(2)) : "";
          this.#sendClose(code === 1005 ? 1000 : code, "");
          this.#finish(code, reason, true);
          return;
        }
        if (op === 9) {
          if (this.readyState === WebSocket.OPEN) this.#enqueue(frame(10, payload));
          continue;
        }
        if (op === 10) continue;
        if (op === 0 ? messageOp === 0 : (op !== 1 && op !== 2) || messageOp !== 0) {
          return this.#closeWithin(1002, "bad fragment");
        }
        if (op !== 0) messageOp = op;
        message.push(payload);
        messageBytes += payload.length;
        if (!fin) continue;
        const whole = message.length === 1 ? message[0] : concatBytes(message);
        const isText = messageOp === 1;
        message.length = 0;
        messageBytes = 0;
        messageOp = 0;
        let data: string | ArrayBuffer;
        if (isText) {
          try {
            data = new TextDecoder("utf-8", { fatal: true }).decode(whole);
          } catch {
            return this.#closeWithin(1007, "text is not UTF-8");
          }
        } else data = whole.slice().buffer;
        if (this.readyState === WebSocket.OPEN) this.#fire(new MessageEvent("message", { data }));
      }
      this.#finish(1006, "", false);
    } catch {
      this.#fail();
    }
  }

  /** Sends our close frame; the connection ends `waitMs` later at the latest (100 ms: a protocol error). */
  #closeWithin(code: number, reason: string, waitMs = 100): void {
    this.readyState = WebSocket.CLOSING;
    this.#sendClose(code, reason);
    const t = setTimeout(() => this.#finish(code, reason, false), waitMs);
    Deno.unrefTimer(t);
  }

  #tooBig(): void {
    this.#closeWithin(1009, "message too big");
  }

  #fail(): void {
    if (this.#ended) return;
    this.#fire(new Event("error"));
    this.#finish(1006, "", false);
  }

  #finish(code: number, reason: string, wasClean: boolean): void {
    if (this.#ended) return;
    this.#ended = true;
    open.delete(this);
    const end = () => {
      closeQuietly(this.#conn);
      this.readyState = WebSocket.CLOSED;
      this.#fire(
        new CloseEvent("close", { code, reason, wasClean }),
      );
    };
    // what is queued (our close frame among it) goes out first, unless the connection failed
    if (this.#writing && wasClean) {
      const wait = setInterval(() => {
        if (!this.#writing) {
          clearInterval(wait);
          end();
        }
      }, 10);
    } else end();
  }
}

/**
 * The last text encoded by any socket, and the frame of the last text
 * encoded twice in a row: shared by every socket that sends it (a frame is
 * never written into once made, so sockets still writing it are safe).
 */
const shared: { last?: string; text?: string; frame: Uint8Array } = { frame: new Uint8Array(0) };

/** The open sockets with an idle timeout, checked by one timer (not one each). */
const open = new Set<ServerWebSocket>();
let sweep: ReturnType<typeof setInterval> | undefined;

function watchIdle(socket: ServerWebSocket): void {
  open.add(socket);
  sweep ??= setInterval(() => {
    for (const s of open) s.checkIdle();
    if (open.size === 0) {
      clearInterval(sweep);
      sweep = undefined;
    }
  }, IDLE_CHECK_MS);
  Deno.unrefTimer(sweep);
}

/**
 * Writes the head of an unmasked frame (server to client) with FIN set, of
 * opcode `op` and `n` payload bytes, into `out` so that it ends at index 10
 * (where the payload starts); returns where the head starts.
 */
function putHead(out: Uint8Array, op: number, n: number): number {
  const at = n < 126 ? 8 : n < 65536 ? 6 : 0;
  out[at] = 0x80 | op;
  if (n < 126) out[at + 1] = n;
  else if (n < 65536) {
    out[at + 1] = 126;
    new DataView(out.buffer, out.byteOffset).setUint16(at + 2, n);
  } else {
    out[at + 1] = 127;
    new DataView(out.buffer, out.byteOffset).setBigUint64(at + 2, BigInt(n));
  }
  return at;
}

/** One unmasked frame (server to client) with FIN set. */
function frame(op: number, payload: Uint8Array): Uint8Array {
  const out = new Uint8Array(10 + payload.length);
  out.set(payload, 10);
  return out.subarray(putHead(out, op, payload.length));
}
