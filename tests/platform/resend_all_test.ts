import assert from "node:assert/strict";
import { resendAll, resendKey, StatusTally } from "../../lib/platform/mod.ts";
import type { ResendAllRun } from "../../lib/platform/mod.ts";
import { clientFor, startRecordingServer } from "../support/recording_server.ts";

const NOW = Date.parse("2026-01-10T12:00:00Z");
const HOUR = 3_600_000;

/** A page of `n` notifications (n1..), odd ones FAILED, even ones COMPLETED. */
function page(n: number, next: string | null = null) {
  const data = Array.from({ length: n }, (_, i) => ({
    id: `n${i + 1}`,
    createdAt: NOW - HOUR,
    updatedAt: NOW - HOUR,
    status: i % 2 ? "COMPLETED" : "FAILED",
    eventType: "transaction.created",
  }));
  return { status: 200, body: { data, next } };
}

/** A run over the last three days (listed, one by one), with run key "run". */
function run(extra: Partial<ResendAllRun> = {}): ResendAllRun {
  return {
    webhookId: "w1",
    since: NOW - 72 * HOUR,
    now: NOW,
    filters: { statuses: [], events: [] },
    idempotencyKey: "run",
    concurrency: 1,
    max: 10,
    ...extra,
  };
}

Deno.test("resendAll lists an older window and resends each notification once, with its run-derived key", async () => {
  const srv = startRecordingServer({ status: 202 });
  try {
    srv.script.push(
      page(5),
      { status: 202 },
      { status: 202, headers: { "Idempotent-Replayed": "true" } },
      { status: 409, body: { message: "no" } },
    );
    const progress: number[] = [];
    const keys: string[] = [];
    const r = await resendAll(
      await clientFor(srv.url),
      run({
        onOneByOne: (k) => void keys.push(k),
        onProgress: (done) => void progress.push(done),
      }),
    );
    assert.ok(r.path === "oneByOne");
    assert.deepEqual(
      {
        total: r.total,
        taken: r.taken,
        resent: r.resent,
        replayed: r.replayed,
        refused: r.refused,
      },
      { total: 5, taken: 5, resent: 3, replayed: 1, refused: 1 },
    );
    assert.match(r.firstRefused ?? "", /^n3: /);
    assert.deepEqual(r.statuses, { COMPLETED: 2, FAILED: 3 });
    assert.equal(r.overMax, false);
    assert.equal(r.fatal, undefined);
    assert.deepEqual(keys, ["run"]);
    assert.deepEqual(progress, [1, 2, 3, 4, 5]);
    const [list, ...resends] = srv.requests;
    assert.equal(`${list.method} ${list.path}`, "GET /v1/webhooks/w1/notifications");
    assert.equal(new URL(`http://x${list.search}`).searchParams.getAll("statuses").length, 4);
    assert.deepEqual(
      resends.map((q) => q.path),
      [1, 2, 3, 4, 5].map((i) => `/v1/webhooks/w1/notifications/n${i}/resend`),
    );
    for (const [i, q] of resends.entries()) {
      assert.equal(q.headers.get("idempotency-key"), await resendKey("run", "w1", `n${i + 1}`));
    }
  } finally {
    await srv.close();
  }
});

Deno.test("resendAll stops at max and says the listing held more", async () => {
  const srv = startRecordingServer({ status: 202 });
  try {
    srv.script.push(page(50));
    const r = await resendAll(await clientFor(srv.url), run({ concurrency: 4, max: 3 }));
    assert.ok(r.path === "oneByOne");
    assert.equal(r.overMax, true);
    assert.equal(r.resent, 3);
    assert.equal(srv.requests.length, 1 + 3);
  } finally {
    await srv.close();
  }
});

Deno.test("resendAll ends on a listing error and reports it as fatal", async () => {
  const srv = startRecordingServer({ status: 202 });
  try {
    srv.script.push(page(1, "c2"), { status: 202 }, { status: 400, body: { message: "bad" } });
    const r = await resendAll(await clientFor(srv.url), run());
    assert.ok(r.path === "oneByOne");
    assert.match((r.fatal as Error).message, /bad/);
    assert.equal(r.resent, 1);
  } finally {
    await srv.close();
  }
});

Deno.test("resendAll makes one bulk call for the last 24 hours, every status unless given", async () => {
  const srv = startRecordingServer();
  try {
    srv.script.push({
      status: 202,
      body: { total: 7 },
      headers: { location: "/v1/webhooks/w1/notifications/resend_by_query/jobs/j1" },
    });
    const r = await resendAll(await clientFor(srv.url), run({ since: NOW - HOUR }));
    assert.deepEqual(r, { path: "query", total: 7, jobId: "j1", idempotencyKey: "run" });
    assert.equal(srv.requests.length, 1);
    const q = srv.requests[0];
    assert.equal(`${q.method} ${q.path}`, "POST /v1/webhooks/w1/notifications/resend_by_query");
    assert.deepEqual(JSON.parse(new TextDecoder().decode(q.body)), {
      statuses: ["COMPLETED", "FAILED", "IN_PROGRESS", "ON_HOLD"],
      startTime: NOW - HOUR,
      endTime: NOW,
    });
  } finally {
    await srv.close();
  }
});

for (const status of [404, 405]) {
  Deno.test(`resendAll resends one by one when the platform does not serve the bulk call (${status})`, async () => {
    const srv = startRecordingServer({ status: 202 });
    try {
      srv.script.push({ status, body: { message: "no such route" } }, page(1));
      const fallbacks: number[] = [];
      const r = await resendAll(
        await clientFor(srv.url),
        run({ since: NOW - HOUR, onFallback: (s) => void fallbacks.push(s) }),
      );
      assert.deepEqual(fallbacks, [status]);
      assert.ok(r.path === "oneByOne");
      assert.equal(r.resent, 1);
      assert.deepEqual(srv.requests.map((q) => `${q.method} ${q.path.split("/").pop()}`), [
        "POST resend_by_query",
        "GET notifications",
        "POST resend",
      ]);
    } finally {
      await srv.close();
    }
  });
}

Deno.test("resendAll: another refusal of the bulk call is thrown, not resent one by one", async () => {
  const srv = startRecordingServer({ status: 202 });
  try {
    srv.script.push({ status: 400, body: { message: "window too long" } });
    await assert.rejects(
      resendAll(await clientFor(srv.url), run({ since: NOW - HOUR })),
      /window too long/,
    );
    assert.equal(srv.requests.length, 1);
  } finally {
    await srv.close();
  }
});

Deno.test("resendAll --dryRun counts by status, at most max, and resends nothing", async () => {
  const srv = startRecordingServer({ status: 202 });
  try {
    srv.script.push(page(3));
    const listed: number[] = [];
    const r = await resendAll(
      await clientFor(srv.url),
      run({ since: NOW - HOUR, dryRun: true, onProgress: (_, n) => void listed.push(n) }),
    );
    assert.ok(r.path === "dryRun");
    assert.deepEqual({ total: r.total, statuses: r.statuses, resent: r.resent }, {
      total: 3,
      statuses: { COMPLETED: 1, FAILED: 2 },
      resent: 0,
    });
    assert.deepEqual(listed, [3]);
    assert.deepEqual(srv.requests.map((q) => q.method), ["GET"]);
    srv.script.push(page(5));
    const over = await resendAll(await clientFor(srv.url), run({ dryRun: true, max: 4 }));
    assert.ok(over.path === "dryRun" && over.overMax);
  } finally {
    await srv.close();
  }
});

Deno.test("StatusTally counts the vocabulary's statuses in its order and ignores other words", () => {
  const tally = new StatusTally();
  for (const s of ["ON_HOLD", "FAILED", "__proto__", "FAILED", "NEW_STATUS", "COMPLETED"]) {
    tally.add(s);
  }
  assert.deepEqual(Object.entries(tally.counts()), [
    ["COMPLETED", 1],
    ["FAILED", 2],
    ["ON_HOLD", 1],
  ]);
});
