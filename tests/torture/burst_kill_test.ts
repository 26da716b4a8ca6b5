/**
 * Transactions are exactly-once across a SIGKILL: a burst of concurrent
 * transfers (each with its own Idempotency-Key and externalTxId) is cut by
 * SIGKILL of `service emulator --state FILE` once some were acknowledged
 * (and the first 10 answers are lost by a `drop` fault, made but unanswered);
 * after a restart every client re-sends what it did not see answered, with
 * the same key (what the platform client and `service rpc` do). Counted:
 * every acknowledged transaction is still there with the same id, every
 * request ends as exactly one transaction (by key and by externalTxId), and
 * the chain holds exactly as many transfers as there were requests, with
 * distinct hashes.
 *
 * SIGKILL during webhook deliveries (at-least-once, nothing lost) is
 * `tests/emulator/webhooks_crash_test.ts`; a kill with transactions in flight
 * and held ones is `tests/emulator/restart_test.ts`.
 */

import assert from "node:assert/strict";
import { startAnvil } from "../support/tools.ts";
import { transfer } from "../support/emulator_fixture.ts";
import { clientForReady, spawnEmulator } from "../support/emulator_process.ts";
import { waitFor } from "../support/wait_for.ts";
import { PlatformApiError, type PlatformClient } from "../../lib/platform/mod.ts";

const ACCOUNT1 = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";
const ASSET = "ETH_TEST_31337";
const N = 120;

async function rpc(url: string, method: string, params: unknown[] = []) {
  const res = await fetch(url, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
  });
  return (await res.json()).result;
}

interface Sent {
  key: string;
  ext: string;
  body: Record<string, unknown>;
  ackId?: string;
}

function create(client: PlatformClient, s: Sent) {
  return client.request<{ id: string }>("POST", "/v1/transactions", {
    operation: "create",
    body: s.body,
    idempotencyKey: s.key,
    retries: 0,
  });
}

Deno.test("torture: SIGKILL during a burst of transactions: acknowledged ones kept, each request once on chain", async () => {
  const anvil = await startAnvil();
  const dir = await Deno.makeTempDir({ prefix: "emu-burst-" });
  const state = `${dir}/emu.sqlite`;
  const args = ["--rpcUrl", anvil.url, "--state", state, "--port", "0"];
  // the first 10 creates are made, then their connections closed unanswered (lost answers),
  // on top of whatever the SIGKILL cuts
  let emu = await spawnEmulator([...args, "--fault", "kind=drop,count=10,path=/v1/transactions"]);
  try {
    let client = await clientForReady(emu.ready);
    const sent: Sent[] = Array.from({ length: N }, (_, i) => {
      const ext = `burst-${i}-${crypto.randomUUID().slice(0, 8)}`;
      return {
        key: crypto.randomUUID(),
        ext,
        body: transfer(ASSET, String(i % 5), ACCOUNT1, "0.001", { externalTxId: ext }),
      };
    });
    let acknowledged = 0;
    const victim = emu;
    const burst = sent.map((s) =>
      create(client, s).then((r) => {
        s.ackId = r.data.id;
        // SIGKILL right here, synchronously, while the rest of the burst is in flight
        if (++acknowledged === N / 6) victim.process.kill("SIGKILL");
      }, () => {/* cut by the kill: re-sent below */})
    );
    await Promise.all(burst);
    const killed = await emu.kill();
    assert.equal(killed.signal, "SIGKILL");
    const acked = sent.filter((s) => s.ackId !== undefined);
    assert.ok(acked.length >= N / 6 && acked.length <= N - 10, `${acked.length} acknowledged`);

    emu = await spawnEmulator(args);
    client = await clientForReady(emu.ready);
    // every request again, with its own key: acknowledged ones answer the same id
    const ids: string[] = [];
    for (const s of sent) {
      const r = await create(client, s);
      if (s.ackId !== undefined) assert.equal(r.data.id, s.ackId, `request ${s.ext}`);
      ids.push(r.data.id);
    }
    assert.equal(new Set(ids).size, N, "one transaction per request");
    const hashes = new Set<string>();
    for (const [i, s] of sent.entries()) {
      const t = await waitFor(`${s.ext} to complete`, async () => {
        const r = await client.request<{ id: string; status: string; txHash?: string }>(
          "GET",
          `/v1/transactions/external_tx_id/${s.ext}`,
          { operation: "get" },
        ).catch((e) => {
          if (e instanceof PlatformApiError) return undefined;
          throw e;
        });
        return r && ["COMPLETED", "FAILED"].includes(r.data.status) ? r.data : undefined;
      }, 60_000);
      assert.equal(t.id, ids[i], `externalTxId ${s.ext} names the same transaction`);
      assert.equal(t.status, "COMPLETED");
      hashes.add(String(t.txHash));
    }
    assert.equal(hashes.size, N, "distinct transaction hashes");
    // the fresh chain holds exactly our transfers
    const head = Number(await rpc(anvil.url, "eth_blockNumber"));
    let onChain = 0;
    for (let b = 1; b <= head; b++) {
      const block = await rpc(anvil.url, "eth_getBlockByNumber", [`0x${b.toString(16)}`, false]);
      for (const h of block.transactions as string[]) {
        assert.ok(hashes.has(h), `an unknown transaction ${h} on chain`);
        onChain++;
      }
    }
    assert.equal(onChain, N, `${acked.length} acknowledged before the kill, ${N} requests`);
  } finally {
    await emu.stop();
    await anvil.stop();
    await Deno.remove(dir, { recursive: true });
  }
});
