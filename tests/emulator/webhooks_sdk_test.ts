/**
 * The platform's official TypeScript SDK (`@fireblocks/ts-sdk` from npm,
 * unchanged) against the emulator's Webhooks V2 API: a real, independent
 * client for the shapes, the query encoding and the auth.
 */

import assert from "node:assert/strict";
import { Fireblocks as OfficialSdk, type Notification, type Webhook } from "@fireblocks/ts-sdk";
import { startEmulatorOnAnvil } from "../support/emulator_process.ts";
import { waitFor } from "../support/wait_for.ts";
import { startReceiver } from "../support/receiver.ts";

Deno.test("the official SDK's webhooksV2 methods work unchanged against the emulator", async () => {
  const emu = await startEmulatorOnAnvil(["--timeScale", "10000", "--minAttempts", "1000000"]);
  // answers: resource r-fail always 404 (FAILED at once); everything else 200
  const rc = startReceiver({
    jwksUrl: emu.ready.jwksUrl,
    script: (_n, body) => (body.resourceId === "r-fail" ? 404 : 200),
  });
  try {
    const sdk = new OfficialSdk({
      apiKey: emu.ready.apiKey,
      secretKey: await Deno.readTextFile(emu.ready.privateKeyPath),
      basePath: `${emu.ready.apiBaseUrl}/v1`,
    });
    const api = sdk.webhooksV2;

    // create + list webhooks with paging
    const created: Webhook[] = [];
    for (let i = 0; i < 3; i++) {
      const r = await api.createWebhook({
        createWebhookRequest: {
          url: `${rc.url}/sdk${i}`,
          events: ["transaction.created", "transaction.status.updated"],
          description: `sdk ${i}`,
        },
      });
      assert.equal(r.statusCode, 201);
      assert.equal(r.data.status, "ENABLED");
      assert.equal(r.data.description, `sdk ${i}`);
      created.push(r.data);
    }
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await api.getWebhooks({ order: "ASC", pageSize: 2, pageCursor: cursor });
      seen.push(...page.data.data.map((w) => w.id));
      cursor = page.data.next ?? undefined;
    } while (cursor);
    assert.deepEqual(seen, created.map((w) => w.id));
    const w = created[0];
    for (const other of created.slice(1)) {
      await api.updateWebhook({ webhookId: other.id, updateWebhookRequest: { enabled: false } });
    }

    // notifications: 5 for r-ok (created), 3 for r-fail (status updated)
    for (
      const [eventType, resourceId, count] of [
        ["transaction.created", "r-ok", 5],
        ["transaction.status.updated", "r-fail", 3],
      ] as const
    ) {
      const t = await emu.api("POST", "/admin/notifications", {
        body: { eventType, resourceId, count, data: { resourceId } },
      });
      assert.equal(t.status, 201);
    }
    await waitFor("every notification to end", async () => {
      const r = await api.getNotifications({ webhookId: w.id, statuses: ["IN_PROGRESS"] });
      return r.data.total === 0;
    });

    // filters as repeated keys, total on the first page only, cursor paging
    const failed = await api.getNotifications({
      webhookId: w.id,
      statuses: ["FAILED", "ON_HOLD"],
      events: ["transaction.status.updated"],
      pageSize: 2,
      order: "ASC",
      sortBy: "createdAt",
    });
    assert.equal(failed.data.total, 3);
    assert.equal(failed.data.data.length, 2);
    assert.ok(failed.data.next);
    const rest = await api.getNotifications({
      webhookId: w.id,
      statuses: ["FAILED", "ON_HOLD"],
      events: ["transaction.status.updated"],
      pageSize: 2,
      order: "ASC",
      sortBy: "createdAt",
      pageCursor: failed.data.next!,
    });
    assert.equal(rest.data.total, undefined);
    assert.equal(rest.data.data.length, 1);
    assert.equal(rest.data.next ?? null, null);
    const failedIds = [...failed.data.data, ...rest.data.data].map((n: Notification) => n.id);
    assert.equal(new Set(failedIds).size, 3);

    const byResource = await api.getNotifications({ webhookId: w.id, resourceId: "r-ok" });
    assert.equal(byResource.data.total, 5);
    assert.ok(byResource.data.data.every((n) => n.status === "COMPLETED"));
    for (
      const sortBy of ["id", "createdAt", "updatedAt", "status", "eventType", "resourceId"] as const
    ) {
      const r = await api.getNotifications({ webhookId: w.id, sortBy, order: "DESC" });
      assert.equal(r.data.total, 8, sortBy);
    }
    const none = await api.getNotifications({ webhookId: w.id, endTime: 1 });
    assert.equal(none.data.total, 0);
    const later = await api.getNotifications({ webhookId: w.id, startTime: Date.now() + 60_000 });
    assert.equal(later.data.total, 0);
    const window = await api.getNotifications({
      webhookId: w.id,
      startTime: Date.now() - 60_000,
      endTime: Date.now() + 60_000,
    });
    assert.equal(window.data.total, 8);

    // get with and without data, attempts
    const one = await api.getNotification({
      webhookId: w.id,
      notificationId: failedIds[0],
      includeData: true,
    });
    assert.deepEqual(one.data.data, { resourceId: "r-fail" });
    assert.equal(one.data.status, "FAILED");
    const plain = await api.getNotification({ webhookId: w.id, notificationId: failedIds[0] });
    assert.equal(plain.data.data, undefined);
    const attempts = await api.getNotificationAttempts({
      webhookId: w.id,
      notificationId: failedIds[0],
    });
    assert.equal(attempts.data.data.length, 1);
    assert.equal(attempts.data.data[0].responseCode, 404);
    assert.ok(attempts.data.data[0].sentTime > 0 && attempts.data.data[0].duration >= 0);

    // resend by id: a fresh series (one more 404 attempt)
    const before = rc.received.length;
    const rs = await api.resendNotificationById({ webhookId: w.id, notificationId: failedIds[0] });
    assert.equal(rs.statusCode, 202);
    await waitFor("the resent attempt", () => rc.received.length === before + 1);

    // resend by resource: excludeStatuses absent = all but COMPLETED (the 3 FAILED)
    await waitFor(
      "the resend to end",
      async () =>
        (await api.getNotifications({ webhookId: w.id, statuses: ["IN_PROGRESS"] })).data.total ===
          0,
    );
    const b2 = rc.received.length;
    const rr = await api.resendNotificationsByResourceId({
      webhookId: w.id,
      resendNotificationsByResourceIdRequest: { resourceId: "r-fail" },
    });
    assert.equal(rr.statusCode, 202);
    await waitFor("3 resent", () => rc.received.length === b2 + 3);
    // [] = every status: the 5 COMPLETED ones of r-ok too
    const b3 = rc.received.length;
    await api.resendNotificationsByResourceId({
      webhookId: w.id,
      resendNotificationsByResourceIdRequest: { resourceId: "r-ok", excludeStatuses: [] },
    });
    await waitFor("5 resent", () => rc.received.length === b3 + 5);

    // resend failed: a job whose status can be polled
    await waitFor(
      "quiet",
      async () =>
        (await api.getNotifications({ webhookId: w.id, statuses: ["IN_PROGRESS"] })).data.total ===
          0,
    );
    const b4 = rc.received.length;
    const rf = await api.resendFailedNotifications({
      webhookId: w.id,
      resendFailedNotificationsRequest: { events: ["transaction.status.updated"] },
    });
    assert.equal(rf.statusCode, 202);
    assert.equal(rf.data.total, 3);
    const location = rf.headers["location"];
    const jobId = location.split("/").pop()!;
    assert.match(location, new RegExp(`/v1/webhooks/${w.id}/notifications/resend_failed/jobs/`));
    const job = await waitFor("the job to complete", async () => {
      const j = await api.getResendJobStatus({ webhookId: w.id, jobId });
      return j.data.status === "COMPLETED" ? j.data : undefined;
    });
    assert.deepEqual(job, { jobId, status: "COMPLETED", processed: 3, total: 3 });
    await waitFor("3 resent by the job", () => rc.received.length === b4 + 3);
    // nothing failed among transaction.created: 200 {total: 0}
    const nothing = await api.resendFailedNotifications({
      webhookId: w.id,
      resendFailedNotificationsRequest: { events: ["transaction.created"] },
    });
    assert.equal(nothing.statusCode, 200);
    assert.equal(nothing.data.total, 0);

    // update, metric, get, delete
    const upd = await api.updateWebhook({
      webhookId: w.id,
      updateWebhookRequest: { description: "renamed", events: ["transaction.created"] },
    });
    assert.equal(upd.data.description, "renamed");
    assert.deepEqual(upd.data.events, ["transaction.created"]);
    const metric = await api.getMetrics({
      webhookId: w.id,
      metricName: "LAST_ACTIVE_HOUR_ERROR_RATE",
    });
    assert.match(metric.data.value, /^\d+$/);
    const got = await api.getWebhook({ webhookId: w.id });
    assert.equal(got.data.description, "renamed");
    const del = await api.deleteWebhook({ webhookId: created[2].id });
    assert.equal(del.statusCode, 200);
    await assert.rejects(
      () => api.getWebhook({ webhookId: created[2].id }),
      (e: { response?: { statusCode: number; data: { code?: number } } }) =>
        e.response?.statusCode === 404 && typeof e.response.data.code === "number",
    );
    // every delivery was signed with the emulator's key
    assert.ok(rc.received.every((r) => r.signatureOk));
  } finally {
    await rc.close();
    await emu.stop();
  }
});

Deno.test("bad input gets a 400 or 404 with {message, code}", async () => {
  const emu = await startEmulatorOnAnvil();
  try {
    const cases: [string, "GET" | "POST" | "PATCH", string, unknown, number][] = [
      ["no url", "POST", "/v1/webhooks", { events: ["transaction.created"] }, 400],
      ["bad url", "POST", "/v1/webhooks", { url: "ftp://x", events: ["a"] }, 400],
      ["no events", "POST", "/v1/webhooks", { url: "http://127.0.0.1:9/", events: [] }, 400],
      ["unknown webhook", "GET", "/v1/webhooks/nope", undefined, 404],
      ["pageSize 0", "GET", "/v1/webhooks?pageSize=0", undefined, 400],
      ["pageSize 101", "GET", "/v1/webhooks?pageSize=101", undefined, 400],
      ["unknown notification list", "GET", "/v1/webhooks/nope/notifications", undefined, 404],
    ];
    const w = await emu.api<{ id: string }>("POST", "/v1/webhooks", {
      body: { url: "http://127.0.0.1:9/", events: ["transaction.created"] },
    });
    cases.push(
      ["bad sortBy", "GET", `/v1/webhooks/${w.data.id}/notifications?sortBy=nope`, undefined, 400],
      ["bad order", "GET", `/v1/webhooks/${w.data.id}/notifications?order=UP`, undefined, 400],
      [
        "bad status",
        "GET",
        `/v1/webhooks/${w.data.id}/notifications?statuses=DONE`,
        undefined,
        400,
      ],
      [
        "bad cursor",
        "GET",
        `/v1/webhooks/${w.data.id}/notifications?pageCursor=zzz`,
        undefined,
        400,
      ],
      [
        "bad startTime",
        "GET",
        `/v1/webhooks/${w.data.id}/notifications?startTime=soon`,
        undefined,
        400,
      ],
      [
        "unknown notification",
        "GET",
        `/v1/webhooks/${w.data.id}/notifications/nope`,
        undefined,
        404,
      ],
      [
        "unknown job",
        "GET",
        `/v1/webhooks/${w.data.id}/notifications/resend_failed/jobs/x`,
        undefined,
        404,
      ],
      ["bad enabled", "PATCH", `/v1/webhooks/${w.data.id}`, { enabled: "yes" }, 400],
      [
        "resend_by_resource without resourceId",
        "POST",
        `/v1/webhooks/${w.data.id}/notifications/resend_by_resource`,
        {},
        400,
      ],
      ["unknown metric", "GET", `/v1/webhooks/${w.data.id}/metrics/OTHER`, undefined, 404],
    );
    for (const [name, method, path, body, status] of cases) {
      const [p, qs] = path.split("?");
      const query = Object.fromEntries(new URLSearchParams(qs ?? ""));
      const r = await emu.api<{ message: string; code: number }>(method, p, { body, query });
      assert.equal(r.status, status, name);
      assert.equal(typeof r.data.message, "string", name);
      assert.equal(typeof r.data.code, "number", name);
    }
  } finally {
    await emu.stop();
  }
});
