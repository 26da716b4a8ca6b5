/**
 * The delivery engine in-process (in-memory SQLite, real HTTP to a real
 * receiver): concurrency per endpoint is bounded and a hanging endpoint does
 * not delay another.
 */

import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { WebhookEngine } from "../../lib/emulator/webhooks/engine.ts";
import { WebhookSigner } from "../../lib/emulator/webhooks/signer.ts";
import { WebhookStore } from "../../lib/emulator/webhooks/store.ts";
import { DEFAULT_BREAKER_CONFIG } from "../../lib/webhooks/mod.ts";
import { startReceiver } from "../support/receiver.ts";

Deno.test("a hanging endpoint holds only its own slots: another endpoint is served meanwhile", async () => {
  let inFlightSlow = 0;
  let maxInFlightSlow = 0;
  const release: (() => void)[] = [];
  const slow = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (req) => {
    await req.text();
    inFlightSlow++;
    maxInFlightSlow = Math.max(maxInFlightSlow, inFlightSlow);
    await new Promise<void>((r) => release.push(r));
    inFlightSlow--;
    return new Response("late");
  });
  const fast = startReceiver();
  const engine = new WebhookEngine({
    store: new WebhookStore(new DatabaseSync(":memory:")),
    signer: await WebhookSigner.generate(),
    concurrency: 4,
    deliveryTimeoutMs: 10_000,
    breaker: { ...DEFAULT_BREAKER_CONFIG, minAttempts: 1_000_000 },
  });
  engine.start();
  try {
    engine.endpoints.create({ url: `http://127.0.0.1:${slow.addr.port}/slow`, events: ["slow"] });
    engine.endpoints.create({ url: `${fast.url}/fast`, events: ["fast"] });
    engine.publishMany(Array.from({ length: 20 }, () => ({ eventType: "slow", data: {} })));
    engine.publishMany(Array.from({ length: 50 }, () => ({ eventType: "fast", data: {} })));
    await fast.waitForCount(50, 10_000);
    assert.equal(inFlightSlow, 4, "the slow endpoint has exactly its 4 slots busy");
    assert.equal(maxInFlightSlow, 4);
    assert.equal(fast.received.length, 50);
  } finally {
    await engine.stop();
    for (const r of release) r();
    await slow.shutdown();
    await fast.close();
  }
});
