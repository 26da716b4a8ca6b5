/**
 * The status poll of a send, on an injected clock against the real emulator:
 * a transaction held in PENDING_AUTHORIZATION is polled at exactly the
 * README's schedule (5 ms doubling to 2 s), and `--pollingInterval`'s fixed
 * interval replaces it. The injected sleep records each wait and advances the
 * injected clock; it does not wait (so the test takes no 2 s steps).
 */
import assert from "node:assert/strict";
import { startFixture } from "../support/emulator_fixture.ts";
import { CustodySigner } from "../../lib/rpc/custody.ts";

const TO = "0x000000000000000000000000000000000000bEEF";

async function heldSend(pollingIntervalMs: number | undefined, polls: number): Promise<number[]> {
  const fx = await startFixture();
  try {
    const chainId = BigInt(
      await (await fetch(fx.anvil.url, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_chainId", params: [] }),
      })).json().then((j) => j.result),
    );
    let clock = 1_000_000;
    const waits: number[] = [];
    let approved = false;
    const signer = new CustodySigner({
      client: fx.client,
      assetId: fx.emu.assetId,
      chainId,
      vaultAccountIds: ["0"],
      pollingIntervalMs,
      now: () => clock,
      sleep: async (ms) => {
        waits.push(ms);
        clock += ms;
        if (waits.length === polls && !approved) {
          // every poll so far saw it held: let it go on now
          approved = true;
          const all = await fx.api<{ id: string; status: string }[]>("GET", "/v1/transactions");
          const tx = all.data.find((t) => t.status === "PENDING_AUTHORIZATION");
          assert.ok(tx, "the transaction is held");
          assert.equal((await fx.admin("POST", `/transactions/${tx.id}/approve`)).status, 200);
        } else if (approved) await new Promise((r) => setTimeout(r, 2)); // real time to complete
      },
    });
    const [from] = await signer.accounts();
    assert.equal((await fx.admin("POST", "/faults", { kind: "hold", count: 1 })).status, 201);
    const hash = await signer.sendTransaction({ from, to: TO, value: "0x1" });
    assert.match(hash, /^0x[0-9a-f]{64}$/);
    return waits;
  } finally {
    await fx.stop();
  }
}

Deno.test("a held send is polled 5, 10, 20, … 1280 ms, then every 2 s (the README's schedule)", async () => {
  const waits = await heldSend(undefined, 14);
  assert.deepEqual(
    waits.slice(0, 14),
    [5, 10, 20, 40, 80, 160, 320, 640, 1280, 2000, 2000, 2000, 2000, 2000],
  );
  assert.ok(waits.slice(14).every((w) => w === 2000), JSON.stringify(waits));
});

Deno.test("a fixed --pollingInterval replaces the schedule", async () => {
  const waits = await heldSend(100, 6);
  assert.ok(waits.length >= 6);
  assert.ok(waits.every((w) => w === 100), JSON.stringify(waits));
});
