/**
 * The console's JSON routes over real HTTP (what the console page fetches):
 * an endpoint's notifications page by offset without overlap or gap, newest
 * first, filtered by status, event and resource id; bad filters are a 400
 * naming the value, an unknown endpoint a 404; no answer carries the API key;
 * a fault without a path reaches the platform's API, not these routes.
 * The page itself is driven in Chromium by tests/e2e/console_browser_test.ts.
 */

import assert from "node:assert/strict";
import { startEmulatorOnAnvil } from "../support/emulator_process.ts";
import { waitFor } from "../support/wait_for.ts";
import { startReceiver } from "../support/receiver.ts";

Deno.test("console routes: notification paging, filters, errors", async () => {
  const emu = await startEmulatorOnAnvil(["--timeScale", "3600"]);
  const rc = startReceiver({ jwksUrl: emu.ready.jwksUrl });
  const token = new URL(emu.ready.consoleUrl).searchParams.get("token")!;
  const get = async (path: string) => {
    const r = await fetch(`${emu.ready.apiBaseUrl}/console/api/${path}`, {
      headers: { "x-console-token": token },
    });
    const text = await r.text();
    assert.ok(!text.includes(emu.ready.apiKey), "no API key in a console answer");
    return { status: r.status, body: JSON.parse(text) };
  };
  try {
    const w = (await emu.api<{ id: string }>("POST", "/v1/webhooks", {
      body: {
        url: `${rc.url}/hook`,
        events: ["internal_wallet.asset.added", "internal_wallet.asset.removed"],
      },
    })).data.id;
    const ids: string[] = [];
    for (let i = 0; i < 30; i++) {
      const r = await emu.api<{ data: { id: string }[] }>("POST", "/admin/notifications", {
        body: {
          eventType: i % 3 === 0 ? "internal_wallet.asset.removed" : "internal_wallet.asset.added",
          resourceId: `r-${i % 7}`,
        },
      });
      ids.push(r.data.data[0].id);
    }
    await rc.waitForCount(30);
    await waitFor(
      "every notification COMPLETED",
      async () => (await get(`webhooks/${w}/notifications?status=COMPLETED`)).body.total === 30,
    );

    const first = await get(`webhooks/${w}/notifications?offset=0&limit=25`);
    const second = await get(`webhooks/${w}/notifications?offset=25&limit=25`);
    assert.equal(first.status, 200);
    assert.equal(first.body.total, 30);
    assert.equal(first.body.data.length, 25);
    assert.equal(second.body.data.length, 5);
    const listed = [...first.body.data, ...second.body.data].map((n: { id: string }) => n.id);
    // newest first, each once
    assert.deepEqual(listed, [...ids].reverse());
    assert.deepEqual(first.body.events, [
      "internal_wallet.asset.added",
      "internal_wallet.asset.removed",
    ]);

    const b = await get(
      `webhooks/${w}/notifications?event=internal_wallet.asset.removed&limit=100`,
    );
    assert.equal(b.body.total, 10);
    assert.ok(
      b.body.data.every((n: { eventType: string }) =>
        n.eventType === "internal_wallet.asset.removed"
      ),
    );
    const r3 = await get(`webhooks/${w}/notifications?resourceId=r-3&limit=100`);
    assert.deepEqual(
      r3.body.data.map((n: { id: string }) => n.id),
      ids.filter((_, i) => i % 7 === 3).reverse(),
    );
    assert.equal((await get(`webhooks/${w}/notifications?status=FAILED`)).body.total, 0);

    const badStatus = await get(`webhooks/${w}/notifications?status=DONE`);
    assert.equal(badStatus.status, 400);
    assert.match(badStatus.body.message, /status must be one of .*"DONE"/);
    const badLimit = await get(`webhooks/${w}/notifications?limit=0`);
    assert.equal(badLimit.status, 400);
    assert.match(badLimit.body.message, /limit/);
    const unknown = await get("webhooks/nope/notifications");
    assert.equal(unknown.status, 404);
    assert.equal((await get("webhooks/nope/resend_recent")).status, 404);

    // one notification with its attempts
    const one = await get(`webhooks/${w}/notifications/${ids[0]}`);
    assert.equal(one.body.status, "COMPLETED");
    assert.equal(one.body.attemptLog.length, 1);
    assert.equal(one.body.attemptLog[0].responseCode, 200);
    // the count "Resend notifications" would resend: all 30 (of the last 24 h)
    assert.deepEqual((await get(`webhooks/${w}/resend_recent`)).body, { count: 30 });

    // A fault without a path is for the platform's API: the console's own routes neither
    // suffer nor consume it; the next /v1 request does.
    const fault = await emu.api("POST", "/admin/faults", { body: { kind: "status", status: 503 } });
    assert.equal(fault.status, 201);
    assert.equal((await get("overview")).status, 200);
    assert.equal((await get(`webhooks/${w}/notifications?limit=1`)).status, 200);
    assert.equal((await emu.api("GET", "/v1/webhooks")).status, 503);
    assert.equal((await emu.api("GET", "/v1/webhooks")).status, 200);
  } finally {
    await rc.close();
    await emu.stop();
  }
});

Deno.test("the console's error rate is the LAST_ACTIVE_HOUR_ERROR_RATE metric's, also after the hour has passed", async () => {
  // --timeScale 3600: the hour is 1 s. Three attempts, the third refused (404: an error, not
  // retried): 1 of 3 (below the band, so the endpoint stays ENABLED).
  const emu = await startEmulatorOnAnvil(["--timeScale", "3600"]);
  const rc = startReceiver({ jwksUrl: emu.ready.jwksUrl, script: [200, 200, 404] });
  const token = new URL(emu.ready.consoleUrl).searchParams.get("token")!;
  const get = async (path: string) => {
    const r = await fetch(`${emu.ready.apiBaseUrl}/console/api/${path}`, {
      headers: { "x-console-token": token },
    });
    return await r.json();
  };
  try {
    const w = (await emu.api<{ id: string }>("POST", "/v1/webhooks", {
      body: { url: `${rc.url}/hook`, events: ["internal_wallet.asset.added"] },
    })).data.id;
    let lastSent = 0;
    for (let i = 0; i < 3; i++) {
      const id = (await emu.api<{ data: { id: string }[] }>("POST", "/admin/notifications", {
        body: { eventType: "internal_wallet.asset.added" },
      })).data.data[0].id;
      // one at a time, so the breaker sees them in this order
      const n = await waitFor("the attempt recorded", async () => {
        const n = await get(`webhooks/${w}/notifications/${id}`);
        return n.status === "IN_PROGRESS" ? null : n;
      });
      lastSent = Math.max(lastSent, n.lastSentTime);
    }
    const compare = async () => {
      const list = await get("webhooks");
      const recent = list.data.find((h: { id: string }) => h.id === w).recent;
      const metric = await emu.api<{ value: string }>(
        "GET",
        `/v1/webhooks/${w}/metrics/LAST_ACTIVE_HOUR_ERROR_RATE`,
      );
      return { list, recent, metric: metric.data.value };
    };
    const during = await compare();
    assert.equal(during.recent.attempts, 3);
    assert.equal(during.recent.errors, 1);
    assert.equal(during.metric, "33");
    // the last active hour is the hour up to the last attempt, not up to now
    const after = await waitFor("the hour after the last attempt to pass", async () => {
      const c = await compare();
      return c.list.now > lastSent + c.list.windowMs ? c : null;
    });
    assert.equal(after.metric, "33");
    assert.equal(after.recent.attempts, 3, "the console counts the same window as the metric");
    assert.equal(after.recent.errors, 1);
    assert.equal(
      after.metric,
      String(Math.round(after.recent.errors / after.recent.attempts * 100)),
    );
  } finally {
    await rc.close();
    await emu.stop();
  }
});
