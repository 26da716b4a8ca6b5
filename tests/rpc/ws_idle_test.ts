/**
 * A WebSocket of the bridge is counted against the connection cap for as long
 * as it is open (not only while its upgrade request is), and one that goes
 * silent and does not answer pings is closed (Deno's `idleTimeout`), so idle
 * WebSockets cannot hold the cap for ever. The client here is a raw TCP peer
 * that completes the handshake and then never reads or answers a ping.
 */

import assert from "node:assert/strict";
import { serveBounded } from "../../lib/core/bounded_server.ts";
import { createWebSocketHandler } from "../../lib/rpc/ws.ts";
import type { Dispatcher } from "../../lib/rpc/methods.ts";
import { waitFor } from "../support/wait_for.ts";
import { closedWithin, rawWebSocket } from "../support/raw_peers.ts";

Deno.test("ws: a WebSocket counts against the cap while open; a silent one that never pongs is closed", async () => {
  // never called: the peer sends no message
  const dispatcher = {} as Dispatcher;
  const upgrade = createWebSocketHandler({ dispatcher, idleTimeoutSeconds: 1 });
  const server = await serveBounded((request, info) => Promise.resolve(upgrade(request, info)), {
    hostname: "127.0.0.1",
    port: 0,
    upgrades: true,
  });
  const c = await rawWebSocket(server.port);
  try {
    // the HTTP part of the connection is over; the WebSocket is still counted
    await new Promise((r) => setTimeout(r, 200));
    assert.equal(server.connections, 1);
    // pinged at 0.5 s, closed at 1 s without a pong
    assert.equal(await closedWithin(c, 5_000), true, "the silent WebSocket was kept open");
    await waitFor("the closed WebSocket no longer counted", () => server.connections === 0, 2_000);
  } finally {
    try {
      c.close();
    } catch { /* closed */ }
    await server.close();
  }
});

Deno.test("ws: upgrades whose client leaves at once are not left counted against the cap", async () => {
  const dispatcher = {} as Dispatcher; // never called: no message is sent
  const upgrade = createWebSocketHandler({ dispatcher });
  const server = await serveBounded((request, info) => Promise.resolve(upgrade(request, info)), {
    hostname: "127.0.0.1",
    port: 0,
    upgrades: true,
  });
  try {
    for (let i = 0; i < 20; i++) {
      const c = await Deno.connect({ hostname: "127.0.0.1", port: server.port });
      await c.write(
        new TextEncoder().encode(
          `GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
            "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n",
        ),
      );
      c.close();
    }
    await waitFor(
      () => `${server.connections} connections still counted`,
      () => server.connections === 0,
      5_000,
    );
  } finally {
    await server.close();
  }
});
