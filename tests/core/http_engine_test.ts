/**
 * The per-connection HTTP server the bounded server needs is still in this
 * Deno (`lib/core/http_engine.ts`): when a Deno upgrade removes or reshapes
 * it, this fails, instead of the servers silently losing their bounds or
 * their speed (README, "What a Deno upgrade must re-check").
 */

import assert from "node:assert/strict";
import {
  bufferedText,
  describeEngine,
  engineFor,
  engineWarning,
  serveOnConnectionOf,
} from "../../lib/core/http_engine.ts";
import { serveBounded } from "../../lib/core/bounded_server.ts";

Deno.test("http engine: the per-connection server exists in this Deno", () => {
  assert.equal(typeof serveOnConnectionOf(), "function", "serveHttpOnConnection is gone");
  assert.equal(engineFor(), "fast");
  assert.equal(engineWarning("fast"), undefined);
  assert.match(engineWarning("unbounded") ?? "", /without its connection cap/);
  assert.match(describeEngine("fast"), /per-connection server/);
});

Deno.test("http engine: the fast server answers, counts and closes its connections", async () => {
  const server = await serveBounded(() => Promise.resolve(new Response("ok")), {
    hostname: "127.0.0.1",
    port: 0,
  });
  try {
    assert.equal(server.engine, "fast");
    const r = await fetch(`http://127.0.0.1:${server.port}/`);
    assert.equal(await r.text(), "ok");
    assert.equal(server.connections, 1); // fetch keeps it alive
  } finally {
    await server.close();
  }
  assert.equal(server.connections, 0);
});

/** Sends `parts` on one raw connection (a pause between them) and returns the whole answer. */
async function rawExchange(port: number, parts: Uint8Array[]): Promise<string> {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  try {
    for (const [i, p] of parts.entries()) {
      if (i > 0) await new Promise((r) => setTimeout(r, 100));
      await conn.write(p);
    }
    let text = "";
    const buf = new Uint8Array(4096);
    const dec = new TextDecoder();
    while (!/\r\n\r\n[\s\S]*\$$/.test(text)) {
      const n = await conn.read(buf);
      if (n === null) break;
      text += dec.decode(buf.subarray(0, n));
    }
    return text;
  } finally {
    conn.close();
  }
}

Deno.test("http engine: a small body the runtime read whole is taken in one call (bufferedText)", async () => {
  const server = await serveBounded(async (request) => {
    const taken = bufferedText(request);
    const text = taken ?? await request.text();
    return new Response(`${taken === undefined ? "streamed" : "buffered"}:${text}$`);
  }, { hostname: "127.0.0.1", port: 0 });
  const enc = new TextEncoder();
  const head = (length: number) =>
    enc.encode(`POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: ${length}\r\n\r\n`);
  try {
    // head and body in one write: read whole by the runtime, taken without a stream
    const body = new Uint8Array([...enc.encode("héllo "), 0xff, 0x21]);
    const one = await rawExchange(server.port, [new Uint8Array([...head(body.length), ...body])]);
    assert.match(
      one,
      /buffered:héllo \uFFFD!\$$/,
      "the runtime's inner request lost consumeTextBody",
    );
    // the body after a pause: not all there when the handler starts, read as a stream instead
    const late = await rawExchange(server.port, [head(5), enc.encode("later")]);
    assert.match(late, /streamed:later\$$/);
  } finally {
    await server.close();
  }
});
