/**
 * The circuit breaker live in the emulator (breaker.md §3, default
 * parameters, durations divided by --timeScale 3600: window 1 s, band 4 s):
 * immediate suspension above 80%, sustained suspension after the band is
 * held for the scaled 4 hours, nothing delivered while suspended, PATCH
 * enabled:true resumes, and the outbox holds the e-mails. The attempt log
 * replayed through `service breaker simulate` gives the same suspensions.
 */

import assert from "node:assert/strict";
import {
  type EmulatorProcess,
  startEmulatorOnAnvil,
  waitFor,
} from "../support/emulator_process.ts";
import { type ReceiverAnswer, startReceiver } from "../support/receiver.ts";
import { runCli } from "../support/tools.ts";

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
      if (body.eventType === "test.immediate") return n === 0 ? 200 : immediateAnswers;
      // band: one success, two errors, over and over: 2/3 of the window are errors
      return n % 3 === 0 ? 200 : 500;
    },
  });
  try {
    // ---- immediate: one success, then only errors
    const imm = await createHook(emu, `${rc.url}/immediate`, "test.immediate");
    // five at once, sent one after the other (one slot): the first is answered 200, the rest 500
    await trigger(emu, "test.immediate", 5);
    await waitFor("the immediate suspension", async () => (await status(emu, imm)) === "SUSPENDED");
    // 4 errors of 5 is exactly 0.80, which is not above: the 6th attempt (5 of 6) suspends
    await waitFor(
      "the suspension log line",
      () =>
        new RegExp(`webhook ${imm} SUSPENDED \\(immediate\\) at \\S+: 5 errors in 6 attempts`)
          .test(emu.stderr()),
      5_000,
    );
    await new Promise((r) => setTimeout(r, 100)); // answers already on the wire settle
    const seenAtSuspension = rc.received.filter((r) => r.json.webhookId === imm).length;
    assert.equal(seenAtSuspension, 6);

    // nothing is sent while suspended; new notifications wait ON_HOLD
    const held = await trigger(emu, "test.immediate", 3);
    await new Promise((r) => setTimeout(r, 500));
    assert.equal(rc.received.filter((r) => r.json.webhookId === imm).length, seenAtSuspension);
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

    // ---- sustained: 2/3 errors (inside 50-80%) held for the scaled 4 hours
    const band = await createHook(emu, `${rc.url}/band`, "test.band");
    // the first answer is a success, so the window never starts with an error alone
    await trigger(emu, "test.band");
    await waitFor(
      "the first band delivery",
      () => rc.received.some((r) => r.json.webhookId === band),
    );
    const started = Date.now();
    let suspendedAt = 0;
    while (Date.now() - started < SUSTAIN_MS * 3) {
      await trigger(emu, "test.band");
      if ((await status(emu, band)) === "SUSPENDED") {
        suspendedAt = Date.now();
        break;
      }
      await new Promise((r) => setTimeout(r, 15));
    }
    assert.ok(suspendedAt > 0, "the band endpoint was never suspended");
    const bandSeen = rc.received.filter((r) => r.json.webhookId === band);
    const firstError = bandSeen.find((r) => r.answered === 500)!;
    // bandSince is the first error's sentTime, a millisecond or so before it arrived here
    assert.ok(
      suspendedAt - firstError.at >= SUSTAIN_MS - 20,
      `suspended ${suspendedAt - firstError.at} ms after the band began, before ${SUSTAIN_MS} ms`,
    );
    assert.match(emu.stderr(), new RegExp(`webhook ${band} SUSPENDED \\(sustained\\)`));
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

    // ---- the same attempt log replayed by `service breaker simulate` reaches the same decisions
    const log = await emu.api<{ data: Record<string, unknown>[] }>("GET", "/admin/attempts");
    assert.equal(log.status, 200);
    const lines = log.data.data.map((a) => JSON.stringify(a));
    lines.push(JSON.stringify({ webhookId: imm, sentTime: enabledAt, action: "enable" }));
    const file = await Deno.makeTempFile({ suffix: ".ndjson" });
    try {
      // the log is in recorded order per webhook; --sort merges the re-enable line in by time
      await Deno.writeTextFile(file, lines.join("\n") + "\n");
      const sim = await runCli([
        "breaker",
        "simulate",
        file,
        "--sort",
        "--window",
        String(3_600_000 / SCALE),
        "--sustainedFor",
        String(SUSTAIN_MS),
        "--format",
        "ndjson",
      ]);
      assert.equal(sim.code, 0, sim.stderr);
      const replayed = sim.stdout.trim().split("\n").map((l) => JSON.parse(l))
        .filter((e) => e.type === "suspended")
        .map((e) => `${e.webhookId} ${e.reason} ${e.time} ${e.errors}/${e.attempts}`);
      const live = [
        ...emu.stderr().matchAll(
          /webhook (\S+) SUSPENDED \((\w+)\) at (\S+): (\d+) errors in (\d+) attempts/g,
        ),
      ].map((x) => `${x[1]} ${x[2]} ${x[3]} ${x[4]}/${x[5]}`);
      assert.equal(live.length, 2);
      assert.deepEqual(replayed.sort(), live.sort());
    } finally {
      await Deno.remove(file);
    }
  } finally {
    await rc.close();
    await emu.stop();
  }
});
