/**
 * Benchmark: how late the emulator's webhook retries come after their due
 * time (breaker.md §2: the previous attempt's sentTime + DELAYS[k-1], divided
 * by --timeScale). This is the claim the live retry test used to bound with a
 * 1000 ms slack; the test now bounds gaps only from below (never early) and
 * asserts the exact gaps on virtual time, and the lateness is measured here.
 *
 * The engine runs in this process on real timers (in-memory state, signed
 * bodies), delivering to an injected fetch that answers 500 at once, so every
 * notification runs its 10 attempts. Baseline in the same run: chains of
 * plain `setTimeout`s with the same delays (the timers' own lateness on this
 * machine).
 *
 *   deno run -A scripts/bench/webhook_retry_lateness.ts [--n 200] [--scale 10000] [--rounds 3]
 *
 * Prints one JSON line per round (p50, p99 and max lateness in ms of both,
 * and the ratio of the p99s) and a summary (the round with the median ratio).
 * Not a test: no thresholds.
 */

import { parseArgs } from "node:util";
import { DatabaseSync } from "node:sqlite";
import { WebhookEngine } from "../../lib/emulator/webhooks/engine.ts";
import { WebhookSigner } from "../../lib/emulator/webhooks/signer.ts";
import { WebhookStore } from "../../lib/emulator/webhooks/store.ts";
import { DEFAULT_BREAKER_CONFIG } from "../../lib/webhooks/mod.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: {
    n: { type: "string", default: "200" },
    scale: { type: "string", default: "10000" },
    rounds: { type: "string", default: "3" },
  },
});
const N = Number(values.n);
const SCALE = Number(values.scale);
const ROUNDS = Number(values.rounds);
/** breaker.md §2, literally (seconds). */
const DELAYS = [10, 30, 120, 300, 900, 1800, 3600, 7200, 14400];
const scaledMs = DELAYS.map((s) => s * 1000 / SCALE);

function percentiles(xs: number[]) {
  const s = [...xs].sort((a, b) => a - b);
  const at = (p: number) => s[Math.min(s.length - 1, Math.floor(p * s.length))];
  return { p50: at(0.5), p99: at(0.99), max: s[s.length - 1] };
}

const signer = await WebhookSigner.generate();

async function engineLateness(): Promise<number[]> {
  const store = new WebhookStore(new DatabaseSync(":memory:"));
  const engine = new WebhookEngine({
    store,
    signer,
    timeScale: SCALE,
    concurrency: N,
    breaker: { ...DEFAULT_BREAKER_CONFIG, minAttempts: Number.MAX_SAFE_INTEGER },
    fetch: () => Promise.resolve(new Response(null, { status: 500 })),
  });
  engine.start();
  const w = engine.endpoints.create({ url: "http://receiver.invalid/bench", events: ["e"] });
  let finished = 0;
  const done = Promise.withResolvers<void>();
  engine.onAttempt = (n) => {
    if (n.status === "FAILED" && ++finished === N) done.resolve();
  };
  engine.publishMany(Array.from({ length: N }, () => ({ eventType: "e", data: {} })));
  await done.promise;
  await engine.stop();
  const byNotification = Map.groupBy(store.attemptLog(w.id), (a) => a.notificationId);
  const late: number[] = [];
  for (const attempts of byNotification.values()) {
    for (let i = 1; i < attempts.length; i++) {
      late.push(attempts[i].sentTime - (attempts[i - 1].sentTime + scaledMs[i - 1]));
    }
  }
  return late;
}

async function timerLateness(): Promise<number[]> {
  const late: number[] = [];
  await Promise.all(Array.from({ length: N }, async () => {
    let prev = Date.now();
    for (const d of scaledMs) {
      await new Promise((r) => setTimeout(r, d));
      const now = Date.now();
      late.push(now - (prev + d));
      prev = now;
    }
  }));
  return late;
}

const rounds = [];
for (let r = 0; r < ROUNDS; r++) {
  const baseline = percentiles(await timerLateness());
  const engine = percentiles(await engineLateness());
  const round = {
    round: r + 1,
    n: N,
    scale: SCALE,
    engine,
    setTimeout: baseline,
    p99Ratio: Number((Math.max(engine.p99, 1) / Math.max(baseline.p99, 1)).toFixed(2)),
  };
  console.log(JSON.stringify(round));
  rounds.push(round);
}
rounds.sort((a, b) => a.p99Ratio - b.p99Ratio);
console.log(JSON.stringify({ summary: rounds[Math.floor(rounds.length / 2)] }));
