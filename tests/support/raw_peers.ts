/**
 * Hostile or minimal peers over raw TCP for the flood tests: a WebSocket
 * handshake completed by hand (a peer that then never reads nor answers a
 * ping), and "has the server closed this connection yet".
 *
 * @module
 */

import assert from "node:assert/strict";

/** Opens a raw connection and completes a WebSocket handshake; returns it after the 101. */
export async function rawWebSocket(port: number, path = "/"): Promise<Deno.Conn> {
  const { conn, status } = await rawUpgrade(port, path);
  assert.equal(status, 101);
  return conn;
}

/** Opens a raw connection, asks for a WebSocket upgrade and returns it with the answer's status. */
export async function rawUpgrade(
  port: number,
  path = "/",
): Promise<{ conn: Deno.Conn; status: number }> {
  const c = await Deno.connect({ hostname: "127.0.0.1", port });
  await c.write(
    new TextEncoder().encode(
      `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nUpgrade: websocket\r\n` +
        "Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n" +
        "Sec-WebSocket-Version: 13\r\n\r\n",
    ),
  );
  const buf = new Uint8Array(1024);
  let head = "";
  while (!head.includes("\r\n\r\n")) {
    const n = await c.read(buf);
    if (n === null) throw new Error(`closed during the handshake: ${head}`);
    head += new TextDecoder().decode(buf.subarray(0, n));
  }
  return { conn: c, status: Number(head.slice(9, 12)) };
}

/** Resolves true once the peer closed `c` (EOF or reset), false after `ms`. */
export async function closedWithin(c: Deno.Conn, ms: number): Promise<boolean> {
  const buf = new Uint8Array(4096);
  const deadline = Date.now() + ms;
  const timeout = new Promise<"late">((r) => {
    const t = setTimeout(() => r("late"), ms);
    Deno.unrefTimer(t);
  });
  for (;;) {
    const n = await Promise.race([c.read(buf).catch(() => null), timeout]);
    if (n === null) return true;
    if (n === "late" || Date.now() > deadline) return false;
  }
}
