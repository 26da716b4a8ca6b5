/**
 * The pieces of `breaker simulate --webhookId` that need no platform: the
 * time-order merge of attempts read notification by notification, and the
 * check that a notification's listed attempts account for its status.
 */

import assert from "node:assert/strict";
import { AttemptMerge } from "../../lib/breaker/attempt_merge.ts";
import { attemptGap } from "../../lib/breaker/platform_log.ts";

Deno.test("the merge lets out attempts before the frontier in time order, ties in arrival order", () => {
  const m = new AttemptMerge<string>();
  // notification a (created 0): attempts at 0, 10, 40; b (created 5): 5, 15
  m.push(0, "a0");
  m.push(10, "a1");
  m.push(40, "a2");
  assert.deepEqual([...m.release(5)], ["a0"]);
  m.push(5, "b0");
  m.push(15, "b1");
  m.push(15, "b2");
  assert.deepEqual([...m.release(15)], ["b0", "a1"]);
  assert.deepEqual([...m.drain()], ["b1", "b2", "a2"]);
  assert.equal(m.size, 0);
  assert.equal(m.peak, 5); // a1, a2, b0, b1, b2
});

Deno.test("the merge of many interleaved series comes out sorted and holds only what is in flight", () => {
  const m = new AttemptMerge<number>();
  const out: number[] = [];
  const delays = [0, 10, 30, 120, 300];
  for (let created = 0; created < 1000; created++) {
    let t = created * 7;
    for (const d of delays) m.push(t += d, t);
    out.push(...m.release(created * 7));
  }
  out.push(...m.drain());
  assert.equal(out.length, 5000);
  for (let i = 1; i < out.length; i++) assert.ok(out[i - 1] <= out[i]);
  // the series span 460 time units, a notification is created every 7: about 66 in flight
  assert.ok(m.peak < 5 * 70, `peak ${m.peak}`);
});

Deno.test("a notification's listed attempts must account for its status", () => {
  const n = (status: string) => ({
    id: "n1",
    status,
    createdAt: 0,
    updatedAt: 0,
    eventType: "e",
  });
  const at = (responseCode?: number, failureReason?: string) => ({
    sentTime: 0,
    responseCode,
    failureReason,
  });
  assert.equal(attemptGap(n("COMPLETED"), [at(500), at(200)]), null);
  assert.match(attemptGap(n("COMPLETED"), [at(500)])!.what, /no listed attempt was delivered/);
  assert.match(attemptGap(n("FAILED"), [])!.what, /lists no attempt/);
  assert.equal(attemptGap(n("FAILED"), [at(404)]), null, "a 4xx ends a series at once");
  assert.equal(attemptGap(n("FAILED"), Array.from({ length: 10 }, () => at(503))), null);
  assert.match(
    attemptGap(n("FAILED"), [at(503), at(undefined, "TIMED_OUT")])!.what,
    /after 2 listed attempt\(s\), the last one retryable/,
  );
  assert.equal(attemptGap(n("IN_PROGRESS"), [at(503)]), null);
});
