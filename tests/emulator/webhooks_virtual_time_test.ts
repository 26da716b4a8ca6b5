/**
 * The delivery engine on virtual time: the retry schedule (breaker.md §2) and
 * the breaker (§3) driven through the engine with an injected clock, no
 * sleeping, checked against the spec's literal numbers and, on random
 * traffic, against the independent reference model of §3
 * (tests/support/breaker_reference.ts, which imports nothing from lib/).
 * Delivery goes through an injected fetch that answers from a script.
 */

import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { type BodySigner, WebhookEngine } from "../../lib/emulator/webhooks/engine.ts";
import { WebhookSigner } from "../../lib/emulator/webhooks/signer.ts";
import { WebhookStore } from "../../lib/emulator/webhooks/store.ts";
import { suspensionMail } from "../../lib/emulator/webhooks/suspension_mail.ts";
import { DEFAULT_BREAKER_CONFIG } from "../../lib/webhooks/mod.ts";
import { VirtualClock } from "../support/virtual_clock.ts";
import {
  REFERENCE_DEFAULTS,
  referenceBreaker,
  type ReferenceEvent,
  referenceIsError,
} from "../support/breaker_reference.ts";

const T0 = Date.UTC(2026, 0, 1);
const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
/** breaker.md §2, literally: DELAYS in seconds. */
const DELAYS = [10, 30, 120, 300, 900, 1800, 3600, 7200, 14400];

const signer = await WebhookSigner.generate();

/** An engine on a virtual clock whose deliveries are answered by `answer(callIndex)`. */
function engineOn(
  answer: (call: number) => number,
  opts: {
    minAttempts?: number;
    concurrency?: number;
    signer?: BodySigner;
    breaker?: typeof DEFAULT_BREAKER_CONFIG;
  } = {},
) {
  const clock = new VirtualClock(T0);
  const logs: string[] = [];
  let calls = 0;
  const store = new WebhookStore(new DatabaseSync(":memory:"));
  const engine = new WebhookEngine({
    store,
    signer: opts.signer ?? signer,
    clock,
    concurrency: opts.concurrency,
    breaker: opts.breaker ?? { ...DEFAULT_BREAKER_CONFIG, minAttempts: opts.minAttempts ?? 1 },
    log: (l) => logs.push(l),
    fetch: (_url, init) => {
      // the body was read and signed as the platform would send it
      assert.equal(typeof init?.body, "string");
      return Promise.resolve(new Response(null, { status: answer(calls++) }));
    },
  });
  engine.start();
  const settle = () => engine.settled();
  return { clock, engine, store, logs, settle };
}

Deno.test("virtual time: a retryable failure is retried after exactly 10 s, 30 s, 2 min, ... 4 h, then FAILED after 10 attempts", async () => {
  // the breaker is held off (as in the live retry test) so that the series runs to its end
  const { clock, engine, store, settle } = engineOn(() => 500, { minAttempts: 1_000_000 });
  try {
    const w = engine.endpoints.create({ url: "http://receiver.invalid/hook", events: ["e"] });
    const [n] = engine.publish({ eventType: "e", resourceId: "r1", data: {} });
    await clock.runUntilIdle(settle);
    const attempts = store.attemptLog(w.id);
    assert.equal(attempts.length, 10);
    assert.equal(attempts[0].sentTime, T0, "attempt 1 is made when the notification is created");
    const gaps = attempts.slice(1).map((a, i) => (a.sentTime - attempts[i].sentTime) / SECOND);
    assert.deepEqual(gaps, DELAYS);
    const final = engine.resends.notification(w.id, n.id);
    assert.equal(final.status, "FAILED");
    assert.equal(final.attempts, 10);
    assert.equal(final.nextAttemptAt, null);
    // 10 + 30 + 120 + 300 + 900 + 1800 + 3600 + 7200 + 14400 s after the first
    assert.equal(attempts[9].sentTime - T0, 28_360 * SECOND);
  } finally {
    await engine.stop();
  }
});

/** How a scripted endpoint answers each attempt in the table test below. */
type Outcome = number | "TIMED_OUT" | "NO_RESPONSE";

Deno.test("virtual time: every row of breaker.md §1's table is retried, or not, as it says, with gaps of exactly 10 s, 30 s, ... 4 h", async () => {
  // breaker.md §1: which outcomes are delivered / retried; §2: the retry schedule (DELAYS above)
  const rows: { outcome: Outcome; status: "COMPLETED" | "FAILED"; attempts: number }[] = [
    { outcome: 200, status: "COMPLETED", attempts: 1 },
    { outcome: 204, status: "COMPLETED", attempts: 1 },
    { outcome: 500, status: "FAILED", attempts: 10 },
    { outcome: 503, status: "FAILED", attempts: 10 },
    { outcome: 408, status: "FAILED", attempts: 10 },
    { outcome: 429, status: "FAILED", attempts: 10 },
    { outcome: 400, status: "FAILED", attempts: 1 },
    { outcome: 404, status: "FAILED", attempts: 1 },
    { outcome: 101, status: "FAILED", attempts: 1 },
    { outcome: 301, status: "FAILED", attempts: 1 },
    { outcome: 302, status: "FAILED", attempts: 1 },
    { outcome: "TIMED_OUT", status: "FAILED", attempts: 10 },
    { outcome: "NO_RESPONSE", status: "FAILED", attempts: 10 },
  ];
  const clock = new VirtualClock(T0);
  const store = new WebhookStore(new DatabaseSync(":memory:"));
  const engine = new WebhookEngine({
    store,
    signer,
    clock,
    // the delivery timeout is a real timer (a few real ms): the virtual clock stands still
    // meanwhile, so the schedule is still exact
    deliveryTimeoutMs: 5,
    breaker: { ...DEFAULT_BREAKER_CONFIG, minAttempts: 1_000_000 },
    fetch: (url, init) => {
      const outcome = JSON.parse(decodeURIComponent(new URL(String(url)).hash.slice(1))) as Outcome;
      if (outcome === "NO_RESPONSE") return Promise.reject(new TypeError("connection refused"));
      if (outcome === "TIMED_OUT") {
        // answers only when the delivery gives up
        return new Promise((_, reject) =>
          init!.signal!.addEventListener("abort", () => reject(init!.signal!.reason))
        );
      }
      // a 1xx cannot be built as a Response; the delivery reads only status and body
      if (outcome < 200) return Promise.resolve({ status: outcome, body: null } as Response);
      return Promise.resolve(new Response(null, { status: outcome }));
    },
  });
  engine.start();
  try {
    const hooks = rows.map((r) =>
      engine.endpoints.create({
        url: `http://receiver.invalid/hook#${encodeURIComponent(JSON.stringify(r.outcome))}`,
        events: ["e"],
      })
    );
    const published = engine.publish({ eventType: "e", data: {} });
    assert.equal(published.length, rows.length);
    await clock.runUntilIdle(() => engine.settled());
    rows.forEach((row, i) => {
      const w = hooks[i].id;
      const what = `outcome ${row.outcome}`;
      const n = published.find((p) => p.webhookId === w)!;
      const final = engine.resends.notification(w, n.id);
      assert.equal(final.status, row.status, what);
      assert.equal(final.attempts, row.attempts, what);
      const attempts = store.attemptLog(w);
      assert.equal(attempts.length, row.attempts, what);
      for (const a of attempts) {
        if (typeof row.outcome === "number") {
          assert.equal(a.responseCode, row.outcome, what);
          assert.equal(a.failureReason, null, what);
        } else {
          assert.equal(a.responseCode, null, what);
          assert.equal(a.failureReason, row.outcome, what);
        }
        // §1's last column: everything but a 2xx is an error for the breaker
        assert.equal(a.error, row.status === "COMPLETED" ? 0 : 1, what);
      }
      assert.equal(attempts[0].sentTime, T0, `${what}: attempt 1 when the notification is created`);
      const gaps = attempts.slice(1).map((a, k) => (a.sentTime - attempts[k].sentTime) / SECOND);
      assert.deepEqual(gaps, DELAYS.slice(0, row.attempts - 1), what);
    });
  } finally {
    await engine.stop();
  }
});

Deno.test("virtual time: success after three failures completes with gaps 10 s, 30 s, 2 min; a 404 fails at once", async () => {
  const { clock, engine, store, settle } = engineOn((call) => call < 3 ? 503 : 200, {
    minAttempts: 1_000_000,
  });
  try {
    const w = engine.endpoints.create({ url: "http://receiver.invalid/hook", events: ["e"] });
    const [n] = engine.publish({ eventType: "e", data: {} });
    await clock.runUntilIdle(settle);
    const attempts = store.attemptLog(w.id);
    assert.deepEqual(attempts.map((a) => a.responseCode), [503, 503, 503, 200]);
    assert.deepEqual(attempts.map((a) => (a.sentTime - T0) / SECOND), [0, 10, 40, 160]);
    assert.equal(engine.resends.notification(w.id, n.id).status, "COMPLETED");
  } finally {
    await engine.stop();
  }
  const nf = engineOn(() => 404, { minAttempts: 1_000_000 });
  try {
    const w = nf.engine.endpoints.create({ url: "http://receiver.invalid/hook", events: ["e"] });
    const [n] = nf.engine.publish({ eventType: "e", data: {} });
    await nf.clock.runUntilIdle(nf.settle);
    assert.equal(nf.store.attemptLog(w.id).length, 1);
    assert.equal(nf.engine.resends.notification(w.id, n.id).status, "FAILED");
  } finally {
    await nf.engine.stop();
  }
});

Deno.test("virtual time: 4 errors of 5 (exactly 80%) is not above 80%; the 6th attempt, the first retry 10 s later, suspends", async () => {
  // one success, then only errors; one attempt in flight, so they are evaluated in order
  const { clock, engine, store, logs, settle } = engineOn((call) => call === 0 ? 200 : 500, {
    concurrency: 1,
  });
  try {
    const w = engine.endpoints.create({ url: "http://receiver.invalid/imm", events: ["e"] });
    engine.publishMany(Array.from({ length: 5 }, () => ({ eventType: "e", data: {} })));
    await clock.advanceTo(T0, settle);
    assert.equal(store.attemptLog(w.id).length, 5);
    assert.equal(engine.endpoints.row(w.id).status, "ENABLED", "4/5 = 0.80 is not above 0.80");
    await clock.runUntilIdle(settle, T0 + 10 * HOUR);
    const attempts = store.attemptLog(w.id);
    assert.equal(attempts.length, 6, "nothing is attempted while suspended");
    assert.equal(attempts[5].sentTime, T0 + 10 * SECOND);
    assert.equal(engine.endpoints.row(w.id).status, "SUSPENDED");
    const at = new Date(T0 + 10 * SECOND).toISOString();
    assert.deepEqual(
      logs.filter((l) => l.includes("SUSPENDED")),
      [
        `webhook ${w.id} SUSPENDED (immediate) at ${at}: 5 errors in 6 attempts of the window; e-mailed 1 admin`,
      ],
    );
    // the e-mail, word for word: the exact rate (83.3%, not rounded) and how to reactivate
    const [mail] = store.outbox();
    assert.equal(mail.to, "admin@emulator.local");
    assert.equal(mail.subject, "Webhook endpoint suspended: http://receiver.invalid/imm");
    assert.equal(
      mail.body,
      [
        `Your webhook endpoint http://receiver.invalid/imm (id ${w.id}) was suspended at ${at}.`,
        "Reason: error rate above 80% (5 of 6 attempts in the last hour failed, 83.3%).",
        "No notifications are sent to it while it is suspended; they wait ON_HOLD.",
        `Reactivate it (at once, no cooldown) with \`service webhooks enable --webhookId ${w.id}\`, ` +
        `with the Reactivate button of the emulator's console, or with PATCH /v1/webhooks/${w.id} {"enabled": true}.`,
      ].join("\n"),
    );
    // re-enabled: at once, with an empty window; the held notifications are attempted now
    const enabledAt = clock.now();
    engine.endpoints.update(w.id, { enabled: true });
    await clock.advanceTo(enabledAt, settle);
    assert.equal(
      store.attemptLog(w.id).length,
      6 + 1,
      "one in flight at a time: the first held one",
    );
    assert.equal(store.attemptLog(w.id)[6].sentTime, enabledAt);
  } finally {
    await engine.stop();
  }
});

Deno.test("virtual time: an error rate held in the band (50%..80%) suspends exactly 4 h after the band began", async () => {
  // success, error, error, over and over: every window of an hour is about 2/3 errors
  const { clock, engine, store, logs, settle } = engineOn((call) => call % 3 === 0 ? 200 : 500);
  try {
    const w = engine.endpoints.create({ url: "http://receiver.invalid/band", events: ["e"] });
    // one event a minute
    for (let k = 0; k <= 6 * 60 && engine.endpoints.row(w.id).status === "ENABLED"; k++) {
      await clock.advanceTo(T0 + k * MINUTE, settle);
      engine.publish({ eventType: "e", data: {} });
      await clock.advanceTo(T0 + k * MINUTE, settle);
    }
    assert.equal(engine.endpoints.row(w.id).status, "SUSPENDED");
    const attempts = store.attemptLog(w.id);
    const bandSince = attempts.find((a) => a.error)!.sentTime;
    assert.equal(bandSince, T0 + MINUTE, "the band began with the first error (1 of 2 = 50%)");
    const lines = logs.filter((l) => l.includes("SUSPENDED"));
    assert.equal(lines.length, 1);
    const m = lines[0].match(/SUSPENDED \((\w+)\) at (\S+):/)!;
    assert.equal(m[1], "sustained");
    assert.equal(Date.parse(m[2]) - bandSince, 4 * HOUR);
    // no attempt in the window went above 80% or below 50%: only the sustained rule acted
    const [mail] = store.outbox();
    assert.match(
      mail.body,
      /^Reason: error rate at or above 50% for 4 hours \(\d+ of \d+ attempts in the last hour failed, \d+(\.\d)?%\)\.$/m,
    );
  } finally {
    await engine.stop();
  }
});

Deno.test("virtual time: on random traffic the engine suspends exactly where the independent reference model of breaker.md §3 does", async () => {
  let seed = 20_260_101;
  const rnd = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
  const pick = <T>(xs: T[]): T => xs[Math.floor(rnd() * xs.length)];
  const reasons = new Set<string>();
  let suspensions = 0;
  for (let round = 0; round < 16; round++) {
    // the same parameters for both: the engine's in lib/webhooks' terms, the model's in its own
    const params = {
      windowMs: pick([30, 60]) * MINUTE,
      immediateAbove: pick([0.8, 0.7, 0.9]),
      sustainedFrom: pick([0.5, 0.4]),
      sustainedForMs: pick([1, 2, 4]) * HOUR,
      minAttempts: pick([1, 3, 10]),
    };
    const errorShare = 0.35 + 0.4 * rnd();
    const answers = [500, 503, 429, 404, 302];
    // after each start and re-enable, a few successes first, so that the window can sit in the
    // band for hours instead of tripping "immediate" on its first error
    let successesFirst = 3;
    const { clock, engine, store, logs, settle } = engineOn(
      () => successesFirst-- > 0 || rnd() >= errorShare ? 200 : pick(answers),
      {
        concurrency: 1,
        // signatures are not the point here (and RSA per notification would be most of the time)
        signer: { sign: () => Promise.resolve("unsigned") },
        breaker: { ...DEFAULT_BREAKER_CONFIG, ...params },
      },
    );
    try {
      const w = engine.endpoints.create({ url: "http://receiver.invalid/random", events: ["e"] });
      /** Where each re-enable falls in the recorded attempt log. */
      const enables: { at: number; time: number }[] = [];
      let t = T0;
      while (t < T0 + 12 * HOUR) {
        // whole minutes (and the retries' whole seconds): window edges and the sustain time
        // are hit exactly, and equal times (ties) occur
        t += Math.floor(rnd() * 5) * MINUTE;
        await clock.advanceTo(t, settle);
        if (engine.endpoints.row(w.id).status === "SUSPENDED" && rnd() < 0.1) {
          enables.push({ at: store.attemptLog(w.id).length, time: clock.now() });
          engine.endpoints.update(w.id, { enabled: true });
          successesFirst = 3;
        }
        engine.publishMany(Array.from({ length: 1 + Math.floor(rnd() * 3) }, () => ({
          eventType: "e",
          data: {},
        })));
        await clock.advanceTo(t, settle);
      }
      const events: ReferenceEvent[] = store.attemptLog(w.id).map((a) => ({
        type: "attempt",
        time: a.sentTime,
        error: referenceIsError({
          responseCode: a.responseCode ?? undefined,
          failureReason: a.failureReason ?? undefined,
        }),
      }));
      for (const e of [...enables].reverse()) {
        events.splice(e.at, 0, { type: "enable", time: e.time });
      }
      const decisions = referenceBreaker(events, { ...REFERENCE_DEFAULTS, ...params }).filter((d) =>
        d !== null
      );
      assert.equal(
        decisions.find((d) => d.startsWith("suppressed")),
        undefined,
        `round ${round}: the engine made an attempt where the model had it suspended`,
      );
      const expected = decisions.flatMap((d) => {
        const m = d.match(/^(immediate|sustained)@(\d+):(\d+)\/(\d+)/);
        return m
          ? [
            `SUSPENDED (${m[1]}) at ${new Date(Number(m[2])).toISOString()}: ${m[3]} error${
              m[3] === "1" ? "" : "s"
            } in ${m[4]} attempt${m[4] === "1" ? "" : "s"}`,
          ]
          : [];
      });
      const logged = logs.filter((l) => l.includes("SUSPENDED")).map((l) =>
        l.replace(/^webhook \S+ /, "").replace(/ of the window;.*$/, "")
      );
      assert.deepEqual(logged, expected, `round ${round} ${JSON.stringify(params)}`);
      assert.equal(
        decisions.filter((d) => d.startsWith("enabled")).length,
        enables.length,
        `round ${round}: every re-enable found the endpoint suspended`,
      );
      suspensions += expected.length;
      for (const e of expected) reasons.add(e.slice(11, 20));
    } finally {
      await engine.stop();
    }
  }
  // the rounds exercised both rules, often
  assert.ok(suspensions >= 16, `${suspensions} suspensions`);
  assert.deepEqual([...reasons].sort(), ["immediate", "sustained"]);
});

Deno.test("the suspension e-mail describes the breaker as configured", () => {
  const endpoint = { url: "https://example.com/hook", webhookId: "w1", time: T0 };
  const cfg = {
    ...DEFAULT_BREAKER_CONFIG,
    windowMs: 30 * MINUTE,
    immediateAbove: 0.9,
    sustainedFrom: 0.625,
    sustainedForMs: 90 * MINUTE,
  };
  const imm = suspensionMail(endpoint, {
    reason: "immediate",
    errorRate: 0.95,
    errors: 19,
    attempts: 20,
  }, cfg);
  assert.match(
    imm.body,
    /Reason: error rate above 90% \(19 of 20 attempts in the last 30 minutes failed, 95%\)\./,
  );
  const sus = suspensionMail(endpoint, {
    reason: "sustained",
    errorRate: 0.7,
    errors: 7,
    attempts: 10,
  }, cfg);
  assert.match(
    sus.body,
    /Reason: error rate at or above 62\.5% for 90 minutes \(7 of 10 attempts in the last 30 minutes failed, 70%\)\./,
  );
  const dflt = suspensionMail(endpoint, {
    reason: "sustained",
    errorRate: 0.5,
    errors: 4,
    attempts: 8,
  }, DEFAULT_BREAKER_CONFIG);
  assert.match(
    dflt.body,
    /Reason: error rate at or above 50% for 4 hours \(4 of 8 attempts in the last hour failed, 50%\)\./,
  );
});

Deno.test("virtual time: Resend notifications (the console's) resends every status of the last 24 h, nothing older; a dry run counts", async () => {
  // the second delivery is answered 404 (FAILED at once), the others 200 (COMPLETED); the
  // breaker is held off (that lone 404 would be 100% of its hour)
  const { clock, engine, store, settle } = engineOn((call) => call === 1 ? 404 : 200, {
    minAttempts: 1_000_000,
  });
  try {
    const w = engine.endpoints.create({ url: "http://receiver.invalid/hook", events: ["e"] });
    const [old] = engine.publish({ eventType: "e", resourceId: "old", data: {} });
    await clock.advanceTo(T0, settle);
    await clock.advanceTo(T0 + 2 * HOUR, settle);
    const [failed] = engine.publish({ eventType: "e", resourceId: "failed", data: {} });
    await clock.advanceTo(T0 + 2 * HOUR, settle);
    // 24 h after `failed` was created, less 1 ms; `old` is then 26 h old
    await clock.advanceTo(T0 + 26 * HOUR - 1, settle);
    const [done] = engine.publish({ eventType: "e", resourceId: "done", data: {} });
    await clock.advanceTo(T0 + 26 * HOUR - 1, settle);
    assert.deepEqual(
      [old, failed, done].map((n) => engine.resends.notification(w.id, n.id).status),
      ["COMPLETED", "FAILED", "COMPLETED"],
    );
    const before = store.attemptLog(w.id).length;
    assert.equal(engine.resends.resendRecent(w.id, { dryRun: true }), 2);
    assert.equal(store.attemptLog(w.id).length, before, "a dry run resends nothing");
    assert.equal(engine.resends.resendRecent(w.id), 2);
    await clock.advanceTo(T0 + 26 * HOUR - 1, settle);
    const resent = store.attemptLog(w.id).slice(before).map((a) => a.notificationId).sort();
    assert.deepEqual(resent, [failed.id, done.id].sort());
    assert.equal(engine.resends.notification(w.id, failed.id).status, "COMPLETED");
  } finally {
    await engine.stop();
  }
});
