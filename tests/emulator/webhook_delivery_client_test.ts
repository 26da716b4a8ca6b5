/**
 * One delivery attempt (`deliverOnce`): over real HTTP, what each kind of
 * answer is recorded as; and, with its timer captured instead of waited
 * for, that the delivery timeout is armed for exactly `timeoutMs` and is
 * what turns a hanging request into TIMED_OUT (no wall-clock threshold).
 */

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

    // a real request that is never answered: it reached the server, and no status came back
    const slow = await deliverOnce({ url: `${base}/hang`, body: "{}", timeoutMs: 150 });
    assert.equal(slow.failureReason, "TIMED_OUT");
    assert.equal(slow.responseCode, undefined);
    assert.equal(hits.at(-1), "POST /hang null {}");

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

Deno.test("the delivery timeout is armed for exactly timeoutMs, and only its firing makes TIMED_OUT", async () => {
  const realSetTimeout = globalThis.setTimeout;
  const realClearTimeout = globalThis.clearTimeout;
  const realPerfNow = performance.now;
  const armed: { fn: () => void; ms: number; cleared: boolean }[] = [];
  let perfNow = 1000;
  /** One turn of the event loop (a real zero timer; nothing is measured). */
  const turn = () => new Promise((r) => realSetTimeout(r, 0));
  globalThis.setTimeout = ((fn: () => void, ms: number) => {
    armed.push({ fn, ms, cleared: false });
    return armed.length;
  }) as unknown as typeof setTimeout;
  globalThis.clearTimeout = ((id: number) => {
    if (armed[id - 1]) armed[id - 1].cleared = true;
  }) as unknown as typeof clearTimeout;
  performance.now = () => perfNow;
  try {
    let requested!: (signal: AbortSignal) => void;
    const request = new Promise<AbortSignal>((r) => requested = r);
    let outcome: unknown;
    const p = deliverOnce({
      url: "http://receiver.invalid/hang",
      body: "{}",
      timeoutMs: 150,
      now: () => 5_000,
      // never answers; rejects only when the delivery gives up
      fetch: (_url, init) => {
        requested(init!.signal!);
        return new Promise((_, reject) =>
          init!.signal!.addEventListener("abort", () => reject(init!.signal!.reason))
        );
      },
    }).then((r) => outcome = r);
    const signal = await request;
    await turn();
    assert.equal(armed.length, 1, "one timer");
    assert.equal(armed[0].ms, 150, "armed for exactly timeoutMs");
    assert.equal(outcome, undefined, "still waiting before the timer fires");
    assert.equal(signal.aborted, false);
    perfNow += 150;
    armed[0].fn();
    await p;
    assert.deepEqual(outcome, { sentTime: 5_000, duration: 150, failureReason: "TIMED_OUT" });
    assert.equal(armed[0].cleared, true, "the timer is cleared once the attempt ends");

    // an answer before the timer fires clears it and is recorded as the answer
    armed.length = 0;
    const ok = await deliverOnce({
      url: "http://receiver.invalid/ok",
      body: "{}",
      timeoutMs: 150,
      fetch: () => Promise.resolve(new Response(null, { status: 204 })),
    });
    assert.equal(ok.responseCode, 204);
    assert.equal(ok.failureReason, undefined);
    assert.deepEqual(armed.map((t) => [t.ms, t.cleared]), [[150, true]]);
  } finally {
    globalThis.setTimeout = realSetTimeout;
    globalThis.clearTimeout = realClearTimeout;
    performance.now = realPerfNow;
  }
});
