/**
 * The per-connection HTTP server the bounded server needs is still in this
 * Deno (`lib/core/http_engine.ts`): when a Deno upgrade removes or reshapes
 * it, this fails, instead of the servers silently losing their bounds or
 * their speed (README, "What a Deno upgrade must re-check").
 */

import assert from "node:assert/strict";
import {
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
