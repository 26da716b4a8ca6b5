/**
 * `service notifications` and `service webhooks` end to end: the real
 * emulator process (on a real anvil) delivers to real local receivers, and
 * the CLI is spawned as a user would run it. Nothing is mocked.
 */
import assert from "node:assert/strict";
import { type CliResult, runCli } from "../support/tools.ts";
import { type EmulatorProcess, startEmulatorOnAnvil } from "../support/emulator_process.ts";
import { waitFor } from "../support/wait_for.ts";
import { type ReceiverAnswer, startReceiver } from "../support/receiver.ts";

// Retry delays and breaker durations divided by 1000: 10 s -> 10 ms, 60 min -> 3.6 s.
const TIME_SCALE = 1000;

interface Hook {
  id: string;
  status: string;
}

async function withEmulator(
  fn: (emu: EmulatorProcess) => Promise<void>,
  args = ["--timeScale", String(TIME_SCALE)],
) {
  const emu = await startEmulatorOnAnvil(args);
  try {
    await fn(emu);
  } finally {
    await emu.stop();
  }
}

function cliEnv(emu: EmulatorProcess): Record<string, string> {
  return {
    SERVICE_API_KEY: emu.ready.apiKey,
    SERVICE_API_PRIVATE_KEY_PATH: emu.ready.privateKeyPath,
    SERVICE_API_BASE_URL: emu.ready.apiBaseUrl,
  };
}

async function cli(emu: EmulatorProcess, args: string[]): Promise<CliResult> {
  return await runCli(args, { env: cliEnv(emu) });
}

function ndjson<T = Record<string, unknown>>(text: string): T[] {
  return text.split("\n").filter((l) => l.trim() !== "").map((l) => JSON.parse(l));
}

async function createHook(emu: EmulatorProcess, url: string, events: string[]): Promise<Hook> {
  const r = await emu.api<Hook>("POST", "/v1/webhooks", { body: { url, events } });
  assert.deepEqual(r.status, 201, JSON.stringify(r.data));
  return r.data;
}

async function trigger(
  emu: EmulatorProcess,
  eventType: string,
  count: number,
  resourceId?: string,
) {
  const r = await emu.api<{ data: { id: string; webhookId: string }[] }>(
    "POST",
    "/admin/notifications",
    {
      body: { eventType, count, resourceId },
    },
  );
  assert.deepEqual(r.status, 201, JSON.stringify(r.data));
  return r.data.data;
}

async function statusOf(emu: EmulatorProcess, hookId: string, id: string): Promise<string> {
  const r = await emu.api<{ status: string }>("GET", `/v1/webhooks/${hookId}/notifications/${id}`);
  return r.data.status;
}

async function allNotifications(emu: EmulatorProcess, hookId: string) {
  const out: Record<string, unknown>[] = [];
  let cursor: string | undefined;
  do {
    const r = await emu.api<{ data: Record<string, unknown>[]; next?: string | null }>(
      "GET",
      `/v1/webhooks/${hookId}/notifications`,
      { query: { pageSize: 100, pageCursor: cursor } },
    );
    out.push(...r.data.data);
    cursor = r.data.next ?? undefined;
  } while (cursor);
  return out;
}

Deno.test("list --all over 2,500 notifications returns each exactly once while new ones keep arriving", async () => {
  await withEmulator(async (emu) => {
    const rx = startReceiver({ countOnly: true });
    try {
      const hook = await createHook(emu, rx.url + "/bulk", ["onchain_data.updated"]);
      const first: string[] = [];
      for (let i = 0; i < 5; i++) {
        first.push(...(await trigger(emu, "onchain_data.updated", 500)).map((n) => n.id));
      }
      assert.deepEqual(first.length, 2500);
      // The CLI talks to the emulator through a local forwarder that, before passing on each
      // page request after the first, creates 20 notifications (whose deliveries then change
      // status and updatedAt): new ones provably arrive between every two pages.
      const target = new URL(emu.ready.apiBaseUrl);
      let pages = 0;
      let extra = 0;
      const forwarder = Deno.serve(
        { hostname: "127.0.0.1", port: 0, onListen() {} },
        async (req) => {
          const u = new URL(req.url);
          if (req.method === "GET" && u.pathname.endsWith(`/webhooks/${hook.id}/notifications`)) {
            if (pages++ > 0) extra += (await trigger(emu, "onchain_data.updated", 20)).length;
          }
          const headers = new Headers(req.headers);
          headers.delete("host");
          const answer = await fetch(target.origin + u.pathname + u.search, {
            method: req.method,
            headers,
            body: req.body,
          });
          // fetch decoded the body: pass on the other headers, not its encoding and framing
          const back = new Headers(answer.headers);
          for (
            const h of ["content-encoding", "content-length", "transfer-encoding", "connection"]
          ) {
            back.delete(h);
          }
          return new Response(answer.body, { status: answer.status, headers: back });
        },
      );
      const r = await runCli([
        "notifications",
        "list",
        "--webhookId",
        hook.id,
        "--all",
        "--pageSize",
        "100",
        "--format",
        "ndjson",
      ], {
        env: {
          ...cliEnv(emu),
          SERVICE_API_BASE_URL: `http://127.0.0.1:${forwarder.addr.port}${target.pathname}`,
        },
      });
      await forwarder.shutdown();
      assert.deepEqual(r.code, 0, r.stderr);
      const ids = ndjson<{ id: string }>(r.stdout).map((n) => n.id);
      assert.deepEqual(new Set(ids).size, ids.length, "no notification twice");
      const seen = new Set(ids);
      const missing = first.filter((id) => !seen.has(id));
      assert.deepEqual(missing.length, 0, `missing ${missing.length} of the first 2,500`);
      // 2,500 in pages of 100, with new ones before the second page and every later one
      assert.ok(pages >= 25, `${pages} pages`);
      assert.deepEqual(
        extra,
        20 * (pages - 1),
        "20 new notifications before every page but the first",
      );
      assert.ok(ids.length >= 2500 && ids.length <= 2500 + extra, `${ids.length} listed`);
    } finally {
      await rx.close();
    }
  });
});

Deno.test("every filter and sort of list gives what the emulator's data says", async () => {
  await withEmulator(async (emu) => {
    // 404 makes a notification FAILED at once, 200 COMPLETED.
    const rx = startReceiver({
      script: (_n, body) => (String(body.resourceId).startsWith("bad") ? 404 : 200),
    });
    try {
      const hook = await createHook(emu, rx.url + "/f", [
        "external_wallet.asset.added",
        "external_wallet.asset.removed",
      ]);
      await trigger(emu, "external_wallet.asset.added", 3, "good-1");
      await trigger(emu, "external_wallet.asset.removed", 2, "bad-1");
      await trigger(emu, "external_wallet.asset.added", 2, "bad-2");
      await trigger(emu, "external_wallet.asset.removed", 1, "good-2");
      await rx.waitForCount(8);
      const all = await waitFor("final statuses", async () => {
        const ns = await allNotifications(emu, hook.id);
        return ns.every((n) => n.status === "COMPLETED" || n.status === "FAILED") ? ns : undefined;
      });
      assert.deepEqual(all.length, 8);
      const run = async (extra: string[]) => {
        const r = await cli(emu, [
          "notifications",
          "list",
          "--webhookId",
          hook.id,
          "--format",
          "ndjson",
          ...extra,
        ]);
        assert.deepEqual(r.code, 0, r.stderr);
        return ndjson(r.stdout);
      };
      const idsOf = (xs: Record<string, unknown>[]) => xs.map((x) => x.id as string).sort();
      assert.deepEqual(
        idsOf(await run(["--status", "FAILED"])),
        idsOf(all.filter((n) => n.status === "FAILED")),
      );
      assert.deepEqual(
        idsOf(await run(["--status", "failed", "--status", "COMPLETED"])),
        idsOf(all),
      );
      assert.deepEqual(
        idsOf(await run(["--event", "external_wallet.asset.removed"])),
        idsOf(all.filter((n) => n.eventType === "external_wallet.asset.removed")),
      );
      assert.deepEqual(
        idsOf(await run(["--resourceId", "bad-2"])),
        idsOf(all.filter((n) => n.resourceId === "bad-2")),
      );
      assert.deepEqual(
        idsOf(await run(["--event", "external_wallet.asset.added", "--status", "FAILED"])),
        idsOf(
          all.filter((n) => n.eventType === "external_wallet.asset.added" && n.status === "FAILED"),
        ),
      );
      const created = all.map((n) => n.createdAt as number).sort((a, b) => a - b);
      const mid = created[4];
      assert.deepEqual(
        idsOf(await run(["--startTime", String(mid)])),
        idsOf(all.filter((n) => (n.createdAt as number) >= mid)),
      );
      assert.deepEqual(
        idsOf(await run(["--endTime", new Date(mid).toISOString()])),
        idsOf(all.filter((n) => (n.createdAt as number) <= mid)),
      );
      for (const field of ["id", "createdAt", "updatedAt", "status", "eventType", "resourceId"]) {
        for (const order of ["ASC", "DESC"]) {
          const rows = await run(["--sortBy", field, "--order", order]);
          assert.deepEqual(rows.length, 8);
          const keys = rows.map((r) => r[field] as string | number);
          const sorted = [...keys].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
          if (order === "DESC") sorted.reverse();
          assert.deepEqual(keys, sorted, `sorted by ${field} ${order}`);
        }
      }
      // One page and its cursor: --format json prints {data, next, total}.
      const page = await cli(emu, [
        "notifications",
        "list",
        "--webhookId",
        hook.id,
        "--pageSize",
        "3",
        "--format",
        "json",
      ]);
      const p1 = JSON.parse(page.stdout);
      assert.deepEqual(p1.data.length, 3);
      assert.deepEqual(p1.total, 8);
      assert.ok(typeof p1.next === "string" && p1.next.length > 0);
      const page2 = await cli(emu, [
        "notifications",
        "list",
        "--webhookId",
        hook.id,
        "--pageSize",
        "3",
        "--pageCursor",
        p1.next,
        "--format",
        "json",
      ]);
      const p2 = JSON.parse(page2.stdout);
      assert.deepEqual(p2.data.length, 3);
      assert.deepEqual(p2.total, undefined, "total only on the first page");
      // The table is for people: aligned header and one row per notification.
      const table = await cli(emu, [
        "notifications",
        "list",
        "--webhookId",
        hook.id,
        "--format",
        "table",
      ]);
      const lines = table.stdout.trimEnd().split("\n");
      assert.match(lines[0], /^ID\s+STATUS\s+EVENTTYPE\s+RESOURCEID\s+CREATEDAT\s+UPDATEDAT$/);
      assert.deepEqual(lines.length, 9);
      // Bad values never reach the platform.
      for (
        const bad of [["--order", "UP"], ["--sortBy", "size"], ["--pageSize", "101"], [
          "--status",
          "LOST",
        ]]
      ) {
        const r = await cli(emu, ["notifications", "list", "--webhookId", hook.id, ...bad]);
        assert.deepEqual(r.code, 2, bad.join(" "));
        assert.deepEqual(r.stderr.trim().split("\n").length, 1);
      }
    } finally {
      await rx.close();
    }
  });
});

Deno.test("resend one, by resource and all failed reach the receiver; one idempotency key resends once; --dryRun counts right", async () => {
  await withEmulator(async (emu) => {
    // The first delivery of each notification of a res-* resource gets 404 (FAILED at once), later
    // ones 200. Twelve "warm" deliveries answered 200 come first, so that six 404s keep the endpoint's
    // error rate at 6/18 = 33%, below the breaker's band (one 404 on a fresh endpoint is 100%:
    // suspended at once, as breaker.md says). Real time (no --timeScale): the window is 60 minutes.
    const firstSeen = new Set<string>();
    const rx = startReceiver({
      script: (_n, body): ReceiverAnswer => {
        if (String(body.resourceId).startsWith("res-") && !firstSeen.has(body.id)) {
          firstSeen.add(body.id);
          return 404;
        }
        return 200;
      },
    });
    try {
      const hook = await createHook(emu, rx.url + "/r", ["embedded_wallet.status.updated"]);
      await trigger(emu, "embedded_wallet.status.updated", 12, "warm");
      await rx.waitForCount(12);
      const [one] = await trigger(emu, "embedded_wallet.status.updated", 1, "res-A");
      await trigger(emu, "embedded_wallet.status.updated", 2, "res-B");
      await trigger(emu, "embedded_wallet.status.updated", 3, "res-C");
      await rx.waitForCount(18);
      await waitFor("all FAILED", async () => (await statusOf(emu, hook.id, one.id)) === "FAILED");
      const deliveriesOf = (id: string) => rx.received.filter((r) => r.json.id === id).length;

      // resend one, twice with the same key: one more delivery.
      const resendSameKey = async () => {
        const r = await cli(emu, [
          "notifications",
          "resend",
          "--webhookId",
          hook.id,
          "--notificationId",
          one.id,
          "--idempotencyKey",
          "same-key-1",
          "--format",
          "json",
        ]);
        assert.deepEqual(r.code, 0, r.stderr);
        assert.deepEqual(JSON.parse(r.stdout).accepted, true);
      };
      const notification = async () =>
        (await emu.api<{ status: string; updatedAt: number }>(
          "GET",
          `/v1/webhooks/${hook.id}/notifications/${one.id}`,
        )).data;
      await resendSameKey();
      await waitFor("resent delivery", () => deliveriesOf(one.id) === 2);
      const settled = await waitFor("COMPLETED after resend", async () => {
        const n = await notification();
        return n.status === "COMPLETED" ? n : undefined;
      });
      // A resend rewrites the notification (IN_PROGRESS, a new updatedAt) before the platform
      // answers: unchanged after the second call means the same key did not resend again.
      await resendSameKey();
      assert.deepEqual(await notification(), settled, "the same idempotency key resent once");
      assert.deepEqual(deliveriesOf(one.id), 2, "the same idempotency key resent once");
      // Without --format the command prints nothing on stdout.
      const quiet = await cli(emu, [
        "notifications",
        "resend",
        "--webhookId",
        hook.id,
        "--notificationId",
        one.id,
      ]);
      assert.deepEqual(quiet.code, 0, quiet.stderr);
      assert.deepEqual(quiet.stdout, "");
      await waitFor("third delivery", () => deliveriesOf(one.id) === 3);

      // by resource: the dry run's count is what a real resend then delivers.
      const before = rx.count;
      const resB = (await allNotifications(emu, hook.id)).filter((n) => n.resourceId === "res-B");
      assert.deepEqual(resB.map((n) => n.status), ["FAILED", "FAILED"]);
      const dry = await cli(emu, [
        "notifications",
        "resend-by-resource",
        "--webhookId",
        hook.id,
        "--resourceId",
        "res-B",
        "--dryRun",
        "--format",
        "json",
      ]);
      assert.deepEqual(dry.code, 0, dry.stderr);
      assert.deepEqual(JSON.parse(dry.stdout), { dryRun: true, count: 2 });
      // A resend makes a notification IN_PROGRESS before the platform answers (and its redelivery
      // is answered 200): still FAILED once the dry run has exited means nothing was resent.
      for (const n of resB) {
        assert.deepEqual(
          await statusOf(emu, hook.id, n.id as string),
          "FAILED",
          "--dryRun resends",
        );
      }
      assert.deepEqual(rx.count, before, "--dryRun resends nothing");
      const real = await cli(emu, [
        "notifications",
        "resend-by-resource",
        "--webhookId",
        hook.id,
        "--resourceId",
        "res-B",
      ]);
      assert.deepEqual(real.code, 0, real.stderr);
      await waitFor("res-B redelivered", () => rx.count === before + 2);
      for (const n of resB) {
        assert.deepEqual(deliveriesOf(n.id as string), 2, "first try and one resend");
      }
      // All of res-B are COMPLETED now: the default exclusion (COMPLETED) leaves nothing; an empty one takes all.
      const none = await cli(emu, [
        "notifications",
        "resend-by-resource",
        "--webhookId",
        hook.id,
        "--resourceId",
        "res-B",
        "--dryRun",
        "--format",
        "json",
      ]);
      assert.deepEqual(JSON.parse(none.stdout).count, 0);
      const everything = await cli(emu, [
        "notifications",
        "resend-by-resource",
        "--webhookId",
        hook.id,
        "--resourceId",
        "res-B",
        "--excludeStatuses=",
        "--dryRun",
        "--format",
        "json",
      ]);
      assert.deepEqual(JSON.parse(everything.stdout).count, 2);

      // resend-failed --wait: the three FAILED of res-C are resent by a job.
      const beforeFailed = rx.count;
      const job = await cli(emu, [
        "notifications",
        "resend-failed",
        "--webhookId",
        hook.id,
        "--wait",
        "--format",
        "json",
      ]);
      assert.deepEqual(job.code, 0, job.stderr);
      const final = JSON.parse(job.stdout);
      assert.deepEqual(final.status, "COMPLETED");
      assert.deepEqual(final.total, 3);
      await waitFor("res-C redelivered", () => rx.count === beforeFailed + 3);
    } finally {
      await rx.close();
    }
  }, []);
});

Deno.test("suspension round trip: an endpoint failing > 80% is SUSPENDED; webhooks enable brings it back and deliveries resume", async () => {
  await withEmulator(async (emu) => {
    let healthy = false;
    const rx = startReceiver({ script: () => (healthy ? 200 : 500) });
    try {
      const hook = await createHook(emu, rx.url + "/s", ["connection.removed"]);
      await trigger(emu, "connection.removed", 3, "r-s");
      await waitFor("SUSPENDED", async () => {
        const h = await emu.api<Hook>("GET", `/v1/webhooks/${hook.id}`);
        return h.data.status === "SUSPENDED";
      });
      const metrics = await cli(emu, [
        "webhooks",
        "metrics",
        "--webhookId",
        hook.id,
        "--format",
        "json",
      ]);
      assert.deepEqual(metrics.code, 0, metrics.stderr);
      assert.ok(typeof JSON.parse(metrics.stdout).value === "number");
      const got = rx.count;
      const held = await trigger(emu, "connection.removed", 2, "r-s2");
      // Created while suspended they are ON_HOLD, which the engine never schedules (a delivery
      // would have made them IN_PROGRESS first); and none reached the receiver.
      for (const n of held) assert.deepEqual(await statusOf(emu, hook.id, n.id), "ON_HOLD");
      assert.deepEqual(rx.count, got, "nothing is delivered while suspended");
      healthy = true;
      const en = await cli(emu, [
        "webhooks",
        "enable",
        "--webhookId",
        hook.id,
        "--format",
        "table",
      ]);
      assert.deepEqual(en.code, 0, en.stderr);
      assert.deepEqual(en.stdout, `${hook.id}: SUSPENDED -> ENABLED\n`);
      const rs2 = () => rx.received.filter((r) => r.json.resourceId === "r-s2");
      await waitFor(
        "deliveries resume",
        () => rs2().filter((r) => r.answered === 200).length === 2,
      );
      // every r-s2 delivery came after the enable (a delivery while suspended was answered 500)
      assert.deepEqual(rs2().map((r) => r.answered), [200, 200]);
      const get = await cli(emu, ["webhooks", "get", "--webhookId", hook.id, "--format", "json"]);
      assert.deepEqual(JSON.parse(get.stdout).status, "ENABLED");
      const list = await cli(emu, ["webhooks", "list", "--format", "ndjson"]);
      assert.ok(ndjson(list.stdout).some((w) => w.id === hook.id));
    } finally {
      await rx.close();
    }
  });
});

Deno.test("attempts piped into breaker simulate reproduce the emulator's own suspension decision", async () => {
  await withEmulator(async (emu) => {
    // 200, 200, then failures: the rate climbs 33%, 50%, 60%, ... and passes 80% at the 11th attempt.
    const rx = startReceiver({ script: (n) => (n < 2 ? 200 : 500) });
    try {
      const hook = await createHook(emu, rx.url + "/b", ["embedded_wallet.created"]);
      for (let i = 0; i < 12; i++) await trigger(emu, "embedded_wallet.created", 1, `rb-${i}`);
      await waitFor("SUSPENDED", async () => {
        const h = await emu.api<Hook>("GET", `/v1/webhooks/${hook.id}`);
        return h.data.status === "SUSPENDED";
      });
      const list = await cli(emu, [
        "notifications",
        "list",
        "--webhookId",
        hook.id,
        "--all",
        "--format",
        "ndjson",
      ]);
      const ids = ndjson<{ id: string }>(list.stdout).map((n) => n.id);
      let log = "";
      for (const id of ids) {
        const a = await cli(emu, [
          "notifications",
          "attempts",
          "--webhookId",
          hook.id,
          "--notificationId",
          id,
          "--all",
        ]);
        assert.deepEqual(a.code, 0, a.stderr);
        log += a.stdout;
      }
      const attempts = ndjson<{ sentTime: number; webhookId: string }>(log);
      assert.ok(attempts.every((a) => a.webhookId === hook.id));
      const sim = await runCli([
        "breaker",
        "simulate",
        "-",
        "--sort",
        "--format",
        "ndjson",
        "--window",
        `${3_600_000 / TIME_SCALE}ms`,
        "--sustained-for",
        `${14_400_000 / TIME_SCALE}ms`,
      ], { stdin: log });
      assert.deepEqual(sim.code, 0, sim.stderr);
      const events = ndjson<{ type: string; time: string; reason?: string }>(sim.stdout);
      const suspended = events.filter((e) => e.type === "suspended");
      assert.deepEqual(suspended.length, 1, sim.stdout);
      const lastAttempt = Math.max(...attempts.map((a) => a.sentTime));
      assert.deepEqual(
        Date.parse(suspended[0].time),
        lastAttempt,
        "suspended at the last attempt the emulator made",
      );
      const outbox = await emu.api<{ data: { webhookId: string; createdAt: number }[] }>(
        "GET",
        "/admin/outbox",
      );
      assert.ok(outbox.data.data.some((m) => m.webhookId === hook.id), "the admins were e-mailed");
    } finally {
      await rx.close();
    }
    // One attempt in flight per endpoint: with more, an attempt already sent when the breaker trips
    // is made live but would count as suppressed in a replay sorted by sentTime.
  }, ["--timeScale", String(TIME_SCALE), "--webhookConcurrency", "1"]);
});

Deno.test("errors: unknown webhook exits 4, bad credentials 3, a platform answering 503 until retries run out 6", async () => {
  await withEmulator(async (emu) => {
    const unknown = await cli(emu, [
      "notifications",
      "list",
      "--webhookId",
      "00000000-0000-4000-8000-000000000000",
    ]);
    assert.deepEqual(unknown.code, 4, unknown.stderr);
    assert.deepEqual(unknown.stderr.trim().split("\n").length, 1);
    const badKey = await runCli(["webhooks", "list"], {
      env: { ...cliEnv(emu), SERVICE_API_KEY: "not-the-key" },
    });
    assert.deepEqual(badKey.code, 3, badKey.stderr);
    assert.deepEqual(badKey.stderr.trim().split("\n").length, 1);
    assert.match(badKey.stderr, /401/);
    const fault = await emu.api("POST", "/admin/faults", {
      body: { kind: "status", status: 503, count: 3, path: "/v1/webhooks*" },
    });
    assert.deepEqual(fault.status, 201);
    const down = await cli(emu, ["webhooks", "list", "--retries", "2"]);
    assert.deepEqual(down.code, 6, down.stderr);
    assert.deepEqual(down.stderr.trim().split("\n").length, 1);
    assert.match(down.stderr, /503/);
  });
});
