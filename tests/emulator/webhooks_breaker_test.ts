/**
 * The circuit breaker live in the emulator (breaker.md §3, default
 * parameters, durations divided by --timeScale 3600: window 1 s, band 4 s):
 * immediate suspension above 80%, sustained suspension after the band is
 * held for the scaled 4 hours, nothing delivered while suspended, PATCH
 * enabled:true resumes, and the outbox holds the e-mails. The attempt log the
 * emulator recorded, fed to the independent reference model of breaker.md §3
 * (tests/support/breaker_reference.ts, which shares no code with lib/), gives
 * exactly the suspensions the emulator logged; replayed through
 * `service breaker simulate` it gives them too.
 *
 * No wall-clock thresholds: the times compared are those the emulator
 * recorded (attempts' sentTime, the suspension's time, the re-enable's
 * updatedAt). The exact 4 h / 10 s figures on the default scale are in
 * webhooks_virtual_time_test.ts.
 */

import assert from "node:assert/strict";
import { type EmulatorProcess, startEmulatorOnAnvil } from "../support/emulator_process.ts";
import { waitFor } from "../support/wait_for.ts";
import { type ReceiverAnswer, startReceiver } from "../support/receiver.ts";
import { runCli } from "../support/tools.ts";
import {
  REFERENCE_DEFAULTS,
  referenceBreaker,
  type ReferenceEvent,
  referenceIsError,
} from "../support/breaker_reference.ts";

const SCALE = 3600;
const SUSTAIN_MS = 4 * 3_600_000 / SCALE;

async function createHook(emu: EmulatorProcess, url: string, event: string): Promise<string> {
  const r = await emu.api<{ id: string }>("POST", "/v1/webhooks", {
    body: { url, events: [event] },
  });
  assert.equal(r.status, 201);
  return r.data.id;
}

async function trigger(emu: EmulatorProcess, eventType: string, count = 1) {
  const r = await emu.api<{ data: { id: string; webhookId: string }[] }>(
    "POST",
    "/admin/notifications",
    { body: { eventType, count } },
  );
  assert.equal(r.status, 201);
  return r.data.data;
}

async function status(emu: EmulatorProcess, w: string): Promise<string> {
  return (await emu.api<{ status: string }>("GET", `/v1/webhooks/${w}`)).data.status;
}

Deno.test("the breaker suspends above 80% at once and after the scaled 4 h in the band; PATCH enabled:true resumes", async () => {
  // one attempt in flight per endpoint: attempts are evaluated in the order
  // they were sent, so the recorded log replays exactly (see the end)
  const emu = await startEmulatorOnAnvil([
    "--timeScale",
    String(SCALE),
    "--webhookConcurrency",
    "1",
  ]);
  let immediateAnswers: ReceiverAnswer = 500;
  const rc = startReceiver({
    jwksUrl: emu.ready.jwksUrl,
    script: (n, body) => {
      if (body.eventType === "contract_wallet.asset.added") return n === 0 ? 200 : immediateAnswers;
      // band: one success, two errors, over and over: 2/3 of the window are errors
      return n % 3 === 0 ? 200 : 500;
    },
  });
  try {
    // ---- immediate: one success, then only errors
    const imm = await createHook(emu, `${rc.url}/immediate`, "contract_wallet.asset.added");
    // five at once, sent one after the other (one slot): the first is answered 200, the rest 500
    await trigger(emu, "contract_wallet.asset.added", 5);
    await waitFor("the immediate suspension", async () => (await status(emu, imm)) === "SUSPENDED");
    // 4 errors of 5 is exactly 0.80, which is not above: the 6th attempt (5 of 6) suspends
    await waitFor(
      "the suspension log line",
      () =>
        new RegExp(`webhook ${imm} SUSPENDED \\(immediate\\) at \\S+: 5 errors in 6 attempts`)
          .test(emu.stderr()),
      5_000,
    );
    // one attempt in flight and its answer came back before the suspension was recorded:
    // the receiver has seen exactly the 6 attempts, with no wait
    const seenAtSuspension = rc.received.filter((r) => r.json.webhookId === imm).length;
    assert.equal(seenAtSuspension, 6);
    const suspendedAt = Date.parse(
      emu.stderr().match(new RegExp(`webhook ${imm} SUSPENDED \\(immediate\\) at (\\S+):`))![1],
    );

    // new notifications wait ON_HOLD (nothing is sent while suspended: checked on the
    // recorded attempts below, once everything has ended, so the check does not rely on a wait)
    const held = await trigger(emu, "contract_wallet.asset.added", 3);
    for (const n of held) {
      const r = await emu.api<{ status: string }>(
        "GET",
        `/v1/webhooks/${imm}/notifications/${n.id}`,
      );
      assert.equal(r.data.status, "ON_HOLD");
    }
    const onHold = await emu.api<{ data: unknown[]; total: number }>(
      "GET",
      `/v1/webhooks/${imm}/notifications`,
      { query: { statuses: ["ON_HOLD"] } },
    );
    assert.equal(onHold.data.total, 7, "the 3 new + the 4 failing ones wait");

    // re-enable: at once, and the waiting notifications are delivered
    immediateAnswers = 200;
    const p = await emu.api<{ status: string }>("PATCH", `/v1/webhooks/${imm}`, {
      body: { enabled: true },
    });
    assert.equal(p.status, 200);
    assert.equal(p.data.status, "ENABLED");
    const enabledAt = (p.data as unknown as { updatedAt: number }).updatedAt;
    await waitFor("the held notifications to be delivered", async () => {
      const r = await emu.api<{ total: number }>("GET", `/v1/webhooks/${imm}/notifications`, {
        query: { statuses: ["COMPLETED"] },
      });
      return r.data.total === 8;
    }, 10_000);
    assert.equal(await status(emu, imm), "ENABLED");
    // 6 attempts up to the suspension, none while suspended, then one per held notification
    // (the log's attempt lines: its `action: enable` line is checked below)
    const immAttempts = (await emu.api<{ data: { sentTime: number; action?: string }[] }>(
      "GET",
      "/admin/attempts",
      { query: { webhookId: imm } },
    )).data.data.filter((a) => a.action === undefined);
    assert.deepEqual(
      {
        upToSuspension: immAttempts.filter((a) => a.sentTime <= suspendedAt).length,
        whileSuspended: immAttempts.filter((a) =>
          a.sentTime > suspendedAt && a.sentTime < enabledAt
        ).length,
        afterEnable: immAttempts.filter((a) => a.sentTime >= enabledAt).length,
      },
      { upToSuspension: 6, whileSuspended: 0, afterEnable: 7 },
    );
    assert.equal(rc.received.filter((r) => r.json.webhookId === imm).length, 6 + 7);

    // ---- sustained: 2/3 errors (inside 50-80%) held for the scaled 4 hours
    const band = await createHook(emu, `${rc.url}/band`, "connection.added");
    // the first answer is a success, so the window never starts with an error alone
    await trigger(emu, "connection.added");
    await waitFor(
      "the first band delivery",
      () => rc.received.some((r) => r.json.webhookId === band),
    );
    // keep the endpoint busy (the 15 ms pause only paces the load; nothing is measured by it)
    // until it is suspended, giving up after three times the scaled 4 h
    await waitFor(
      "the band endpoint to be suspended",
      async () => {
        await trigger(emu, "connection.added");
        return (await status(emu, band)) === "SUSPENDED";
      },
      SUSTAIN_MS * 3,
      15,
    );
    const sustained = emu.stderr().match(
      new RegExp(`webhook ${band} SUSPENDED \\(sustained\\) at (\\S+):`),
    );
    assert.ok(sustained, "the sustained suspension's log line");
    // on the emulator's own clock: the band began at the first error's sentTime and the
    // suspension came at the first attempt at least the scaled 4 h later
    const bandAttempts = (await emu.api<{ data: { sentTime: number; responseCode?: number }[] }>(
      "GET",
      "/admin/attempts",
      { query: { webhookId: band } },
    )).data.data;
    const firstError = bandAttempts.find((a) => a.responseCode === 500)!;
    const bandSuspendedAt = Date.parse(sustained[1]);
    assert.ok(
      bandSuspendedAt - firstError.sentTime >= SUSTAIN_MS,
      `suspended ${bandSuspendedAt - firstError.sentTime} ms after the band began`,
    );
    assert.doesNotMatch(emu.stderr(), new RegExp(`webhook ${band} SUSPENDED \\(immediate\\)`));

    // ---- the outbox has one e-mail per suspension and admin
    const box = await emu.api<
      { data: { to: string; subject: string; body: string; webhookId: string }[] }
    >(
      "GET",
      "/admin/outbox",
    );
    assert.equal(box.status, 200);
    const forImm = box.data.data.filter((m) => m.webhookId === imm);
    const forBand = box.data.data.filter((m) => m.webhookId === band);
    assert.ok(forImm.length >= 1 && forBand.length >= 1);
    assert.match(forImm[0].body, /above 80%/);
    assert.match(forBand[0].body, /50% for 4 hours/);
    assert.match(forImm[0].to, /@/);

    // the metric answers in whole percent
    const m = await emu.api<{ value: string }>(
      "GET",
      `/v1/webhooks/${band}/metrics/LAST_ACTIVE_HOUR_ERROR_RATE`,
    );
    assert.equal(m.status, 200);
    assert.match(m.data.value, /^\d+$/);
    assert.ok(Number(m.data.value) >= 50 && Number(m.data.value) <= 80, `rate ${m.data.value}`);

    const live = [
      ...emu.stderr().matchAll(
        /webhook (\S+) SUSPENDED \((\w+)\) at (\S+): (\d+) errors? in (\d+) attempts?/g,
      ),
    ].map((x) => `${x[1]} ${x[2]} ${x[3]} ${x[4]}/${x[5]}`);
    assert.equal(live.length, 2);

    // ---- the recorded attempt log, read by the independent reference model, gives exactly
    // the suspensions the emulator logged (and no attempt it would have suppressed)
    const log = await emu.api<
      {
        data: { webhookId: string; sentTime: number; responseCode?: number; action?: string }[];
      }
    >("GET", "/admin/attempts");
    assert.equal(log.status, 200);
    // the reactivation is in the log, as breaker.md §4's control line, at the PATCH's time
    assert.deepEqual(log.data.data.filter((a) => a.action !== undefined), [
      { webhookId: imm, sentTime: enabledAt, action: "enable" },
    ]);
    const refCfg = {
      ...REFERENCE_DEFAULTS,
      windowMs: 3_600_000 / SCALE,
      sustainedForMs: SUSTAIN_MS,
    };
    const expected: string[] = [];
    for (const w of [imm, band]) {
      // log order is evaluation order (one attempt in flight per endpoint), the
      // reactivation included
      const events: ReferenceEvent[] = log.data.data.filter((a) => a.webhookId === w).map((a) =>
        a.action === "enable"
          ? { type: "enable", time: a.sentTime }
          : { type: "attempt", time: a.sentTime, error: referenceIsError(a) }
      );
      const decisions = referenceBreaker(events, refCfg).filter((d) => d !== null);
      assert.ok(!decisions.some((d) => d.startsWith("suppressed")), `${w}: ${decisions}`);
      for (const d of decisions) {
        const m = d.match(/^(immediate|sustained)@(\d+):(\d+\/\d+)(?::(\d+))?$/);
        if (!m) continue;
        expected.push(`${w} ${m[1]} ${new Date(Number(m[2])).toISOString()} ${m[3]}`);
        if (m[1] === "sustained") {
          assert.equal(Number(m[4]), firstError.sentTime, "bandSince is the first error");
        }
      }
      if (w === imm) assert.ok(decisions.includes(`enabled@${enabledAt}`));
    }
    assert.deepEqual(expected.sort(), [...live].sort());

    // ---- the same log, saved as it is, replayed by `service breaker simulate` (no --sort, no
    // line added by hand) reaches the same decisions, and re-enables where the PATCH did
    const lines = log.data.data.map((a) => JSON.stringify(a));
    const file = await Deno.makeTempFile({ suffix: ".ndjson" });
    try {
      await Deno.writeTextFile(file, lines.join("\n") + "\n");
      const sim = await runCli([
        "breaker",
        "simulate",
        file,
        "--window",
        String(3_600_000 / SCALE),
        "--sustainedFor",
        String(SUSTAIN_MS),
        "--format",
        "ndjson",
      ]);
      assert.equal(sim.code, 0, sim.stderr);
      const out = sim.stdout.trim().split("\n").map((l) => JSON.parse(l));
      const replayed = out.filter((e) => e.type === "suspended")
        .map((e) => `${e.webhookId} ${e.reason} ${e.time} ${e.errors}/${e.attempts}`);
      assert.deepEqual(replayed.sort(), [...live].sort());
      assert.deepEqual(
        out.filter((e) => e.type === "enabled").map((e) => `${e.webhookId} ${e.time}`),
        [`${imm} ${new Date(enabledAt).toISOString()}`],
      );
      // nothing counted as suppressed: the attempts after the reactivation were counted
      assert.equal(out.find((e) => e.type === "summary").suppressed, 0);
    } finally {
      await Deno.remove(file);
    }
  } finally {
    await rc.close();
    await emu.stop();
  }
});

Deno.test("/admin/attempts is in time order even when attempts in flight together finish out of order, and replays without --sort", async () => {
  // default concurrency (8): the first attempt is held by the receiver until a later one,
  // sent after it, has been answered, so it is recorded after an attempt with a later sentTime
  const emu = await startEmulatorOnAnvil(["--timeScale", String(SCALE)]);
  let release: () => void = () => {};
  const released = new Promise<void>((r) => release = r);
  const seen: string[] = [];
  let arrived: () => void = () => {};
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (req) => {
    const body = await req.json();
    seen.push(body.id);
    arrived();
    if (seen.length === 1) await released; // the first one waits
    return new Response(null, { status: seen.indexOf(body.id) === 0 ? 200 : 500 });
  });
  const nextArrival = () => new Promise<void>((r) => arrived = r);
  try {
    const w = await createHook(
      emu,
      `http://127.0.0.1:${server.addr.port}/hook`,
      "contract_wallet.asset.removed",
    );
    let arrival = nextArrival();
    const [first] = await trigger(emu, "contract_wallet.asset.removed");
    await arrival;
    // the next attempt must have a later sentTime: wait until the clock has moved on
    const t = Date.now();
    await waitFor("the clock to move on", () => Date.now() > t + 1, 1_000, 1);
    arrival = nextArrival();
    const [second] = await trigger(emu, "contract_wallet.asset.removed");
    await arrival;
    await waitFor(
      "the second attempt to be recorded",
      async () =>
        (await emu.api<{ data: unknown[] }>("GET", "/admin/attempts")).data.data.length === 1,
    );
    release();
    const log = await waitFor("both attempts to be recorded", async () => {
      const r = await emu.api<
        { data: { webhookId: string; notificationId: string; sentTime: number }[] }
      >("GET", "/admin/attempts", { query: { webhookId: w } });
      return r.data.data.length === 2 ? r.data.data : null;
    });
    // recorded second, listed first: the log is in sentTime order
    assert.deepEqual(log.map((a) => a.notificationId), [first.id, second.id]);
    assert.ok(log[0].sentTime < log[1].sentTime);
    const file = await Deno.makeTempFile({ suffix: ".ndjson" });
    try {
      await Deno.writeTextFile(file, log.map((a) => JSON.stringify(a)).join("\n") + "\n");
      const sim = await runCli(["breaker", "simulate", file, "--format", "ndjson"]);
      assert.equal(sim.code, 0, sim.stderr);
      const summary = JSON.parse(sim.stdout.trim().split("\n").at(-1)!);
      assert.equal(summary.attempts, 2);
    } finally {
      await Deno.remove(file);
    }
  } finally {
    release();
    await server.shutdown();
    await emu.stop();
  }
});
