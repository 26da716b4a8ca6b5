import assert from "node:assert/strict";
import {
  afterAttempt,
  type AttemptOutcome,
  classifyOutcome,
  DEFAULT_RETRY_CONFIG,
  initialProgress,
  MAX_ATTEMPTS,
  type NotificationProgress,
  RETRY_DELAYS_SECONDS,
} from "../../lib/webhooks/retry_schedule.ts";

// Every row of the table in breaker.md §1, with codes at both ends of each range.
const TABLE: [string, AttemptOutcome, boolean, boolean, boolean][] = [
  ["200", { responseCode: 200 }, true, false, false],
  ["204", { responseCode: 204 }, true, false, false],
  ["299", { responseCode: 299 }, true, false, false],
  ["500", { responseCode: 500 }, false, true, true],
  ["503", { responseCode: 503 }, false, true, true],
  ["599", { responseCode: 599 }, false, true, true],
  ["408", { responseCode: 408 }, false, true, true],
  ["429", { responseCode: 429 }, false, true, true],
  ["400", { responseCode: 400 }, false, false, true],
  ["404", { responseCode: 404 }, false, false, true],
  ["410", { responseCode: 410 }, false, false, true],
  ["499", { responseCode: 499 }, false, false, true],
  ["100", { responseCode: 100 }, false, false, true],
  ["199", { responseCode: 199 }, false, false, true],
  ["301", { responseCode: 301 }, false, false, true],
  ["302", { responseCode: 302 }, false, false, true],
  ["399", { responseCode: 399 }, false, false, true],
  ["TIMED_OUT", { failureReason: "TIMED_OUT" }, false, true, true],
  ["NO_RESPONSE", { failureReason: "NO_RESPONSE" }, false, true, true],
];

for (const [name, outcome, delivered, retryable, error] of TABLE) {
  Deno.test(`outcome ${name}: delivered=${delivered}, retried=${retryable}, error=${error}`, () => {
    assert.deepEqual({ ...classifyOutcome(outcome) }, { delivered, retryable, error });
  });
}

Deno.test("the default schedule is the documented one", () => {
  assert.deepEqual(
    [...RETRY_DELAYS_SECONDS],
    [10, 30, 120, 300, 900, 1800, 3600, 7200, 14400],
  );
  assert.equal(MAX_ATTEMPTS, 10);
  assert.deepEqual([...DEFAULT_RETRY_CONFIG.delaysMs], RETRY_DELAYS_SECONDS.map((s) => s * 1000));
});

Deno.test("a new series is in progress with no attempts", () => {
  assert.deepEqual(initialProgress(), {
    status: "IN_PROGRESS",
    attempts: 0,
    lastSentTime: null,
    nextAttemptAt: null,
  });
});

Deno.test("ten failed retryable attempts follow the delays, then FAILED", () => {
  let p = initialProgress();
  let t = 1_000_000;
  const due: (number | null)[] = [];
  for (let k = 1; k <= 10; k++) {
    p = afterAttempt(p, k % 2 ? { responseCode: 503 } : { failureReason: "TIMED_OUT" }, t);
    assert.equal(p.attempts, k);
    assert.equal(p.lastSentTime, t);
    due.push(p.nextAttemptAt);
    if (k < 10) {
      assert.equal(p.status, "IN_PROGRESS");
      // the next attempt is made late (+7 ms) to show the delay counts from the real sentTime
      t = p.nextAttemptAt! + 7;
    }
  }
  assert.equal(p.status, "FAILED");
  assert.equal(p.nextAttemptAt, null);
  // the k-th delay counted from the k-th attempt's sentTime
  let sent = 1_000_000;
  for (let k = 1; k <= 9; k++) {
    assert.equal(due[k - 1], sent + RETRY_DELAYS_SECONDS[k - 1] * 1000);
    sent = due[k - 1]! + 7;
  }
});

Deno.test("a 404 makes the notification FAILED at once", () => {
  const p = afterAttempt(initialProgress(), { responseCode: 404 }, 5);
  assert.deepEqual(p, { status: "FAILED", attempts: 1, lastSentTime: 5, nextAttemptAt: null });
});

Deno.test("a redirect is not followed and not retried", () => {
  const p = afterAttempt(initialProgress(), { responseCode: 302 }, 5);
  assert.equal(p.status, "FAILED");
});

Deno.test("a delivered attempt after failures completes the notification", () => {
  let p = afterAttempt(initialProgress(), { failureReason: "NO_RESPONSE" }, 0);
  p = afterAttempt(p, { responseCode: 200 }, 10_000);
  assert.deepEqual(p, {
    status: "COMPLETED",
    attempts: 2,
    lastSentTime: 10_000,
    nextAttemptAt: null,
  });
});

Deno.test("an attempt after the series ended starts a fresh series (a resend)", () => {
  let p: NotificationProgress = afterAttempt(initialProgress(), { responseCode: 404 }, 0);
  p = afterAttempt(p, { responseCode: 500 }, 50_000);
  assert.deepEqual(p, {
    status: "IN_PROGRESS",
    attempts: 1,
    lastSentTime: 50_000,
    nextAttemptAt: 60_000,
  });
});

Deno.test("afterAttempt does not change the progress it is given", () => {
  const p = initialProgress();
  afterAttempt(p, { responseCode: 500 }, 1);
  assert.equal(p.attempts, 0);
});

Deno.test("a scaled schedule (the emulator's --timeScale) uses the given delays", () => {
  const cfg = { delaysMs: DEFAULT_RETRY_CONFIG.delaysMs.map((d) => d / 100), maxAttempts: 10 };
  const p = afterAttempt(initialProgress(), { responseCode: 500 }, 0, cfg);
  assert.equal(p.nextAttemptAt, 100);
});
