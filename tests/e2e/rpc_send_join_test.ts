/**
 * `eth_sendTransaction` without a nonce while custody holds it: a repeat made
 * after its client gave up (curl --max-time, a fetch aborted by its
 * AbortSignal) joins the send in flight, one platform transaction, one
 * transfer; a left send is joined once; two identical sends that are both
 * still awaited are two intents and make two transactions, as on a node, and so are two sent
 * one after the other on one connection (the second shows that the first answer was read).
 */
import assert from "node:assert/strict";
import { type BridgeProcess, httpRpc } from "../support/rpc.ts";
import { anvilTransaction, type Stack, startStack, VAULT0, VAULT1 } from "../support/rpc_stack.ts";
import {
  approveAfter,
  clearFaults,
  hold,
  nonceOf,
  platformTransactions,
} from "../support/slow_custody.ts";
import { waitFor } from "../support/wait_for.ts";

let stack: Stack;
let bridge: BridgeProcess;

Deno.test.beforeAll(async () => {
  stack = await startStack();
  bridge = await stack.bridge(["--http", "--vaultAccountIds", "0"]);
});

Deno.test.afterAll(async () => {
  await stack?.stop();
});

function send(value: string) {
  return JSON.stringify({
    jsonrpc: "2.0",
    id: 1,
    method: "eth_sendTransaction",
    params: [{ from: VAULT0, to: VAULT1, value }],
  });
}

/** Counts the platform transactions and mined transactions `body` adds. */
async function counting(
  body: () => Promise<void>,
): Promise<{ platform: number; mined: number }> {
  const platformBefore = (await platformTransactions(stack)).length;
  const nonceBefore = await nonceOf(stack, VAULT0);
  await body();
  await waitFor(
    "every platform transaction to complete",
    async () => (await platformTransactions(stack)).every((t) => t.status === "COMPLETED"),
  );
  return {
    platform: (await platformTransactions(stack)).length - platformBefore,
    mined: (await nonceOf(stack, VAULT0)) - nonceBefore,
  };
}

Deno.test("curl --max-time 2 gives up on a send held 4 s; the identical request joins it; a third is new", async () => {
  await hold(stack, 1);
  const approver = approveAfter(stack, 4_000);
  let hash = "";
  try {
    const counts = await counting(async () => {
      const curl = await new Deno.Command("curl", {
        args: [
          "-s",
          "--max-time",
          "2",
          "-H",
          "content-type: application/json",
          "--data",
          send("0x6001"),
          bridge.address,
        ],
        stdout: "piped",
        stderr: "piped",
      }).output();
      assert.equal(curl.code, 28, "curl gave up (exit 28: operation timed out)");
      const again = await httpRpc(bridge.address, send("0x6001"));
      hash = (again.json() as { result?: string }).result ?? "";
      assert.match(hash, /^0x[0-9a-f]{64}$/, again.text);
      assert.equal(BigInt((await anvilTransaction(stack.anvil.url, hash)).value), 0x6001n);
    });
    assert.deepEqual(counts, { platform: 1, mined: 1 });
    assert.equal(approver.approved.length, 1);
  } finally {
    await approver.stop();
    await clearFaults(stack);
  }
  // the left send was joined once: the same request now is a new intent
  const counts = await counting(async () => {
    const third = await httpRpc(bridge.address, send("0x6001"));
    const other = (third.json() as { result?: string }).result;
    assert.ok(other && other !== hash, third.text);
  });
  assert.deepEqual(counts, { platform: 1, mined: 1 });
});

Deno.test("a fetch aborted by AbortSignal.timeout(1000) on a held send; the identical request gets its hash", async () => {
  await hold(stack, 1);
  const approver = approveAfter(stack, 3_000);
  try {
    const counts = await counting(async () => {
      await assert.rejects(
        fetch(bridge.address, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: send("0x6002"),
          signal: AbortSignal.timeout(1_000),
        }),
        (e: Error) => e.name === "TimeoutError",
      );
      const again = await httpRpc(bridge.address, send("0x6002"));
      const hash = (again.json() as { result?: string }).result;
      assert.ok(hash, again.text);
      assert.equal(BigInt((await anvilTransaction(stack.anvil.url, hash)).value), 0x6002n);
    });
    assert.deepEqual(counts, { platform: 1, mined: 1 });
  } finally {
    await approver.stop();
    await clearFaults(stack);
  }
});

Deno.test("two identical sends without a nonce, both awaited while held: two transactions", async () => {
  await hold(stack, 2);
  const approver = approveAfter(stack, 2_000);
  try {
    const counts = await counting(async () => {
      const [a, b] = await Promise.all([
        httpRpc(bridge.address, send("0x6003")),
        httpRpc(bridge.address, send("0x6003")),
      ]);
      const ha = (a.json() as { result?: string }).result;
      const hb = (b.json() as { result?: string }).result;
      assert.ok(ha && hb, a.text + b.text);
      assert.notEqual(ha, hb);
    });
    assert.deepEqual(counts, { platform: 2, mined: 2 });
  } finally {
    await approver.stop();
    await clearFaults(stack);
  }
});

Deno.test("the same transfer twice in a row on one keep-alive connection (fetch): two transactions", async () => {
  // the second request on the connection shows that the first answer was read: a new intent
  // (it starts at once, without the 250 ms wait for a leaving client: bench:gate's send figure)
  const counts = await counting(async () => {
    const hashes: string[] = [];
    for (let i = 0; i < 2; i++) {
      const r = await fetch(bridge.address, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: send("0x6004"),
      });
      const j = await r.json() as { result?: string };
      assert.match(j.result ?? "", /^0x[0-9a-f]{64}$/, JSON.stringify(j));
      hashes.push(j.result!);
    }
    assert.notEqual(hashes[0], hashes[1]);
    for (const h of hashes) {
      assert.equal(BigInt((await anvilTransaction(stack.anvil.url, h)).value), 0x6004n);
    }
  });
  assert.deepEqual(counts, { platform: 2, mined: 2 });
});
