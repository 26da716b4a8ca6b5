import assert from "node:assert/strict";
import {
  type BreakerConfig,
  type BreakerEffect,
  type BreakerEvent,
  DEFAULT_BREAKER_CONFIG,
  initialBreakerState,
  restoreBreakerState,
  transition,
} from "../../lib/webhooks/circuit_breaker.ts";
import { referenceBreaker } from "../support/breaker_reference.ts";

const MIN = 60_000;
const HOUR = 60 * MIN;
const S = false; // a successful attempt
const E = true; // an error

/** Feeds [time, error] attempts (or "enable" at a time) and returns the non-null effects. */
function run(
  events: ([number, boolean] | [number, "enable"])[],
  cfg: BreakerConfig = DEFAULT_BREAKER_CONFIG,
) {
  const state = initialBreakerState();
  const effects: NonNullable<BreakerEffect>[] = [];
  for (const [time, what] of events) {
    const ev: BreakerEvent = what === "enable"
      ? { type: "enable", time }
      : { type: "attempt", time, error: what };
    const { effect } = transition(state, ev, cfg);
    if (effect) effects.push(effect);
  }
  return { state, effects };
}

Deno.test("the defaults are those of breaker.md", () => {
  assert.deepEqual({ ...DEFAULT_BREAKER_CONFIG }, {
    windowMs: 60 * MIN,
    immediateAbove: 0.8,
    sustainedFrom: 0.5,
    sustainedForMs: 4 * HOUR,
    minAttempts: 1,
    bandResetsAfterIdleMs: null,
  });
});

Deno.test("exactly 80% is not above 80%: 4 of 5 stays enabled, 5 of 6 suspends at once", () => {
  // rates: 0/1, 1/2 (band from 1), 2/3, 3/4, 4/5 = 0.8 exactly: in the band, not immediate
  const { state, effects } = run([[0, S], [1, E], [2, E], [3, E], [4, E]]);
  assert.deepEqual(effects, []);
  assert.equal(state.status, "ENABLED");
  assert.equal(state.bandSince, 1);
  const after = transition(state, { type: "attempt", time: 5, error: true }).effect;
  assert.deepEqual(after, {
    type: "suspended",
    time: 5,
    reason: "immediate",
    errorRate: 5 / 6,
    attempts: 6,
    errors: 5,
  });
});

Deno.test("the first attempt failing is a 100% error rate and suspends at once", () => {
  const { effects } = run([[0, E]]);
  assert.equal(effects[0]?.type, "suspended");
  assert.equal(effects[0]?.type === "suspended" && effects[0].reason, "immediate");
});

Deno.test("exactly 50% is in the band; below it the band is unset", () => {
  const { state } = run([[0, S], [10, E]]);
  assert.equal(state.bandSince, 10); // 1/2 is at or above 0.5
  transition(state, { type: "attempt", time: 20, error: false }); // 1/3 < 0.5
  assert.equal(state.bandSince, null);
});

Deno.test("an attempt exactly one window old is dropped; one ms younger is kept", () => {
  // window (t - W, t]: at t = 60m the success at 0 is out, so the error is alone: 1/1 > 0.8
  const dropped = run([[0, S], [60 * MIN, E]]);
  assert.equal(dropped.effects.length, 1);
  assert.deepEqual(dropped.effects[0], {
    type: "suspended",
    time: 60 * MIN,
    reason: "immediate",
    errorRate: 1,
    attempts: 1,
    errors: 1,
  });
  // at 60m - 1 ms the success is still inside: 1/2, in the band
  const kept = run([[0, S], [60 * MIN - 1, E]]);
  assert.deepEqual(kept.effects, []);
  assert.equal(kept.state.bandSince, 60 * MIN - 1);
});

Deno.test("a band held exactly 4 h across quiet periods suspends at exactly 4 h, not before", () => {
  // An error and a success every 50 minutes (quiet in between): the rate stays in [0.5, 0.8].
  const ev: [number, boolean][] = [[0, S], [0, E]]; // band from 0 (1/2)
  for (const t of [50, 100, 150, 200]) ev.push([t * MIN, E], [t * MIN, S]);
  ev.push([4 * HOUR - 1, E], [4 * HOUR - 1, S]); // 2/3 then 2/4: in band, 1 ms short of 4 h
  const { state, effects } = run(ev);
  assert.deepEqual(effects, []);
  assert.equal(state.bandSince, 0);
  // at exactly 4 h: window (3h, 4h] = E,S at 200m, E,S at 4h-1ms, + this error = 3/5 = 0.6
  const { effect } = transition(state, { type: "attempt", time: 4 * HOUR, error: true });
  assert.deepEqual(effect, {
    type: "suspended",
    time: 4 * HOUR,
    reason: "sustained",
    errorRate: 0.6,
    attempts: 5,
    errors: 3,
    bandSince: 0,
  });
  assert.equal(state.status, "SUSPENDED");
  assert.equal(state.bandSince, null);
  assert.equal(state.attempts, 0);
});

Deno.test("bandSince survives a quiet period longer than the window (no evaluation happens)", () => {
  // min-attempts 2 lets the first attempt after 2 h of silence pass without evaluation
  const cfg = { ...DEFAULT_BREAKER_CONFIG, minAttempts: 2 };
  const { state, effects } = run([[0, S], [0, E], [2 * HOUR, E], [2 * HOUR, S]], cfg);
  assert.deepEqual(effects, []);
  assert.equal(state.bandSince, 0);
  // at 4 h: the success alone is below min-attempts (no evaluation); the error makes 1/2,
  // still in the band that began at 0, and 4 h - 0 >= 4 h
  transition(state, { type: "attempt", time: 4 * HOUR, error: false }, cfg);
  assert.equal(state.bandSince, 0);
  const { effect } = transition(state, { type: "attempt", time: 4 * HOUR, error: true }, cfg);
  assert.deepEqual(effect, {
    type: "suspended",
    time: 4 * HOUR,
    reason: "sustained",
    errorRate: 0.5,
    attempts: 2,
    errors: 1,
    bandSince: 0,
  });
});

Deno.test("--band-resets-after-idle unsets the band after a quiet period of that length", () => {
  const cfg = { ...DEFAULT_BREAKER_CONFIG, minAttempts: 2, bandResetsAfterIdleMs: 2 * HOUR };
  const kept = run([[0, S], [0, E], [2 * HOUR - 1, E], [2 * HOUR - 1, S]], cfg);
  assert.equal(kept.state.bandSince, 0);
  const reset = run([[0, S], [0, E], [2 * HOUR, E], [2 * HOUR, S]], cfg);
  assert.equal(reset.state.bandSince, 2 * HOUR);
});

Deno.test("fewer attempts than --min-attempts: no evaluation, even at 100% errors", () => {
  const cfg = { ...DEFAULT_BREAKER_CONFIG, minAttempts: 3 };
  const { state, effects } = run([[0, E], [1, E]], cfg);
  assert.deepEqual(effects, []);
  assert.equal(state.status, "ENABLED");
  const { effect } = transition(state, { type: "attempt", time: 2, error: true }, cfg);
  assert.equal(effect?.type === "suspended" && effect.reason, "immediate");
  assert.equal(effect?.type === "suspended" && effect.attempts, 3);
});

Deno.test("attempts while suspended are suppressed and change nothing", () => {
  const { state, effects } = run([[0, E], [1, E], [2, S]]);
  assert.deepEqual(effects.map((e) => e.type), ["suspended", "suppressed", "suppressed"]);
  assert.deepEqual(effects[1], { type: "suppressed", time: 1 });
  assert.equal(state.attempts, 0);
  assert.equal(state.status, "SUSPENDED");
});

Deno.test("re-enable: ENABLED at once with an empty window and no band", () => {
  const { state, effects } = run([[0, S], [1, E], [2, E], [3, E], [4, E], [5, E], [10, "enable"]]);
  assert.deepEqual(effects.map((e) => e.type), ["suspended", "enabled"]);
  assert.deepEqual(effects[1], { type: "enabled", time: 10 });
  assert.equal(state.status, "ENABLED");
  assert.equal(state.attempts, 0);
  assert.equal(state.bandSince, null);
  // the old errors are gone: a success now is 0/1
  transition(state, { type: "attempt", time: 11, error: false });
  assert.deepEqual([state.attempts, state.errors], [1, 0]);
});

Deno.test("enable while already enabled changes nothing and reports nothing", () => {
  const { state, effects } = run([[0, S], [1, E], [2, "enable"]]);
  assert.deepEqual(effects, []);
  assert.equal(state.attempts, 2);
  assert.equal(state.bandSince, 1);
});

Deno.test("thresholds are compared exactly (7 of 10 is not above 0.7)", () => {
  const cfg = { ...DEFAULT_BREAKER_CONFIG, immediateAbove: 0.7, sustainedFrom: 0.3 };
  const ev: [number, boolean][] = [];
  for (let i = 0; i < 3; i++) ev.push([i, S]);
  for (let i = 3; i < 10; i++) ev.push([i, E]); // ends at 7/10
  const { state, effects } = run(ev, cfg);
  assert.deepEqual(effects, []);
  assert.equal(state.bandSince, 4); // 2/5 >= 0.3 first at t = 4 (1/4 < 0.3)
  assert.equal(
    transition(state, { type: "attempt", time: 10, error: true }, cfg).effect?.type,
    "suspended",
  ); // 8/11 > 0.7
});

Deno.test("the window at an attempt is (t - W, t]: an attempt exactly W old is dropped", () => {
  const { state } = run([[0, S], [10 * MIN, E], [20 * MIN, S], [60 * MIN, S]]);
  assert.deepEqual([state.attempts, state.errors], [3, 1]); // the one at 0 is out
  transition(state, { type: "attempt", time: 70 * MIN, error: false });
  assert.deepEqual([state.attempts, state.errors], [3, 0]); // the error at 10 min is out
  transition(state, { type: "attempt", time: 200 * MIN, error: false });
  assert.deepEqual([state.attempts, state.errors], [1, 0]);
});

Deno.test("a restored state goes on as the state it was taken from", () => {
  const { state } = run([[0, S], [1, E], [2, S]]);
  const back = restoreBreakerState(JSON.parse(JSON.stringify({
    status: "ENABLED",
    window: [[0, 0], [1, 1], [2, 0]],
    bandSince: state.bandSince,
    lastAttemptAt: 2,
  })));
  assert.deepEqual([back.attempts, back.errors, back.bandSince], [3, 1, state.bandSince]);
  for (const s of [state, back]) {
    const { effect } = transition(s, { type: "attempt", time: 3, error: true });
    assert.equal(effect, null); // 2/4: in the band, not above 0.8
    assert.deepEqual([s.attempts, s.errors, s.bandSince], [4, 2, 3]);
  }
});

Deno.test("random logs: the breaker agrees with a plain reading of breaker.md", () => {
  let seed = 12345;
  const rnd = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
  for (let round = 0; round < 200; round++) {
    const cfg: BreakerConfig = {
      windowMs: (1 + Math.floor(rnd() * 60)) * MIN,
      immediateAbove: [0.8, 0.7, 0.9, 0.75][round % 4],
      sustainedFrom: [0.5, 0.4, 0.55, 0.3][round % 4],
      sustainedForMs: Math.floor(rnd() * 3) * HOUR,
      minAttempts: 1 + Math.floor(rnd() * 25),
      bandResetsAfterIdleMs: null,
    };
    const events: BreakerEvent[] = [];
    let t = 0;
    const errP = 0.3 + rnd() * 0.5;
    for (let i = 0; i < 400; i++) {
      t += Math.floor(rnd() * 4) * MIN; // whole minutes: window boundaries are hit exactly
      events.push(
        rnd() < 0.02
          ? { type: "enable", time: t }
          : { type: "attempt", time: t, error: rnd() < errP },
      );
    }
    const state = initialBreakerState();
    const got = events.map((ev) => {
      const { effect } = transition(state, ev, cfg);
      if (!effect) return null;
      if (effect.type === "suspended") {
        return `${effect.reason}@${effect.time}:${effect.errors}/${effect.attempts}` +
          (effect.reason === "sustained" ? `:${effect.bandSince}` : "");
      }
      return `${effect.type}@${effect.time}`;
    });
    assert.deepEqual(got, referenceBreaker(events, cfg), `round ${round} ${JSON.stringify(cfg)}`);
  }
});
