/**
 * Notification paging stays exact while notifications keep arriving and
 * change status; `Idempotency-Key` makes a resend happen once; and
 * `service emulator trigger` (spawned as a user would) creates notifications
 * in the running emulator.
 */

import assert from "node:assert/strict";
import { startEmulatorOnAnvil } from "../support/emulator_process.ts";
import { waitFor } from "../support/wait_for.ts";
import { startReceiver } from "../support/receiver.ts";
import { runCli } from "../support/tools.ts";

Deno.test("paging returns each notification exactly once while new ones arrive and statuses change", async () => {
  const emu = await startEmulatorOnAnvil(["--timeScale", "10000", "--minAttempts", "1000000"]);
  // answers 500 then 200 per notification, so statuses and updatedAt keep moving while we page
  const tries = new Map<string, number>();
  const rc = startReceiver({
    script: (_n, body) => {
      const k = (tries.get(body.id) ?? 0) + 1;
      tries.set(body.id, k);
      return k < 3 ? 500 : 200;
    },
  });
  try {
    const w = await emu.api<{ id: string }>("POST", "/v1/webhooks", {
      body: { url: `${rc.url}/page`, events: ["transaction.created"] },
    });
    const t = await emu.api<{ data: { id: string }[] }>("POST", "/admin/notifications", {
      body: { eventType: "transaction.created", count: 250 },
    });
    assert.equal(t.data.data.length, 250);
    // new ones arrive between every two pages: a fixed number per page, not per unit of time (a
    // timed producer outran the paging on a loaded machine: the more it made, the more pages there
    // were to read, 116 s instead of 6 s)
    const arrive = () =>
      emu.api("POST", "/admin/notifications", {
        body: { eventType: "transaction.created", count: 3 },
      });
    let lastTotal = 0;
    for (const sortBy of ["updatedAt", "status", "id"]) {
      for (const order of ["ASC", "DESC"]) {
        const ids: string[] = [];
        let cursor: string | undefined;
        let total: number | undefined;
        let pages = 0;
        do {
          const r = await emu.api<{ data: { id: string }[]; next: string | null; total?: number }>(
            "GET",
            `/v1/webhooks/${w.data.id}/notifications`,
            { query: { sortBy, order, pageSize: 17, pageCursor: cursor } },
          );
          assert.equal(r.status, 200, JSON.stringify(r.data));
          if (pages === 0) total = r.data.total;
          else assert.equal(r.data.total, undefined, "total only on the first page");
          ids.push(...r.data.data.map((n) => n.id));
          cursor = r.data.next ?? undefined;
          pages++;
          await arrive();
          await new Promise((r) => setTimeout(r, 3)); // let deliveries move statuses meanwhile
        } while (cursor);
        assert.ok(total! >= 250);
        assert.ok(total! > lastTotal, `${sortBy} ${order}: new ones arrived since the last paging`);
        lastTotal = total!;
        assert.equal(ids.length, total, `${sortBy} ${order}: as many as total`);
        assert.equal(new Set(ids).size, ids.length, `${sortBy} ${order}: no duplicates`);
        for (const n of t.data.data) {
          assert.ok(ids.includes(n.id), `${sortBy} ${order}: ${n.id} missing`);
        }
      }
    }
  } finally {
    await rc.close();
    await emu.stop();
  }
});

Deno.test("the same Idempotency-Key resends once and answers the first answer again", async () => {
  const emu = await startEmulatorOnAnvil(["--timeScale", "10000", "--minAttempts", "1000000"]);
  const rc = startReceiver({ script: [404] });
  try {
    const w = await emu.api<{ id: string }>("POST", "/v1/webhooks", {
      body: { url: `${rc.url}/idem`, events: ["transaction.created"] },
    });
    await emu.api("POST", "/admin/notifications", {
      body: { eventType: "transaction.created", count: 2 },
    });
    await waitFor("2 attempts", () => rc.received.length === 2);
    await waitFor(
      "both FAILED",
      async () =>
        (await emu.api<{ total: number }>("GET", `/v1/webhooks/${w.data.id}/notifications`, {
          query: { statuses: ["FAILED"] },
        })).data.total === 2,
    );
    const key = crypto.randomUUID();
    const path = `/v1/webhooks/${w.data.id}/notifications/resend_failed`;
    const a = await emu.api<{ total: number }>("POST", path, { body: {}, idempotencyKey: key });
    assert.equal(a.status, 202);
    assert.equal(a.data.total, 2);
    // the first resend runs to its end before the second request, so that a second resend,
    // if the key were not honoured, would find both FAILED again and show
    const jobId = a.headers.get("location")!.split("/").pop()!;
    await waitFor(
      "the resend job to complete",
      async () =>
        (await emu.api<{ status: string }>("GET", `${path}/jobs/${jobId}`)).data.status ===
          "COMPLETED",
    );
    await waitFor("2 resent attempts", () => rc.received.length === 4);
    await waitFor(
      "both FAILED again",
      async () =>
        (await emu.api<{ total: number }>("GET", `/v1/webhooks/${w.data.id}/notifications`, {
          query: { statuses: ["FAILED"] },
        })).data.total === 2,
    );
    const b = await emu.api<{ total: number }>("POST", path, { body: {}, idempotencyKey: key });
    assert.equal(b.status, 202);
    assert.deepEqual(b.data, a.data);
    assert.equal(b.headers.get("location"), a.headers.get("location"));
    assert.equal(b.headers.get("idempotent-replayed"), "true");
    // "A resend that must not happen did not happen", shown by a request that must resend: had
    // b started a job, its first step (a 0 ms timer, run before the next request is read) would
    // have taken both notifications out of FAILED, and c, a new key, would find none to resend.
    assert.equal(rc.received.length, 4, "the second request resent nothing");
    const c = await emu.api<{ total: number }>("POST", path, {
      body: {},
      idempotencyKey: crypto.randomUUID(),
    });
    assert.equal(c.status, 202, "both notifications still FAILED after b");
    assert.equal(c.data.total, 2, "both notifications still FAILED after b");
    const cJob = c.headers.get("location")!.split("/").pop()!;
    assert.notEqual(cJob, jobId);
    await waitFor(
      "the third request's resend job to complete",
      async () =>
        (await emu.api<{ status: string }>("GET", `${path}/jobs/${cJob}`)).data.status ===
          "COMPLETED",
    );
    await waitFor("2 more resent attempts", () => rc.received.length >= 6);
    await waitFor(
      "both FAILED a third time",
      async () =>
        (await emu.api<{ total: number }>("GET", `/v1/webhooks/${w.data.id}/notifications`, {
          query: { statuses: ["FAILED"] },
        })).data.total === 2,
    );
    assert.equal(rc.received.length, 6, "one resend each for a and c, none for b");
    const log = await emu.api<{ data: unknown[] }>("GET", "/admin/attempts", {
      query: { webhookId: w.data.id },
    });
    assert.equal(log.data.data.length, 6, "the emulator recorded no further attempt");
  } finally {
    await rc.close();
    await emu.stop();
  }
});

Deno.test("service emulator trigger creates notifications in a running emulator and prints their ids", async () => {
  const emu = await startEmulatorOnAnvil();
  const rc = startReceiver({ jwksUrl: emu.ready.jwksUrl });
  try {
    const hooks: string[] = [];
    for (const p of ["a", "b"]) {
      const r = await emu.api<{ id: string }>("POST", "/v1/webhooks", {
        body: { url: `${rc.url}/${p}`, events: ["vault_account.created"] },
      });
      hooks.push(r.data.id);
    }
    const env = {
      SERVICE_API_BASE_URL: emu.ready.apiBaseUrl,
      SERVICE_API_KEY: emu.ready.apiKey,
      SERVICE_API_PRIVATE_KEY_PATH: emu.ready.privateKeyPath,
    };
    const r = await runCli([
      "emulator",
      "trigger",
      "--eventType",
      "vault_account.created",
      "--resourceId",
      "va-7",
      "--count",
      "2",
      "--data",
      '{"name":"ops"}',
      "--format",
      "ndjson",
    ], { env });
    assert.equal(r.code, 0, r.stderr);
    const lines = r.stdout.trim().split("\n").map((l) => JSON.parse(l));
    assert.equal(lines.length, 4);
    assert.deepEqual([...new Set(lines.map((l) => l.webhookId))].sort(), [...hooks].sort());
    await rc.waitForCount(4, 10_000);
    const got = rc.received.map((x) => x.json.id).sort();
    assert.deepEqual(got, lines.map((l) => l.id).sort());
    assert.ok(rc.received.every((x) => x.signatureOk && x.json.resourceId === "va-7"));
    assert.deepEqual(rc.received[0].json.data, { name: "ops" });
    assert.ok(!r.stdout.includes(emu.ready.apiKey) && !r.stderr.includes(emu.ready.apiKey));

    const bad = await runCli(
      ["emulator", "trigger", "--eventType", "transaction.created", "--data", "{nope"],
      { env },
    );
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /--data/);
    assert.equal(bad.stderr.trim().split("\n").length, 1);
    // the event is one of the platform's webhook events
    const unknown = await runCli(["emulator", "trigger", "--eventType", "x"], { env });
    assert.equal(unknown.code, 2);
    assert.match(unknown.stderr, /"x" for --eventType: expected one of transaction\.created, /);
    const missing = await runCli(["emulator", "trigger"], { env });
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /--eventType/);
  } finally {
    await rc.close();
    await emu.stop();
  }
});
