/**
 * `readPlatformLog` against a small real platform on loopback
 * (`tests/support/hostile_platform.ts`, here well behaved): the attempts,
 * read notification by notification, come out in time order with bounded
 * memory; and the check that a notification's listed attempts account for
 * its status.
 */

import assert from "node:assert/strict";
import { attemptGap, readPlatformLog } from "../../lib/breaker/platform_log.ts";
import { loadCredentials, PlatformClient } from "../../lib/platform/mod.ts";
import { json, startHostilePlatform } from "../support/hostile_platform.ts";
import { makeTestKeys } from "../support/keys.ts";

const keys = await makeTestKeys();
const BASE = Date.UTC(2026, 0, 1);

/**
 * Reads the window [BASE, BASE + 1 day] of a platform listing `notifications` (by creation,
 * in pages of 100) with `attempts` each; returns what was emitted as [id, time] and the facts.
 */
async function read(
  notifications: { id: string; createdAt: number; attempts: number[] }[],
  concurrency: number,
) {
  const byId = new Map(notifications.map((n) => [n.id, n]));
  const platform = startHostilePlatform({
    "GET /v1/webhooks/:id": () =>
      json({ id: "w1", url: "http://127.0.0.1:9/hook", events: ["x"], status: "ENABLED" }),
    "GET /v1/webhooks/:id/notifications": (_req, url) => {
      const at = Number(url.searchParams.get("pageCursor") ?? 0);
      const page = notifications.slice(at, at + 100).map((n) => ({
        id: n.id,
        createdAt: n.createdAt,
        updatedAt: n.createdAt,
        status: "IN_PROGRESS",
        eventType: "transaction.created",
      }));
      return json({ data: page, next: at + 100 < notifications.length ? String(at + 100) : null });
    },
    "GET /v1/webhooks/:id/notifications/:nid/attempts": (_req, _url, { nid }) =>
      json({
        data: byId.get(nid)!.attempts.map((sentTime) => ({ sentTime, responseCode: 500 })),
        next: null,
      }),
  });
  try {
    const client = new PlatformClient(
      await loadCredentials({
        apiKey: "k",
        privateKey: keys.pkcs8Pem,
        apiBaseUrl: platform.baseUrl,
      }),
      { retries: 0 },
    );
    const emitted: [string, number][] = [];
    const facts = await readPlatformLog(
      client,
      { webhookId: "w1", from: BASE, to: BASE + 86_400_000, concurrency },
      (r) => emitted.push([r.notificationId!, r.time]),
    );
    return { emitted, facts };
  } finally {
    await platform.close();
  }
}

Deno.test("attempts come out in time order, ties in creation order then as listed", async () => {
  // a (created 0): attempts at 0, 10, 40; b (created 5): at 5, 15, 15
  const notifications = [
    { id: "a", createdAt: BASE, attempts: [BASE, BASE + 10, BASE + 40] },
    { id: "b", createdAt: BASE + 5, attempts: [BASE + 5, BASE + 15, BASE + 15] },
    { id: "c", createdAt: BASE + 15, attempts: [BASE + 15] },
  ];
  for (const concurrency of [1, 8]) {
    const { emitted, facts } = await read(notifications, concurrency);
    assert.deepEqual(emitted, [
      ["a", BASE],
      ["b", BASE + 5],
      ["a", BASE + 10],
      ["b", BASE + 15],
      ["b", BASE + 15],
      ["c", BASE + 15],
      ["a", BASE + 40],
    ]);
    assert.equal(facts.attempts, 7);
  }
});

Deno.test("many interleaved series come out sorted, holding only the attempts in flight", async () => {
  const delays = [0, 10, 30, 120, 300];
  const notifications = Array.from({ length: 100 }, (_, k) => {
    let t = BASE + k * 7;
    return { id: `n${k}`, createdAt: t, attempts: delays.map((d) => t += d) };
  });
  const { emitted, facts } = await read(notifications, 8);
  assert.equal(emitted.length, 500);
  for (let i = 1; i < emitted.length; i++) assert.ok(emitted[i - 1][1] <= emitted[i][1]);
  // the series span 460 ms, a notification is created every 7: about 66 in flight
  assert.ok(facts.peakHeld < 5 * 70, `peak ${facts.peakHeld}`);
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
