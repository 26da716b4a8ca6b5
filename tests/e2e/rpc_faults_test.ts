/**
 * Sending through custody under faults injected by the emulator's admin
 * endpoint: 5xx/429 and dropped-after-commit answers on creates never make
 * two transactions; TIMEOUT/REJECTED end with an error carrying the platform
 * transaction id; a held transaction ends at --txTimeout.
 */
import assert from "node:assert/strict";
import { httpRpc } from "../support/rpc.ts";
import { anvilCall, type Stack, startStack, VAULT0 } from "../support/rpc_stack.ts";
import * as admin from "../support/slow_custody.ts";
import { seededRandom } from "../support/seeded_random.ts";

let stack: Stack;

Deno.test.beforeAll(async () => {
  stack = await startStack();
});

Deno.test.afterAll(async () => {
  await stack?.stop();
});

const fault = (spec: Record<string, unknown>) => admin.fault(stack, spec);
const faultsInForce = () => admin.faultsInForce(stack);
const clearFaults = () => admin.clearFaults(stack);
/** Platform transactions whose externalTxId starts with `prefix`. */
const platformTransactions = (prefix: string) => admin.transactionsWithPrefix(stack, prefix);

Deno.test("50 sends under 30% 5xx/429 and dropped-after-commit creates: exactly 50 transactions", async () => {
  const prefix = `faults-${crypto.randomUUID().slice(0, 8)}-`;
  const bridge = await stack.bridge([
    "--http",
    "--vaultAccountIds",
    "0",
    "--externalTxIdPrefix",
    prefix,
    "--pollingInterval",
    "50ms",
    "--verbose",
  ]);
  const to = "0x000000000000000000000000000000000000bEEF";
  const nonceBefore = BigInt(
    await anvilCall(stack.anvil.url, "eth_getTransactionCount", [VAULT0, "latest"]),
  );
  const balanceBefore = BigInt(await anvilCall(stack.anvil.url, "eth_getBalance", [to, "latest"]));
  const random = seededRandom(20261122); // a failure can be replayed
  let injected5xx = 0;
  let injectedDrops = 0;
  try {
    for (let i = 1; i <= 50; i++) {
      const x = random();
      if (x < 0.3) {
        await fault({
          kind: "status",
          status: i % 2 ? 503 : 429,
          count: 1,
          path: "/v1/transactions",
          method: "POST",
        });
        injected5xx++;
      }
      if (random() < 0.2) {
        await fault({ kind: "drop", count: 1, path: "/v1/transactions", method: "POST" });
        injectedDrops++;
      }
      const r = await httpRpc(bridge.address, {
        jsonrpc: "2.0",
        id: i,
        method: "eth_sendTransaction",
        params: [{ from: VAULT0, to, value: "0x" + i.toString(16) }],
      });
      const j = r.json() as { result?: string; error?: unknown };
      assert.ok(j.result, `send ${i}: ${JSON.stringify(j.error)}`);
      // every fault injected for this send fired on one of its requests
      assert.deepEqual(await faultsInForce(), [], `send ${i}: a fault did not fire`);
    }
  } finally {
    await clearFaults();
    await bridge.stop();
  }
  assert.ok(
    injected5xx >= 10 && injectedDrops >= 5,
    `${injected5xx} 5xx/429, ${injectedDrops} drops`,
  );
  // what the bridge saw: one retry per 5xx/429 answer and one per dropped answer
  const retries = bridge.stderr().match(/retrying .* after .*/g) ?? [];
  const after = (reason: RegExp) => retries.filter((l) => reason.test(l)).length;
  assert.equal(after(/after status (503|429)$/), injected5xx, retries.join("\n"));
  assert.equal(after(/after network error$/), injectedDrops, retries.join("\n"));
  assert.equal(retries.length, injected5xx + injectedDrops, retries.join("\n"));
  const nonceAfter = BigInt(
    await anvilCall(stack.anvil.url, "eth_getTransactionCount", [VAULT0, "latest"]),
  );
  const balanceAfter = BigInt(await anvilCall(stack.anvil.url, "eth_getBalance", [to, "latest"]));
  assert.equal(nonceAfter - nonceBefore, 50n, "exactly 50 transactions on chain");
  assert.equal(balanceAfter - balanceBefore, 1275n, "each value sent once: 1+2+...+50");
  const onPlatform = await platformTransactions(prefix);
  assert.equal(onPlatform.length, 50, "exactly 50 platform transactions");
});

Deno.test("a lost create answer with no client retry is found by externalTxId, not created again", async () => {
  const prefix = `lost-${crypto.randomUUID().slice(0, 8)}-`;
  const bridge = await stack.bridge([
    "--http",
    "--vaultAccountIds",
    "0",
    "--retries",
    "0",
    "--externalTxIdPrefix",
    prefix,
    "--pollingInterval",
    "50ms",
    "--verbose",
  ]);
  try {
    await fault({ kind: "drop", count: 3, path: "/v1/transactions", method: "POST" });
    for (let i = 0; i < 3; i++) {
      const r = await httpRpc(bridge.address, {
        jsonrpc: "2.0",
        id: i,
        method: "eth_sendTransaction",
        params: [{ from: VAULT0, to: "0x000000000000000000000000000000000000dEaD", value: "0x1" }],
      });
      assert.ok((r.json() as { result?: string }).result, r.text);
    }
    assert.equal((bridge.stderr().match(/but the platform has it/g) ?? []).length, 3);
    assert.equal((await platformTransactions(prefix)).length, 3);
  } finally {
    await clearFaults();
    await bridge.stop();
  }
});

Deno.test("TIMEOUT and REJECTED end with a JSON-RPC error carrying status and the platform id", async () => {
  const bridge = await stack.bridge([
    "--http",
    "--vaultAccountIds",
    "0",
    "--pollingInterval",
    "50ms",
  ]);
  try {
    for (const [status, code] of [["TIMEOUT", -32000], ["REJECTED", 4001]] as const) {
      await fault({ kind: "finalStatus", status, subStatus: "TEST_" + status, count: 1 });
      const r = await httpRpc(bridge.address, {
        jsonrpc: "2.0",
        id: 1,
        method: "eth_sendTransaction",
        params: [{ from: VAULT0, to: "0x000000000000000000000000000000000000dEaD", value: "0x1" }],
      });
      const e = (r.json() as {
        error: {
          code: number;
          message: string;
          data: { txId: string; status: string; subStatus: string };
        };
      }).error;
      assert.equal(e.code, code);
      assert.equal(e.data.status, status);
      assert.equal(e.data.subStatus, "TEST_" + status);
      assert.match(e.message, new RegExp(`${e.data.txId} ended ${status}`));
    }
  } finally {
    await clearFaults();
    await bridge.stop();
  }
});

Deno.test("a transaction held for approval ends at --txTimeout with a clear error", async () => {
  const bridge = await stack.bridge([
    "--http",
    "--vaultAccountIds",
    "0",
    "--txTimeout",
    "1500ms",
  ]);
  try {
    await fault({ kind: "hold", count: 1 });
    const r = await httpRpc(bridge.address, {
      jsonrpc: "2.0",
      id: 1,
      method: "eth_sendTransaction",
      params: [{ from: VAULT0, to: "0x000000000000000000000000000000000000dEaD", value: "0x1" }],
    });
    const e = (r.json() as { error: { message: string; data: { txId: string; status: string } } })
      .error;
    assert.equal(e.data.status, "PENDING_AUTHORIZATION");
    // the configured limit is the one that ended the wait (1500 ms, said in seconds)
    assert.match(e.message, /still PENDING_AUTHORIZATION after 2 s \(--txTimeout\)/);
    // and the platform still holds it: the bridge gave up waiting, nothing else happened
    const [held] = (await platformTransactions("")).filter((t) => t.id === e.data.txId);
    assert.equal(held?.status, "PENDING_AUTHORIZATION");
    // release it so nothing stays pending
    const rej = await fetch(`${stack.emulator.adminUrl}/transactions/${e.data.txId}/reject`, {
      method: "POST",
      headers: { "x-api-key": stack.emulator.apiKey },
    });
    await rej.body?.cancel();
  } finally {
    await clearFaults();
    await bridge.stop();
  }
});

Deno.test("--note and --externalTxIdPrefix reach the platform; every transaction has its own externalTxId", async () => {
  const prefix = `note-${crypto.randomUUID().slice(0, 8)}-`;
  const bridge = await stack.bridge([
    "--http",
    "--vaultAccountIds",
    "0",
    "--note",
    "release 1.2",
    "--externalTxIdPrefix",
    prefix,
    "--pollingInterval",
    "50ms",
  ]);
  try {
    for (let i = 0; i < 2; i++) {
      const r = await httpRpc(bridge.address, {
        jsonrpc: "2.0",
        id: i,
        method: "eth_sendTransaction",
        params: [{ from: VAULT0, to: "0x000000000000000000000000000000000000dEaD", value: "0x1" }],
      });
      assert.ok((r.json() as { result?: string }).result, r.text);
    }
    const txs = await platformTransactions(prefix);
    assert.equal(txs.length, 2);
    assert.notEqual(txs[0].externalTxId, txs[1].externalTxId);
    for (const t of txs) assert.equal(t.note, "release 1.2");
  } finally {
    await bridge.stop();
  }
});

Deno.test("without --vaultAccountIds, eth_accounts follows the platform's pages (250 accounts)", async () => {
  const { startEmulator } = await import("../../lib/emulator/mod.ts");
  const big = await startEmulator({ rpcUrl: stack.anvil.url, vaultAccounts: 250 });
  const { startBridgeProcess } = await import("../support/rpc.ts");
  const bridge = await startBridgeProcess([
    "--apiKey",
    big.apiKey,
    "--privateKey",
    big.privateKeyPath,
    "--apiBaseUrl",
    big.apiBaseUrl,
    "--rpcUrl",
    stack.anvil.url,
    "--http",
  ]);
  try {
    const r = await httpRpc(bridge.address, { jsonrpc: "2.0", id: 1, method: "eth_accounts" });
    const accounts = (r.json() as { result: string[] }).result;
    assert.equal(accounts.length, 250);
    assert.equal(new Set(accounts.map((a) => a.toLowerCase())).size, 250);
    assert.equal(accounts[0].toLowerCase(), VAULT0.toLowerCase());
  } finally {
    await bridge.stop();
    await big.stop();
  }
});
