/**
 * The emulator's `Idempotency-Key` (issue 25): a key is scoped to the API
 * user, the method and the path, and a reuse with another body is refused
 * with a 400 naming the key. Before, a create with the same key and another
 * amount was answered with the first transaction, and the key reused on
 * `POST /v1/webhooks` returned the transaction's answer with 201.
 */

import assert from "node:assert/strict";
import { startEmulatorOnAnvil } from "../support/emulator_process.ts";

const transfer = (amount: string) => ({
  operation: "TRANSFER",
  assetId: "ETH_TEST_31337",
  source: { type: "VAULT_ACCOUNT", id: "0" },
  destination: {
    type: "ONE_TIME_ADDRESS",
    oneTimeAddress: { address: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8" },
  },
  amount,
});

Deno.test("torture: an Idempotency-Key reused with another body is refused naming the key; on another path it is another key", async () => {
  const emu = await startEmulatorOnAnvil();
  try {
    const key = "reused-key-1";
    const first = await emu.api<{ id: string }>("POST", "/v1/transactions", {
      body: transfer("0.5"),
      idempotencyKey: key,
    });
    assert.equal(first.status, 200, JSON.stringify(first.data)); // the SDK's create answers 200
    const same = await emu.api<{ id: string }>("POST", "/v1/transactions", {
      body: transfer("0.5"),
      idempotencyKey: key,
    });
    assert.equal(same.data.id, first.data.id);
    const other = await emu.api<{ message: string }>("POST", "/v1/transactions", {
      body: transfer("0.7"),
      idempotencyKey: key,
    });
    assert.equal(other.status, 400, JSON.stringify(other.data));
    assert.match(other.data.message, /Idempotency-Key "reused-key-1" was already used/);
    const hook = await emu.api<{ id: string; url: string }>("POST", "/v1/webhooks", {
      body: { url: "http://127.0.0.1:9/hook", events: ["transaction.created"] },
      idempotencyKey: key,
    });
    assert.equal(hook.status, 201, JSON.stringify(hook.data));
    assert.equal(hook.data.url, "http://127.0.0.1:9/hook");
    assert.notEqual(hook.data.id, first.data.id);
  } finally {
    await emu.stop();
  }
});
