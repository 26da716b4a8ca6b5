/**
 * The slot rule across bridge processes and the proof before adoption, with real bridge
 * processes, anvil and the emulator: two bridges asked for one nonce with different transfers
 * (the second is refused, one transaction at that nonce); a foreign platform transaction created
 * with a send's derived externalTxId (not adopted); a chain restarted under a kept emulator
 * state (no hash the chain lacks is answered); viem showing the bridge's own errors.
 */
import assert from "node:assert/strict";
import { httpRpc } from "../support/rpc.ts";
import { anvilCall, type Stack, startStack, VAULT0, VAULT1 } from "../support/rpc_stack.ts";
import {
  approve,
  clearFaults,
  hold,
  nonceOf,
  platformTransactions,
} from "../support/slow_custody.ts";
import { waitFor } from "../support/wait_for.ts";
import { foundryBin, startAnvil } from "../support/tools.ts";
import { startBridgeProcess } from "../support/rpc.ts";
import { startEmulator } from "../../lib/emulator/mod.ts";
import { createTransaction, loadCredentials, PlatformClient } from "../../lib/platform/mod.ts";
import { derivedExternalTxId, sendIdentity } from "../../lib/rpc/send_identity.ts";
import { toTransactionRequest } from "../../lib/rpc/transaction_request.ts";

let stack: Stack;

Deno.test.beforeAll(async () => {
  stack = await startStack();
});

Deno.test.afterAll(async () => {
  await stack?.stop();
});

type Answer = { result?: string; error?: { code: number; message: string; data?: unknown } };

async function send(address: string, tx: Record<string, unknown>): Promise<Answer> {
  const r = await httpRpc(address, {
    jsonrpc: "2.0",
    id: 1,
    method: "eth_sendTransaction",
    params: [tx],
  });
  return r.json() as Answer;
}

const hex = (n: number | bigint) => "0x" + n.toString(16);

/** Runs `program args` to its end: exit code and output. */
async function run(program: string, args: string[]) {
  const out = await new Deno.Command(program, { args, stdout: "piped", stderr: "piped" }).output();
  const dec = new TextDecoder();
  return { code: out.code, stdout: dec.decode(out.stdout), stderr: dec.decode(out.stderr) };
}

Deno.test("two bridge processes, one nonce, different transfers (curl, then cast): the second is refused naming the first's platform transaction; one transaction at that nonce", async () => {
  const flags = ["--http", "--vaultAccountIds", "0", "--externalTxIdPrefix", "two-"];
  const [a, b] = await Promise.all([stack.bridge(flags), stack.bridge([...flags, "--verbose"])]);
  const n = await nonceOf(stack, VAULT0);
  const to = "0x000000000000000000000000000000000000bEEF";
  const cast = foundryBin("cast");
  await hold(stack, 1);
  try {
    // bridge 1: curl asks nonce n, value 0x22; custody holds it for approval
    const first = run("curl", [
      "-s",
      "-H",
      "content-type: application/json",
      "--data",
      JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "eth_sendTransaction",
        params: [{ from: VAULT0, to, value: "0x22", nonce: hex(n) }],
      }),
      a.address,
    ]);
    const held = await waitFor(
      "bridge 1's send held for approval",
      async () =>
        (await platformTransactions(stack)).find((t) =>
          t.status === "PENDING_AUTHORIZATION" && t.externalTxId?.startsWith("two-")
        ),
    );
    // bridge 2: cast asks the same nonce for another transfer (value 0x23): refused, naming it
    const common = ["--unlocked", "--from", VAULT0, "--nonce", String(n), "--rpc-url", b.address];
    const other = await run(cast, ["send", ...common, "--value", "35", to]);
    assert.notEqual(other.code, 0, other.stdout);
    assert.match(other.stderr, new RegExp(`Platform transaction ${held.id}`));
    assert.match(
      other.stderr,
      /not this send: amount 0\.000000000000000034 \(asked 0\.000000000000000035\)/,
    );
    // the same transfer re-priced (its own fees) through bridge 2 joins bridge 1's send
    const joined = run(cast, [
      "send",
      ...common,
      "--value",
      "34",
      "--gas-price",
      "3gwei",
      "--priority-gas-price",
      "1gwei",
      "--json",
      to,
    ]);
    await waitFor(
      "bridge 2 to follow the held send",
      () => b.stderr().includes(`held by platform transaction ${held.id} `),
    );
    await approve(stack, held.id);
    const [r1, r2] = await Promise.all([first, joined]);
    const hash = (JSON.parse(r1.stdout) as Answer).result;
    assert.ok(hash, r1.stdout);
    assert.equal(r2.code, 0, r2.stderr);
    assert.equal((JSON.parse(r2.stdout) as { transactionHash: string }).transactionHash, hash);
    const mined = await anvilCall(stack.anvil.url, "eth_getTransactionByHash", [hash]);
    assert.equal(BigInt(mined.nonce), BigInt(n));
    assert.equal(BigInt(mined.value), 0x22n);
    await waitFor("the send mined", async () => await nonceOf(stack, VAULT0) === n + 1);
    const ours = (await platformTransactions(stack)).filter((t) =>
      t.externalTxId?.startsWith("two-")
    );
    assert.equal(ours.length, 1, JSON.stringify(ours));
  } finally {
    await clearFaults(stack);
    await Promise.all([a.stop(), b.stop()]);
  }
});

Deno.test("a foreign platform transaction created with a send's derived externalTxId (another vault, another destination, 2 ETH) is not adopted", async () => {
  const prefix = "foreign-";
  const bridge = await stack.bridge([
    "--http",
    "--vaultAccountIds",
    "0",
    "--externalTxIdPrefix",
    prefix,
  ]);
  try {
    const n = BigInt(await nonceOf(stack, VAULT0));
    const tx = {
      from: VAULT0,
      to: "0x000000000000000000000000000000000000cafE",
      value: "0x5",
      nonce: hex(n),
    };
    // anyone who can read the code can derive the id: it is public facts (chain, sender, nonce)
    const body = toTransactionRequest(tx, { assetId: stack.emulator.assetId, chainId: 31337n });
    const id = await derivedExternalTxId(prefix, sendIdentity(31337n, VAULT0, n, body), 1);
    const client = new PlatformClient(
      await loadCredentials({
        apiKey: stack.emulator.apiKey,
        privateKey: stack.emulator.privateKeyPath,
        apiBaseUrl: stack.emulator.apiBaseUrl,
      }),
    );
    const foreign = await createTransaction(client, {
      operation: "TRANSFER",
      assetId: stack.emulator.assetId,
      source: { type: "VAULT_ACCOUNT", id: "1" },
      destination: {
        type: "ONE_TIME_ADDRESS",
        oneTimeAddress: { address: "0x000000000000000000000000000000000000dEaD" },
      },
      amount: "2",
      externalTxId: id,
    });
    await waitFor(
      "the foreign transfer to land",
      async () =>
        (await platformTransactions(stack)).find((t) => t.id === foreign.id)?.status ===
          "COMPLETED",
    );
    const foreignHash = (await platformTransactions(stack)).find((t) =>
      t.id === foreign.id
    )!.txHash;
    const r = await send(bridge.address, tx);
    assert.ok(r.error, `the foreign transaction was answered as the send: ${JSON.stringify(r)}`);
    assert.notEqual(r.result, foreignHash);
    assert.match(
      r.error.message,
      new RegExp(`Platform transaction ${foreign.id} \\(externalTxId ${id}\\)`),
    );
    assert.match(r.error.message, /source vault account 1 \(asked 0\)/);
    assert.match(r.error.message, /It was not adopted; nothing was sent/);
    assert.equal(BigInt(await nonceOf(stack, VAULT0)), n, "the caller's nonce did not move");
    assert.equal(
      (await platformTransactions(stack)).filter((t) => t.externalTxId?.startsWith(prefix)).length,
      1,
      "nothing created for the caller",
    );
  } finally {
    await bridge.stop();
  }
});

Deno.test("anvil restarted under a kept emulator state: the identical nonce-0 send answers a hash the chain has", async () => {
  const dir = await Deno.makeTempDir({ prefix: "slot-state-" });
  const state = `${dir}/emu.sqlite`;
  const tx = { from: VAULT0, to: VAULT1, value: "0x31", nonce: "0x0" };
  const bridgeOf = async (emulator: Awaited<ReturnType<typeof startEmulator>>, rpcUrl: string) =>
    await startBridgeProcess([
      "--apiKey",
      emulator.apiKey,
      "--privateKey",
      emulator.privateKeyPath,
      "--apiBaseUrl",
      emulator.apiBaseUrl,
      "--rpcUrl",
      rpcUrl,
      "--http",
      "--vaultAccountIds",
      "0",
      "--verbose",
    ]);
  let anvil = await startAnvil();
  let emulator = await startEmulator({ rpcUrl: anvil.url, state, log: () => {} });
  let bridge = await bridgeOf(emulator, anvil.url);
  try {
    const first = await send(bridge.address, tx);
    assert.ok(first.result, JSON.stringify(first));
    await waitFor(
      "the first landed",
      async () =>
        Number(await anvilCall(anvil.url, "eth_getTransactionCount", [VAULT0, "latest"])) === 1,
    );
    await bridge.stop();
    await emulator.stop();
    await anvil.stop();
    // a fresh chain (as after a CI restart), the emulator's state kept
    anvil = await startAnvil();
    emulator = await startEmulator({ rpcUrl: anvil.url, state, log: () => {} });
    bridge = await bridgeOf(emulator, anvil.url);
    const again = await send(bridge.address, tx);
    assert.ok(again.result, JSON.stringify(again));
    const onChain = await waitFor(
      "the answered hash on the chain",
      async () =>
        await anvilCall(anvil.url, "eth_getTransactionByHash", [again.result]) ?? undefined,
      15_000,
    ).catch(() => null);
    assert.ok(
      onChain,
      `answered ${again.result}, which the restarted chain does not have; the bridge said:\n${bridge.stderr()}`,
    );
    assert.equal(BigInt(onChain.nonce), 0n);
    assert.match(bridge.stderr(), /which the chain does not have: a new attempt/);
  } finally {
    await bridge.stop();
    await emulator.stop();
    await anvil.stop();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("viem shows the bridge's own errors: nonce too low, and a BLOCKED transaction's reason", async () => {
  const viem = await import("viem");
  const { foundry } = await import("viem/chains");
  const bridge = await stack.bridge(["--http", "--vaultAccountIds", "0"]);
  try {
    const wallet = viem.createWalletClient({
      account: VAULT0,
      chain: foundry,
      transport: viem.http(bridge.address),
    });
    const to = VAULT1 as `0x${string}`;
    const n = await nonceOf(stack, VAULT0);
    assert.ok(n > 0, "an earlier test used nonce 0");
    await assert.rejects(
      wallet.sendTransaction({ to, value: 1n, nonce: 0 }),
      (e: Error) => {
        assert.match(e.message, /nonce too low: the transaction asks for nonce 0 but 0x/);
        assert.doesNotMatch(e.message, /does not support the requested method/);
        return true;
      },
    );
    await fetch(`${stack.emulator.adminUrl}/faults`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-api-key": stack.emulator.apiKey },
      body: JSON.stringify({
        kind: "finalStatus",
        status: "BLOCKED",
        subStatus: "BLOCKED_BY_POLICY",
      }),
    }).then((r) => r.body?.cancel());
    await assert.rejects(
      wallet.sendTransaction({ to, value: 2n }),
      (e: Error) => {
        assert.match(e.message, /ended BLOCKED \(BLOCKED_BY_POLICY\)/);
        assert.doesNotMatch(e.message, /does not support the requested method/);
        return true;
      },
    );
  } finally {
    await clearFaults(stack);
    await bridge.stop();
  }
});

Deno.test("a client still waiting when the bridge stops is told which platform transaction goes on (error.data.txId); stderr says it once, as true without a child", async () => {
  const bridge = await stack.bridge(["--http", "--vaultAccountIds", "0"]);
  const known = new Set((await platformTransactions(stack)).map((t) => t.id));
  await hold(stack, 1);
  try {
    const waiting = send(bridge.address, { from: VAULT0, to: VAULT1, value: "0x41" });
    const held = await waitFor(
      "the send held",
      async () =>
        (await platformTransactions(stack)).find((t) =>
          !known.has(t.id) && t.status === "PENDING_AUTHORIZATION"
        ),
    );
    await bridge.stop();
    const r = await waiting;
    assert.ok(r.error, JSON.stringify(r));
    assert.match(
      r.error.message,
      new RegExp(
        `The bridge is stopping; .* Platform transaction ${held.id} continues on the platform\\.`,
      ),
    );
    assert.equal((r.error.data as { txId?: string }).txId, held.id);
    const stderr = bridge.stderr();
    assert.match(
      stderr,
      new RegExp(
        `platform transaction ${held.id} \\(from ${VAULT0}\\) is still .* as the bridge stops: it continues on the platform; a repeat through a new bridge would be a second transaction: check ${held.id} on the platform before sending again\\.`,
      ),
    );
    assert.doesNotMatch(stderr, /--resume|its hash will be printed here|request was abandoned/);
    await approve(stack, held.id);
  } finally {
    await clearFaults(stack);
  }
});
