/**
 * Sends that ask for their own nonces (forge broadcasting a script without
 * `--slow`: n, n+1, n+2 at once) land with the nonces they asked for, even
 * when a later nonce reaches the bridge first; a nonce is sent once (the gap
 * nobody fills: tests/rpc/nonce_gate_test.ts, with a short quiet time). Real anvil, emulator and
 * bridge process; the order of arrival is made certain by waiting for the
 * bridge's own "waits for nonce" line before the earlier nonce is sent.
 */
import assert from "node:assert/strict";
import { type BridgeProcess, httpRpc } from "../support/rpc.ts";
import { waitFor } from "../support/wait_for.ts";
import {
  anvilCall,
  anvilTransaction,
  type Stack,
  startStack,
  VAULT0,
  VAULT1,
} from "../support/rpc_stack.ts";

let stack: Stack;
let bridge: BridgeProcess;

Deno.test.beforeAll(async () => {
  stack = await startStack();
  bridge = await stack.bridge(["--http", "--verbose", "--vaultAccountIds", "0"]);
});

Deno.test.afterAll(async () => {
  await stack?.stop();
});

/** The account's next nonce, pending included, read from anvil itself. */
async function pending(): Promise<bigint> {
  return BigInt(await anvilCall(stack.anvil.url, "eth_getTransactionCount", [VAULT0, "pending"]));
}

/**
 * `eth_sendTransaction` through the bridge with an explicit nonce (and `value`, which makes
 * sends of one nonce differ); the JSON-RPC answer.
 */
async function send(nonce: bigint, id = 1, value = "0x1") {
  const r = await httpRpc(bridge.address, {
    jsonrpc: "2.0",
    id,
    method: "eth_sendTransaction",
    params: [{ from: VAULT0, to: VAULT1, value, nonce: `0x${nonce.toString(16)}` }],
  });
  return r.json() as { result?: string; error?: { code: number; message: string } };
}

/** Resolves when the bridge's stderr (after `from` characters) matches `pattern`. */
async function logged(pattern: RegExp, from: number): Promise<void> {
  await waitFor(
    () => `the bridge to log ${pattern}:\n${bridge.stderr().slice(from)}`,
    () => pattern.test(bridge.stderr().slice(from)),
    20_000,
    10,
  );
}

/** The nonce a mined transaction used on chain. */
async function nonceOf(hash: string): Promise<bigint> {
  const t = await anvilTransaction(stack.anvil.url, hash);
  return BigInt((t as { nonce: string }).nonce);
}

Deno.test("nonce n+1 arriving before n waits for n: both land with the nonces they asked for", async () => {
  const n = await pending();
  const mark = bridge.stderr().length;
  const later = send(n + 1n, 1);
  await logged(new RegExp(`nonce ${n + 1n} of ${VAULT0} waits for nonce ${n}\\b`), mark);
  const earlier = await send(n, 2);
  const second = await later;
  assert.ok(earlier.result, JSON.stringify(earlier));
  assert.ok(second.result, JSON.stringify(second));
  assert.equal(await nonceOf(earlier.result), n);
  assert.equal(await nonceOf(second.result), n + 1n);
  assert.equal(await pending(), n + 2n);
});

Deno.test("three nonces arriving last-first all land in nonce order", async () => {
  const n = await pending();
  const mark = bridge.stderr().length;
  const third = send(n + 2n, 1);
  await logged(new RegExp(`nonce ${n + 2n} of ${VAULT0} waits for nonce ${n}\\b`), mark);
  const second = send(n + 1n, 2);
  await logged(new RegExp(`nonce ${n + 1n} of ${VAULT0} waits for nonce ${n}\\b`), mark);
  const answers = [await send(n, 3), await second, await third];
  for (const [i, a] of answers.entries()) {
    assert.ok(a.result, JSON.stringify(a));
    assert.equal(await nonceOf(a.result), n + BigInt(i));
  }
});

Deno.test("one nonce asked for by two different sends at once lands once; the other is refused", async () => {
  const n = await pending();
  const [a, b] = await Promise.all([send(n, 1, "0x1"), send(n, 2, "0x2")]);
  const ok = [a, b].filter((r) => r.result);
  const refused = [a, b].filter((r) => r.error);
  assert.equal(ok.length, 1, JSON.stringify([a, b]));
  assert.equal(refused.length, 1, JSON.stringify([a, b]));
  assert.match(
    refused[0].error!.message,
    /nonce too low: nonce \d+ of 0x[0-9a-fA-F]{40} was already sent through this bridge/,
  );
  assert.equal(await pending(), n + 1n);
  // and again, once the first has landed: the chain has used it
  const again = await send(n, 3, ok[0] === a ? "0x2" : "0x1");
  assert.match(again.error?.message ?? "", /nonce too low/);
  assert.equal(await pending(), n + 1n);
});

Deno.test("the same send (same nonce, same fields) twice at once is one transaction: both get its hash", async () => {
  const n = await pending();
  const [a, b] = await Promise.all([send(n, 1), send(n, 2)]);
  assert.ok(a.result, JSON.stringify([a, b]));
  assert.equal(b.result, a.result, JSON.stringify([a, b]));
  assert.equal(await nonceOf(a.result), n);
  assert.equal(await pending(), n + 1n);
  // asked again after it landed (a client's late retry): the same hash, nothing new
  const again = await send(n, 3);
  assert.equal(again.result, a.result, JSON.stringify(again));
  assert.equal(await pending(), n + 1n);
});
