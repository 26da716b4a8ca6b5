import assert from "node:assert/strict";
import { deliverOnce } from "../../lib/emulator/webhooks/delivery.ts";

Deno.test("an attempt records the status, a redirect is not followed, a hang times out, a closed port is NO_RESPONSE", async () => {
  const hits: string[] = [];
  const hang = new Set<(r: Response) => void>();
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (req) => {
    const p = new URL(req.url).pathname;
    hits.push(`${req.method} ${p} ${req.headers.get("x-sig")} ${await req.text()}`);
    if (p === "/ok") return new Response("fine", { status: 201 });
    if (p === "/moved") return new Response(null, { status: 302, headers: { location: "/ok" } });
    if (p === "/hang") return new Promise((r) => hang.add(r));
    return new Response("no", { status: 503 });
  });
  const base = `http://127.0.0.1:${server.addr.port}`;
  try {
    const ok = await deliverOnce({ url: `${base}/ok`, body: '{"a":1}', headers: { "x-sig": "s" } });
    assert.equal(ok.responseCode, 201);
    assert.equal(ok.failureReason, undefined);
    assert.ok(ok.duration >= 0 && ok.sentTime > 0);
    assert.deepEqual(hits, ['POST /ok s {"a":1}']);

    const moved = await deliverOnce({ url: `${base}/moved`, body: "{}" });
    assert.equal(moved.responseCode, 302);
    assert.equal(hits.length, 2, "the redirect was not followed");

    assert.equal((await deliverOnce({ url: `${base}/x`, body: "{}" })).responseCode, 503);

    const t0 = Date.now();
    const slow = await deliverOnce({ url: `${base}/hang`, body: "{}", timeoutMs: 150 });
    assert.equal(slow.failureReason, "TIMED_OUT");
    assert.equal(slow.responseCode, undefined);
    assert.ok(Date.now() - t0 >= 140 && slow.duration >= 140);

    const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
    const port = (l.addr as Deno.NetAddr).port;
    l.close();
    const refused = await deliverOnce({ url: `http://127.0.0.1:${port}/`, body: "{}" });
    assert.equal(refused.failureReason, "NO_RESPONSE");

    const ctl = new AbortController();
    const p = deliverOnce({ url: `${base}/hang`, body: "{}", signal: ctl.signal });
    ctl.abort(new Error("stop"));
    await assert.rejects(p, /stop/);
  } finally {
    for (const h of hang) h(new Response(null));
    await server.shutdown();
  }
});
