import assert from "node:assert/strict";
import { lastActiveWindowErrors, windowErrors } from "../../lib/webhooks/window_error_rate.ts";
import {
  DEFAULT_BREAKER_CONFIG,
  initialBreakerState,
  transition,
} from "../../lib/webhooks/circuit_breaker.ts";

const W = 60_000;
const attempts = [
  { time: 0, error: true },
  { time: 10_000, error: false },
  { time: 30_000, error: true },
  { time: 60_000, error: false },
];

Deno.test("the window ending at t is (t - W, t]: an attempt exactly W before t is out", () => {
  assert.deepEqual(windowErrors(attempts, 60_000, W), { attempts: 3, errors: 1, rate: 1 / 3 });
  assert.deepEqual(windowErrors(attempts, 59_999, W), { attempts: 3, errors: 2, rate: 2 / 3 });
  assert.deepEqual(windowErrors([], 0, W), { attempts: 0, errors: 0, rate: 0 });
});

Deno.test("the last active hour ends at the latest attempt, whenever it is asked", () => {
  assert.deepEqual(lastActiveWindowErrors(attempts, W), windowErrors(attempts, 60_000, W));
  assert.deepEqual(lastActiveWindowErrors([], W), { attempts: 0, errors: 0, rate: 0 });
});

Deno.test("the breaker's window counts as windowErrors does", () => {
  const cfg = { ...DEFAULT_BREAKER_CONFIG, windowMs: W, minAttempts: 1_000 };
  const state = initialBreakerState();
  const fed = [
    ...attempts,
    ...[69_999, 70_000, 90_000, 200_000].map((time) => ({ time, error: true })),
  ];
  fed.forEach((a, i) => {
    transition(state, { type: "attempt", ...a }, cfg);
    const { attempts, errors } = windowErrors(fed.slice(0, i + 1), a.time, W);
    assert.deepEqual([state.attempts, state.errors], [attempts, errors], `at ${a.time}`);
  });
});
