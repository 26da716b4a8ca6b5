/**
 * The custody signer's nonce order against the real emulator and anvil, with
 * a short quiet time (`nonceQuietMs`): a nonce ahead of the account that
 * nobody fills is refused after the quiet time (the platform would give it
 * the account's next nonce), and a used nonce is refused to a later send
 * (never swapped: each nonce lands once, and no send lands with a nonce
 * another asked for).
 * The bridge reads the account's nonce from a node that lags behind the
 * platform's (here a second anvil that never sees the platform's
 * transactions, the extreme of a `--rpcUrl` node behind the platform's own),
 * so what the bridge itself sent is what keeps the order — sends that asked
 * for no nonce included.
 */
import assert from "node:assert/strict";
import { type Fixture, startFixture } from "../support/emulator_fixture.ts";
import { type Anvil, startAnvil } from "../support/tools.ts";
import { CustodySigner } from "../../lib/rpc/custody.ts";
import { anvilCall, anvilTransaction } from "../support/rpc_stack.ts";

const TO = "0x000000000000000000000000000000000000bEEF";

/**
 * A custody signer for vault account 0 of `fx` that reads nonces from `behind` (a node that
 * never sees the platform's transactions) and waits `nonceQuietMs` 300 for a missing nonce.
 */
async function laggingSigner(fx: Fixture, behind: Anvil, log?: (line: string) => void) {
  const chainId = BigInt(await anvilCall(fx.anvil.url, "eth_chainId") as string);
  const lagging = async (address: string) =>
    BigInt(await anvilCall(behind.url, "eth_getTransactionCount", [address, "pending"]) as string);
  const signer = new CustodySigner({
    client: fx.client,
    assetId: fx.emu.assetId,
    chainId,
    vaultAccountIds: ["0"],
    pendingNonce: lagging,
    nonceQuietMs: 300,
    log,
  });
  return { signer, lagging };
}

Deno.test("a nonce gap nobody fills is refused after the quiet time (it would land at another nonce); filled in order, each lands at its own", async () => {
  const fx = await startFixture();
  const behind = await startAnvil(); // the lagging node: same accounts, none of the sends
  try {
    const pending = async (address: string) =>
      BigInt(
        await anvilCall(fx.anvil.url, "eth_getTransactionCount", [address, "pending"]) as string,
      );
    const lines: string[] = [];
    const { signer, lagging } = await laggingSigner(fx, behind, (l) => lines.push(l));
    const [from] = await signer.accounts();
    const n = await pending(from);
    assert.equal(await lagging(from), n, "both nodes start at the same nonce");
    const hex = (x: bigint) => `0x${x.toString(16)}`;
    const t0 = performance.now();
    await assert.rejects(
      signer.sendTransaction({ from, to: TO, value: "0x1", nonce: hex(n + 2n) }),
      new RegExp(
        `nonce too high: the transaction asks for nonce ${
          n + 2n
        } but 0x[0-9a-fA-F]{40} is at ${n}, .* so it would land at ${n}, not ${
          n + 2n
        }\\. Send nonce ${n} first\\.`,
      ),
    );
    assert.ok(performance.now() - t0 >= 300, "it waited the quiet time first");
    assert.ok(lines.some((l) => l.includes(`nonce ${n + 2n} of ${from}: nonce ${n} did not come`)));
    assert.equal(await pending(from), n, "nothing was sent");
    // filled in order, each lands with its own nonce
    for (const k of [n, n + 1n]) {
      const hash = await signer.sendTransaction({ from, to: TO, value: "0x1", nonce: hex(k) });
      const landed = await anvilTransaction(fx.anvil.url, hash) as { nonce: string };
      assert.equal(BigInt(landed.nonce), k);
    }
    // nonce n is used now: a send asking for it is refused, not given another in its place
    await assert.rejects(
      signer.sendTransaction({ from, to: TO, value: "0x2", nonce: hex(n) }),
      /nonce too low: nonce \d+ of 0x[0-9a-fA-F]{40} was already sent through this bridge.* It is held by platform transaction \S+, for another transfer/,
    );
    assert.equal(await pending(from), n + 2n);
  } finally {
    await behind.stop();
    await fx.stop();
  }
});

Deno.test("a send without a nonce counts: the nonce the platform gave it is refused to a later send asking for it", async () => {
  const fx = await startFixture();
  const behind = await startAnvil(); // the lagging node: same accounts, none of the sends
  try {
    const { signer, lagging } = await laggingSigner(fx, behind);
    const [from] = await signer.accounts();
    const n = await lagging(from);
    const hex = (x: bigint) => `0x${x.toString(16)}`;
    const plain = await signer.sendTransaction({ from, to: TO, value: "0x1" });
    const first = await anvilTransaction(fx.anvil.url, plain) as { nonce: string };
    assert.equal(BigInt(first.nonce), n, "the platform gave it the next nonce");
    assert.equal(await lagging(from), n, "the node read for nonces has not seen it");
    // asking for n now would land as n+1: refused
    await assert.rejects(
      signer.sendTransaction({ from, to: TO, value: "0x1", nonce: hex(n) }),
      /nonce too low/,
    );
    // n+1 is the next: it goes at once and lands with its own nonce
    const next = await signer.sendTransaction({ from, to: TO, value: "0x1", nonce: hex(n + 1n) });
    const second = await anvilTransaction(fx.anvil.url, next) as { nonce: string };
    assert.equal(BigInt(second.nonce), n + 1n);
  } finally {
    await behind.stop();
    await fx.stop();
  }
});
