/**
 * `breaker simulate --notifications` with flat memory (issue 15): the table
 * keeps only notifications in progress (those that reach COMPLETED or
 * FAILED go out as they do), the command prints every one of them exactly
 * as before, in a documented order, and the spill file it uses never
 * outlives it, whatever the exit path.
 */
import assert from "node:assert/strict";
import { runCli } from "../support/tools.ts";
import { mainCommand } from "../support/main_command.ts";
import { waitFor } from "../support/wait_for.ts";
import { NotificationTable } from "../../lib/webhooks/notification_table.ts";
import { DEFAULT_RETRY_CONFIG } from "../../lib/webhooks/retry_schedule.ts";
import type { NotificationReport } from "../../lib/webhooks/notification_table.ts";

const DIR = new URL("../fixtures/breaker/", import.meta.url).pathname;
const T0 = Date.UTC(2026, 0, 1);

Deno.test("notification table: a notification that reaches its final status is handed out and forgotten", () => {
  const finals: [NotificationReport, number][] = [];
  const t = new NotificationTable(DEFAULT_RETRY_CONFIG, (n, line) => finals.push([n, line]));
  // 10,000 delivered at once: none kept
  for (let i = 0; i < 10_000; i++) {
    t.attempt("w1", `n${i}`, { responseCode: 200 }, T0 + i, i + 1);
    assert.equal(t.size, 0);
  }
  assert.equal(finals.length, 10_000);
  assert.deepEqual(finals[9_999], [{
    notificationId: "n9999",
    webhookId: "w1",
    progress: { status: "COMPLETED", attempts: 1, lastSentTime: T0 + 9_999, nextAttemptAt: null },
  }, 10_000]);
  // retried, then delivered: kept while in progress, out at the delivering attempt's line
  finals.length = 0;
  t.attempt("w1", "r", { responseCode: 503 }, T0, 20_001);
  t.attempt("w1", "r", { failureReason: "TIMED_OUT" }, T0 + 10_000, 20_002);
  assert.equal(t.size, 1);
  assert.equal(finals.length, 0);
  t.attempt("w1", "r", { responseCode: 200 }, T0 + 40_000, 20_003);
  assert.equal(t.size, 0);
  assert.equal(finals[0][1], 20_003);
  assert.equal(finals[0][0].progress.attempts, 3);
  // a 404 is final at once; ten failures are final at the tenth
  t.attempt("w2", "x", { responseCode: 404 }, T0, 20_004);
  for (let k = 0; k < 10; k++) {
    t.attempt("w2", "y", { responseCode: 500 }, T0 + k * 1e7, 20_005 + k);
  }
  assert.deepEqual(finals.slice(1).map(([n, l]) => [n.notificationId, n.progress.status, l]), [
    ["x", "FAILED", 20_004],
    ["y", "FAILED", 20_014],
  ]);
  assert.equal(t.size, 0);
});

Deno.test("notification table: a resend after the final status is a new series, as the retry rule says", () => {
  const finals: NotificationReport[] = [];
  const streaming = new NotificationTable(DEFAULT_RETRY_CONFIG, (n) => finals.push(n));
  const keeping = new NotificationTable(DEFAULT_RETRY_CONFIG); // the old behaviour, the oracle
  const steps: [number, number][] = [[200, 0], [500, 60_000], [503, 70_000]];
  steps.forEach(([code, dt], i) => {
    streaming.attempt("w1", "n1", { responseCode: code }, T0 + dt, i + 1);
    keeping.attempt("w1", "n1", { responseCode: code }, T0 + dt, i + 1);
  });
  assert.equal(finals.length, 1);
  assert.equal(finals[0].progress.status, "COMPLETED");
  // the notification's state after the replay is the one the keeping table ends with
  assert.deepEqual([...streaming.entries()], [...keeping.entries()]);
  assert.equal([...streaming.entries()][0].progress.attempts, 2);
});

Deno.test("notification table: those in progress come out in first-seen order although slots are reused", () => {
  const t = new NotificationTable(DEFAULT_RETRY_CONFIG, () => {});
  t.attempt("w1", "a", { responseCode: 500 }, T0, 1);
  t.attempt("w1", "b", { responseCode: 500 }, T0, 2);
  t.attempt("w1", "a", { responseCode: 200 }, T0 + 10_000, 3); // a's slot is free
  t.attempt("w2", "c", { responseCode: 500 }, T0 + 10_000, 4); // takes it
  t.attempt("w1", "d", { responseCode: 500 }, T0 + 10_000, 5);
  assert.deepEqual([...t.entries()].map((n) => n.notificationId), ["b", "c", "d"]);
});

function simulate(args: string[], options: { env?: Record<string, string>; stdin?: string } = {}) {
  return runCli(["breaker", "simulate", ...args], options);
}

Deno.test("breaker simulate --notifications: final ones in the order they finalized, then those in progress, in every format", async () => {
  const log = [
    // healthy padding first, so that w1 is never suspended
    ...Array.from({ length: 20 }, (_, i) => ({
      webhookId: "w1",
      sentTime: T0 - 20 + i,
      responseCode: 200,
    })),
    { webhookId: "w1", notificationId: "n1", sentTime: T0, responseCode: 500 },
    { webhookId: "w1", notificationId: "n2", sentTime: T0 + 1, responseCode: 200 },
    { webhookId: "w1", notificationId: "n3", sentTime: T0 + 2, responseCode: 404 },
    { webhookId: "w1", notificationId: "n2", sentTime: T0 + 3, responseCode: 503 }, // a resend
    { webhookId: "w1", notificationId: "n1", sentTime: T0 + 10_000, responseCode: 200 },
  ].map((r) => JSON.stringify(r)).join("\n") + "\n";
  const r = await simulate(["-", "--format", "ndjson", "--notifications"], { stdin: log });
  assert.equal(r.code, 0, r.stderr);
  const lines = r.stdout.trim().split("\n").map((l) => JSON.parse(l));
  const notes = lines.filter((l) => l.type === "notification");
  assert.deepEqual(notes.map((n) => [n.notificationId, n.status, n.attempts]), [
    ["n2", "COMPLETED", 1], // line 22
    ["n3", "FAILED", 1], // line 23
    ["n1", "COMPLETED", 2], // line 25
    ["n2", "IN_PROGRESS", 1], // the resend's series, still in progress
  ]);
  assert.equal(lines.at(-1).type, "summary");
  // json: exactly JSON.stringify of { events, notifications, summary } with 2 spaces
  const j = await simulate(["-", "--format", "json", "--notifications"], { stdin: log });
  assert.equal(j.code, 0, j.stderr);
  const doc = JSON.parse(j.stdout);
  assert.deepEqual(Object.keys(doc), ["events", "notifications", "summary"]);
  assert.equal(j.stdout, JSON.stringify(doc, null, 2) + "\n");
  assert.deepEqual(doc.notifications, notes);
  // table: the same notifications, one row each, after the webhooks
  const t = await simulate(["-", "--format", "table", "--notifications"], { stdin: log });
  assert.equal(t.code, 0, t.stderr);
  const rows = t.stdout.split("\n").filter((l) => /^n\d\s/.test(l));
  assert.deepEqual(rows.map((l) => l.split(/\s+/).slice(0, 4)), [
    ["n2", "w1", "COMPLETED", "1"],
    ["n3", "w1", "FAILED", "1"],
    ["n1", "w1", "COMPLETED", "2"],
    ["n2", "w1", "IN_PROGRESS", "1"],
  ]);
});

Deno.test("breaker simulate --format json: the layout of JSON.stringify with and without notification lines", async () => {
  for (
    const args of [
      [DIR + "reenable_suppressed.ndjson", "--notifications"],
      [DIR + "exactly_50_percent.ndjson", "--notifications"], // no notificationIds: []
      [DIR + "exactly_50_percent.ndjson"],
    ]
  ) {
    const r = await simulate([...args, "--format", "json"]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, JSON.stringify(JSON.parse(r.stdout), null, 2) + "\n", args.join(" "));
  }
  const empty = JSON.parse(
    (await simulate([DIR + "exactly_50_percent.ndjson", "--notifications", "--format", "json"]))
      .stdout,
  );
  assert.deepEqual(empty.notifications, []);
});

Deno.test("breaker simulate --notifications: the spill file is private, gone from its directory while open, and never left behind", async () => {
  const tmp = await Deno.makeTempDir({ prefix: "breaker-spill-" });
  try {
    // a finished run, and a run stopped by an invalid line, leave nothing
    const ok = await simulate([DIR + "retries_notifications.ndjson", "--notifications"], {
      env: { TMPDIR: tmp },
    });
    assert.equal(ok.code, 0, ok.stderr);
    const bad = await simulate(["-", "--notifications"], {
      env: { TMPDIR: tmp },
      stdin:
        `{"webhookId":"w1","notificationId":"n1","sentTime":${T0},"responseCode":200}\nnot json\n`,
    });
    assert.equal(bad.code, 1);
    assert.deepEqual([...Deno.readDirSync(tmp)], []);
    // a run waiting on standard input holds the file open, already removed, mode 0600
    const child = mainCommand(["breaker", "simulate", "-", "--notifications"], {
      env: { TMPDIR: tmp },
      stdin: "piped",
      stdout: "null",
      stderr: "null",
    }).spawn();
    try {
      const w = child.stdin.getWriter();
      await w.write(new TextEncoder().encode(
        `{"webhookId":"w1","notificationId":"n1","sentTime":${T0},"responseCode":200}\n`,
      ));
      // (between its creation and its removal a moment later the open file still has its name)
      const held = await waitFor(
        "the child to open its spill file and remove its name",
        async () => {
          for (const fd of Deno.readDirSync(`/proc/${child.pid}/fd`)) {
            const target = await Deno.readLink(`/proc/${child.pid}/fd/${fd.name}`).catch(() => "");
            if (target.startsWith(tmp) && target.endsWith(" (deleted)")) {
              assert.match(target, /service-breaker-notifications-.* \(deleted\)$/);
              return `/proc/${child.pid}/fd/${fd.name}`;
            }
          }
        },
      );
      assert.equal((await Deno.stat(held)).mode! & 0o777, 0o600);
      assert.deepEqual([...Deno.readDirSync(tmp)], []);
      child.kill("SIGKILL"); // no clean-up runs at all
      await w.close().catch(() => {});
    } finally {
      // a failure above must not leave the child waiting on its standard input (and this test
      // waiting on the child): it ends here either way
      try {
        child.kill("SIGKILL");
      } catch { /* already ended */ }
      await child.status;
    }
    assert.deepEqual([...Deno.readDirSync(tmp)], []);
    // no writable temporary directory: one clear line, exit 1, nothing printed
    const none = await simulate([DIR + "retries_notifications.ndjson", "--notifications"], {
      env: { TMPDIR: `${tmp}/missing` },
    });
    assert.equal(none.code, 1);
    assert.equal(none.stdout, "");
    assert.match(
      none.stderr,
      /^error: Cannot create a temporary file for --notifications: .*Set TMPDIR to a writable directory\.\n$/,
    );
  } finally {
    await Deno.remove(tmp, { recursive: true });
  }
});
