/**
 * A WebSocket client written on a bare TCP socket, for what a library client
 * cannot do: send the handshake with any `Host`/`Origin`, see the HTTP
 * status of a refused upgrade, and send requests without ever reading (a
 * slow client), then read the close frame the server sent.
 *
 * @module
 */

const enc = new TextEncoder();
const dec = new TextDecoder();

/** The answer to a handshake: the status line and, when upgraded, the open socket. */
export interface RawHandshake {
  status: number;
  /** The response head and any body bytes read with it (for refusals). */
  text: string;
  conn: Deno.TcpConn;
  /** Bytes read past the response head (the first frames). */
  rest: Uint8Array;
}

/** Opens a TCP connection to `url` (ws://host:port/path) and sends an upgrade request. */
export async function rawHandshake(
  url: string,
  headers: Record<string, string> = {},
): Promise<RawHandshake> {
  const u = new URL(url);
  const conn = await Deno.connect({ hostname: u.hostname, port: Number(u.port) });
  const key = btoa(String.fromCharCode(...crypto.getRandomValues(new Uint8Array(16))));
  const all: Record<string, string> = {
    Host: u.host,
    Upgrade: "websocket",
    Connection: "Upgrade",
    "Sec-WebSocket-Key": key,
    "Sec-WebSocket-Version": "13",
    ...headers,
  };
  const head = `GET ${u.pathname} HTTP/1.1\r\n` +
    Object.entries(all).map(([k, v]) => `${k}: ${v}\r\n`).join("") + "\r\n";
  await writeAll(conn, enc.encode(head));
  let buf: Uint8Array = new Uint8Array(0);
  const chunk = new Uint8Array(65536);
  let end = -1;
  while ((end = findHeadEnd(buf)) === -1) {
    const n = await conn.read(chunk);
    if (n === null) break;
    buf = concat(buf, chunk.subarray(0, n));
  }
  const headText = dec.decode(end === -1 ? buf : buf.subarray(0, end));
  const status = Number(headText.split(" ")[1]);
  let rest: Uint8Array = end === -1 ? new Uint8Array(0) : buf.subarray(end + 4);
  let text = headText;
  if (status !== 101) {
    // read the (short) body of the refusal
    const m = headText.match(/content-length:\s*(\d+)/i);
    const want = m ? Number(m[1]) : 0;
    while (rest.length < want) {
      const n = await conn.read(chunk);
      if (n === null) break;
      rest = concat(rest, chunk.subarray(0, n));
    }
    text += "\r\n\r\n" + dec.decode(rest);
  }
  return { status, text, conn, rest };
}

function findHeadEnd(b: Uint8Array): number {
  for (let i = 0; i + 3 < b.length; i++) {
    if (b[i] === 13 && b[i + 1] === 10 && b[i + 2] === 13 && b[i + 3] === 10) return i;
  }
  return -1;
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
}

async function writeAll(conn: Deno.Conn, bytes: Uint8Array): Promise<void> {
  let o = 0;
  while (o < bytes.length) o += await conn.write(bytes.subarray(o));
}

/** One masked text frame (clients must mask). */
export function textFrame(text: string): Uint8Array {
  const payload = enc.encode(text);
  const len = payload.length;
  const headLen = len < 126 ? 2 : len < 65536 ? 4 : 10;
  const out = new Uint8Array(headLen + 4 + len);
  out[0] = 0x81;
  if (len < 126) out[1] = 0x80 | len;
  else if (len < 65536) {
    out[1] = 0x80 | 126;
    out[2] = len >> 8;
    out[3] = len & 255;
  } else {
    out[1] = 0x80 | 127;
    new DataView(out.buffer).setBigUint64(2, BigInt(len));
  }
  const mask = crypto.getRandomValues(new Uint8Array(4));
  out.set(mask, headLen);
  for (let i = 0; i < len; i++) out[headLen + 4 + i] = payload[i] ^ mask[i & 3];
  return out;
}

/** Sends text frames. */
export async function sendText(conn: Deno.Conn, texts: string[]): Promise<void> {
  const frames = texts.map(textFrame);
  let total = 0;
  for (const f of frames) total += f.length;
  const all = new Uint8Array(total);
  let o = 0;
  for (const f of frames) {
    all.set(f, o);
    o += f.length;
  }
  await writeAll(conn, all);
}

/** A server frame: opcode and payload. */
export interface Frame {
  opcode: number;
  payload: Uint8Array;
}

/**
 * Reads every frame until the server's close frame (or EOF); returns the text
 * frames' count and the close code and reason, if any.
 */
export async function readUntilClose(
  conn: Deno.Conn,
  initial: Uint8Array = new Uint8Array(0),
): Promise<{ texts: number; closeCode?: number; closeReason?: string; error?: string }> {
  let buf = initial;
  const chunk = new Uint8Array(1 << 20);
  let texts = 0;
  for (;;) {
    // parse what we have
    for (;;) {
      if (buf.length < 2) break;
      let len = buf[1] & 127;
      let off = 2;
      if (len === 126) {
        if (buf.length < 4) break;
        len = (buf[2] << 8) | buf[3];
        off = 4;
      } else if (len === 127) {
        if (buf.length < 10) break;
        len = Number(new DataView(buf.buffer, buf.byteOffset).getBigUint64(2));
        off = 10;
      }
      if (buf.length < off + len) break;
      const opcode = buf[0] & 15;
      const payload = buf.subarray(off, off + len);
      buf = buf.subarray(off + len);
      if (opcode === 1) texts++;
      if (opcode === 8) {
        const code = payload.length >= 2 ? (payload[0] << 8) | payload[1] : undefined;
        return { texts, closeCode: code, closeReason: dec.decode(payload.subarray(2)) };
      }
    }
    let n: number | null;
    try {
      n = await conn.read(chunk);
    } catch (e) {
      return { texts, error: String(e) };
    }
    if (n === null) return { texts };
    buf = concat(buf, chunk.subarray(0, n));
  }
}
