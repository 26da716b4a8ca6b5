/**
 * The program's own HTTP/1.1 for a connection's first requests and its own
 * WebSocket (`lib/core/http1.ts`, `lib/core/websocket_server.ts`), spoken to
 * by raw TCP clients on loopback: body framings, `100-continue`, pipelining,
 * HTTP/1.0, malformed heads, the hand-off to the fast server, and the
 * WebSocket frames a library client does not send (fragments, pings,
 * unmasked or oversized frames, bad UTF-8).
 */

import assert from "node:assert/strict";
import { serveHttp1 } from "../../lib/core/http1.ts";
import type { ServerWebSocket } from "../../lib/core/websocket_server.ts";

const enc = new TextEncoder();
const dec = new TextDecoder();

/** A listener whose connections `serveHttp1` serves; echoes the method and body. */
function echoServer(onSocket?: (s: ServerWebSocket) => void) {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const outcomes: string[] = [];
  (async () => {
    for await (const conn of listener) {
      serveHttp1(conn, {
        origin: "http://127.0.0.1",
        maxMessageBytes: 1024,
        handle: async (request, extra) => {
          if (request.headers.get("upgrade") === "websocket") {
            const { socket, response } = extra.upgradeWebSocket(request, { idleTimeout: 0 });
            socket.onmessage = (e) => socket.send(`echo ${e.data}`);
            onSocket?.(socket);
            return response;
          }
          const body = await request.text();
          return new Response(`${request.method} ${new URL(request.url).pathname} ${body}`);
        },
      }).then((o) => {
        outcomes.push(o);
        if (o === "handoff") conn.close();
      });
    }
  })();
  return {
    port: (listener.addr as Deno.NetAddr).port,
    outcomes,
    close: () => listener.close(),
  };
}

/** Sends `text` on a new connection and reads until the server closes it or `until` matches. */
async function exchange(
  port: number,
  text: string | Uint8Array[],
  until?: RegExp,
): Promise<string> {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  try {
    for (const part of typeof text === "string" ? [enc.encode(text)] : text) {
      await conn.write(part);
    }
    let got = "";
    const buf = new Uint8Array(65536);
    for (;;) {
      const n = await conn.read(buf);
      if (n === null) break;
      got += dec.decode(buf.subarray(0, n));
      if (until?.test(got)) break;
    }
    return got;
  } finally {
    conn.close();
  }
}

Deno.test("http1: a Content-Length body, then the connection is handed off", async () => {
  const s = echoServer();
  try {
    const got = await exchange(
      s.port,
      "POST /a HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello",
      /POST \/a hello$/,
    );
    assert.match(got, /^HTTP\/1\.1 200 OK\r\n/);
    assert.match(got, /content-length: 13\r\n/);
    assert.match(got, /\r\n\r\nPOST \/a hello$/);
    for (let i = 0; i < 50 && s.outcomes.length === 0; i++) {
      await new Promise((r) => setTimeout(r, 10));
    }
    assert.deepEqual(s.outcomes, ["handoff"]);
  } finally {
    s.close();
  }
});

Deno.test("http1: chunked bodies, pipelined requests and Connection: close", async () => {
  const s = echoServer();
  try {
    const got = await exchange(
      s.port,
      "POST /c HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n" +
        "3\r\nabc\r\n2;ext=1\r\nde\r\n0\r\nX-Trailer: 1\r\n\r\n" +
        "POST /d HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nConnection: close\r\n\r\nfg",
    );
    const answers = got.split("HTTP/1.1 200 OK").slice(1);
    assert.equal(answers.length, 2, got);
    assert.match(answers[0], /POST \/c abcde$/);
    assert.match(answers[1], /connection: close\r\n/);
    assert.match(answers[1], /POST \/d fg$/);
  } finally {
    s.close();
  }
});

Deno.test("http1: Expect: 100-continue is answered before the body is read", async () => {
  const s = echoServer();
  const conn = await Deno.connect({ hostname: "127.0.0.1", port: s.port });
  try {
    await conn.write(
      enc.encode(
        "POST /e HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nExpect: 100-continue\r\n\r\n",
      ),
    );
    const buf = new Uint8Array(1024);
    const n = await conn.read(buf);
    assert.equal(dec.decode(buf.subarray(0, n!)), "HTTP/1.1 100 Continue\r\n\r\n");
    await conn.write(enc.encode("xyz"));
    const m = await conn.read(buf);
    assert.match(dec.decode(buf.subarray(0, m!)), /POST \/e xyz$/);
  } finally {
    conn.close();
    s.close();
  }
});

Deno.test("http1: HTTP/1.0 is closed after its answer; bad heads get 400, 431, 505", async () => {
  const s = echoServer();
  try {
    const old = await exchange(s.port, "GET /o HTTP/1.0\r\n\r\n");
    assert.match(old, /^HTTP\/1\.1 200 OK\r\n[\s\S]*connection: close\r\n[\s\S]*GET \/o $/);
    assert.match(await exchange(s.port, "NOTAREQUEST\r\n\r\n"), /^HTTP\/1\.1 400 /);
    assert.match(await exchange(s.port, "GET / HTTP/1.1\r\nno colon\r\n\r\n"), /^HTTP\/1\.1 400 /);
    assert.match(
      await exchange(
        s.port,
        "POST / HTTP/1.1\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n",
      ),
      /^HTTP\/1\.1 400 /,
    );
    assert.match(await exchange(s.port, "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"), /^HTTP\/1\.1 505 /);
    const huge = `GET / HTTP/1.1\r\nX-Big: ${"a".repeat(70 * 1024)}\r\n\r\n`;
    assert.match(await exchange(s.port, huge), /^HTTP\/1\.1 431 /);
  } finally {
    s.close();
  }
});

/** A client frame (masked), optionally not final or not masked. */
function clientFrame(op: number, payload: Uint8Array, fin = true, masked = true): Uint8Array {
  const mask = masked ? crypto.getRandomValues(new Uint8Array(4)) : new Uint8Array(0);
  const len = payload.length;
  const head = len < 126 ? [len] : [126, len >> 8, len & 0xff];
  const out = new Uint8Array(1 + head.length + mask.length + len);
  out[0] = (fin ? 0x80 : 0) | op;
  out.set(head, 1);
  out[1] |= masked ? 0x80 : 0;
  out.set(mask, 1 + head.length);
  for (let i = 0; i < len; i++) {
    out[1 + head.length + mask.length + i] = payload[i] ^ (masked ? mask[i & 3] : 0);
  }
  return out;
}

const UPGRADE = "GET /ws HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" +
  "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n";

/** Server frames in `bytes` after the 101 head: [opcode, payload text]. */
function serverFrames(bytes: Uint8Array): [number, string][] {
  const text = dec.decode(bytes);
  let at = text.indexOf("\r\n\r\n") + 4;
  const out: [number, string][] = [];
  while (at + 2 <= bytes.length) {
    const op = bytes[at] & 0x0f;
    let len = bytes[at + 1] & 0x7f;
    let start = at + 2;
    if (len === 126) {
      len = (bytes[at + 2] << 8) | bytes[at + 3];
      start = at + 4;
    }
    if (start + len > bytes.length) break;
    out.push([op, String.fromCharCode(...bytes.subarray(start, start + len))]);
    at = start + len;
  }
  return out;
}

/** Upgrades, sends `frames`, and reads everything until the server closes. */
async function wsExchange(
  port: number,
  frames: Uint8Array[],
): Promise<{ head: string; frames: [number, string][] }> {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  try {
    await conn.write(enc.encode(UPGRADE));
    for (const f of frames) await conn.write(f);
    const chunks: Uint8Array[] = [];
    const buf = new Uint8Array(65536);
    for (;;) {
      const n = await conn.read(buf).catch(() => null);
      if (n === null) break;
      chunks.push(buf.slice(0, n));
    }
    const all = new Uint8Array(chunks.reduce((a, c) => a + c.length, 0));
    let o = 0;
    for (const c of chunks) {
      all.set(c, o);
      o += c.length;
    }
    return { head: dec.decode(all).split("\r\n\r\n")[0], frames: serverFrames(all) };
  } finally {
    try {
      conn.close();
    } catch { /* closed */ }
  }
}

Deno.test("websocket: the handshake, fragments reassembled, ping answered, close echoed", async () => {
  const s = echoServer();
  try {
    const got = await wsExchange(s.port, [
      clientFrame(1, enc.encode("hel"), false),
      clientFrame(9, enc.encode("p")), // a ping between fragments
      clientFrame(0, enc.encode("lo")),
      clientFrame(8, new Uint8Array([0x03, 0xe8])),
    ]);
    assert.match(got.head, /^HTTP\/1\.1 101 Switching Protocols/);
    assert.match(got.head, /sec-websocket-accept: s3pPLMBiTxaQ9kYGzzhZRbK\+xOo=/i);
    assert.deepEqual(got.frames, [[10, "p"], [1, "echo hello"], [8, "\u0003\u00e8"]]);
  } finally {
    s.close();
  }
});

Deno.test("websocket: unmasked frames (1002), oversized messages (1009) and bad UTF-8 (1007) close", async () => {
  const s = echoServer();
  const code = (frames: [number, string][]) => {
    const close = frames.find(([op]) => op === 8);
    return close ? (close[1].charCodeAt(0) << 8) | close[1].charCodeAt(1) : undefined;
  };
  try {
    assert.equal(
      code((await wsExchange(s.port, [clientFrame(1, enc.encode("x"), true, false)])).frames),
      1002,
    );
    const big = new Uint8Array(2000).fill(97);
    assert.equal(code((await wsExchange(s.port, [clientFrame(1, big)])).frames), 1009);
    assert.equal(
      code((await wsExchange(s.port, [clientFrame(1, new Uint8Array([0xff, 0xfe]))])).frames),
      1007,
    );
  } finally {
    s.close();
  }
});

Deno.test("bounded server: a WebSocket upgrade is served on a connection's first request only", async () => {
  const { serveBounded } = await import("../../lib/core/bounded_server.ts");
  const server = await serveBounded((request, info) => {
    if (request.headers.get("upgrade") !== "websocket") {
      return Promise.resolve(new Response("plain"));
    }
    try {
      const { socket, response } = info.upgradeWebSocket(request, { idleTimeout: 0 });
      socket.onmessage = (e) => socket.send(`echo ${e.data}`);
      return Promise.resolve(response);
    } catch (e) {
      return Promise.resolve(new Response((e as Error).message, { status: 400 }));
    }
  }, { hostname: "127.0.0.1", port: 0, upgrades: true });
  try {
    assert.equal(server.engine, "fast");
    // first request: upgraded, and the socket answers
    const got = await wsExchange(server.port, [
      clientFrame(1, enc.encode("hi")),
      clientFrame(8, new Uint8Array([0x03, 0xe8])),
    ]);
    assert.match(got.head, /^HTTP\/1\.1 101 /);
    assert.deepEqual(got.frames.slice(0, 1), [[1, "echo hi"]]);
    // after a plain request the connection is the fast server's: a later upgrade is refused
    const conn = await Deno.connect({ hostname: "127.0.0.1", port: server.port });
    try {
      const buf = new Uint8Array(4096);
      await conn.write(enc.encode("GET /a HTTP/1.1\r\nHost: x\r\n\r\n"));
      assert.match(
        dec.decode(buf.subarray(0, (await conn.read(buf))!)),
        /^HTTP\/1\.1 200 OK[\s\S]*plain$/,
      );
      await conn.write(enc.encode(UPGRADE));
      const later = dec.decode(buf.subarray(0, (await conn.read(buf))!));
      assert.match(later, /^HTTP\/1\.1 400 [\s\S]*first request on its connection/);
    } finally {
      conn.close();
    }
  } finally {
    await server.close();
  }
});

Deno.test("websocket: a text sent to many sockets (encoded once) and texts of every size arrive whole", async () => {
  const sockets: ServerWebSocket[] = [];
  const s = echoServer((socket) => sockets.push(socket));
  const clients: { ws: WebSocket; got: string[] }[] = [];
  try {
    for (let i = 0; i < 3; i++) {
      const ws = new WebSocket(`ws://127.0.0.1:${s.port}/ws`);
      const got: string[] = [];
      ws.onmessage = (e) => got.push(e.data);
      await new Promise((r) => ws.onopen = r);
      clients.push({ ws, got });
    }
    while (sockets.length < 3) await new Promise((r) => setTimeout(r, 10));
    const head = "é€😀".repeat(300) + "x".repeat(1000); // multi-byte, past a 256-byte buffer
    const texts = ["", "short", head, head, "ascii ".repeat(500), "", "short"];
    const each = (i: number) => [...texts, `only ${i}: ${"ü".repeat(i * 100)}`, head, ""];
    for (const t of [...texts, null, head, ""]) {
      // every socket sends the same text in turn (the fan-out), or one text of its own
      sockets.forEach((socket, i) => socket.send(t ?? `only ${i}: ${"ü".repeat(i * 100)}`));
    }
    const want = clients.map((_, i) => each(i));
    for (let i = 0; i < 200 && clients.some((c, n) => c.got.length < want[n].length); i++) {
      await new Promise((r) => setTimeout(r, 10));
    }
    clients.forEach((c, i) => assert.deepEqual(c.got, want[i]));
  } finally {
    for (const c of clients) c.ws.close();
    await new Promise((r) => setTimeout(r, 50));
    s.close();
  }
});
