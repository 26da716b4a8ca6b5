/**
 * The exactly-once promise with custody as slow as it is in production: the emulator signs
 * and approves after delays longer than the client's timeout, so every client gives up and
 * sends its request again, while creates meet 5xx/429 answers and dropped answers, and
 * bridges are SIGKILLed with a transaction held. Counted on the platform and on chain: each
 * request is one transaction. (The same faults without delays: rpc_faults_test.ts; each real
 * client through a slow send: rpc_slow_clients_test.ts.)
 */
import assert from "node:assert/strict";
import { anvilCall, type Stack, startStack, VAULT0 } from "../support/rpc_stack.ts";
import { waitFor } from "../support/wait_for.ts";
import * as custody from "../support/slow_custody.ts";

let stack: Stack;

Deno.test.beforeAll(async () => {
  // approval and signing each take 100-250 ms: longer than the clients' 80 ms below
  stack = await startStack([], {
    approvalDelay: { minMs: 100, maxMs: 250 },
    signingDelay: { minMs: 100, maxMs: 250 },
  });
});

Deno.test.afterAll(async () => {
  await stack?.stop();
});

/** POST to the emulator's admin endpoint. */
const admin = (path: string, body?: unknown) => custody.admin(stack, "POST", path, body);
/** Platform transactions whose externalTxId starts with `prefix`. */
const platformTransactions = (prefix: string) => custody.transactionsWithPrefix(stack, prefix);

async function nonce(): Promise<bigint> {
  return BigInt(await anvilCall(stack.anvil.url, "eth_getTransactionCount", [VAULT0, "latest"]));
}

/**
 * A client with an 80 ms timeout that sends the same request again until it gets an answer,
 * as a retrying HTTP client or proxy does. Returns the answer and how many tries it took.
 */
async function retryingSend(url: string, tx: Record<string, unknown>, id: number) {
  const body = JSON.stringify({ jsonrpc: "2.0", id, method: "eth_sendTransaction", params: [tx] });
  for (let tries = 1;; tries++) {
    try {
      const r = await fetch(url, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body,
        signal: AbortSignal.timeout(80),
      });
      const j = await r.json() as { result?: string; error?: { message: string } };
      return { ...j, tries };
    } catch (e) {
      if ((e as Error).name !== "TimeoutError") throw e;
      if (tries > 400) throw new Error(`send ${id}: no answer after ${tries} tries`);
    }
  }
}

/** One try of a send with a client timeout: its answer, or "timeout". */
async function tryOnce(url: string, tx: Record<string, unknown>, id: number, timeoutMs: number) {
  const body = JSON.stringify({ jsonrpc: "2.0", id, method: "eth_sendTransaction", params: [tx] });
  try {
    const r = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body,
      signal: AbortSignal.timeout(timeoutMs),
    });
    return await r.json() as { result?: string; error?: { message: string } };
  } catch (e) {
    if ((e as Error).name !== "TimeoutError") throw e;
    return "timeout" as const;
  }
}

/**
 * A send without a nonce whose client gives up three times while the platform holds the
 * transaction for approval, then waits for the answer after the approval. (Without a nonce
 * the bridge counts an answer as received once it is written: a client that gave up at the
 * very moment its answer was written would make its repeat a new transaction. Holding the
 * transaction while the client gives up keeps that race out of this count; the README says
 * so beside the rule.)
 */
async function abandonedSend(
  url: string,
  tx: Record<string, unknown>,
  id: number,
  prefix: string,
) {
  await admin("/faults", { kind: "hold", count: 1 });
  for (let k = 0; k < 3; k++) assert.equal(await tryOnce(url, tx, id, 80), "timeout");
  const held = await waitFor(
    "the send held for approval",
    async () =>
      (await platformTransactions(prefix)).find((t) => t.status === "PENDING_AUTHORIZATION"),
  );
  await admin(`/transactions/${held.id}/approve`);
  const answer = await tryOnce(url, tx, id, 15_000);
  assert.notEqual(answer, "timeout");
  return { ...(answer as { result?: string; error?: { message: string } }), tries: 4 };
}

for (const withNonce of [true, false]) {
  Deno.test(
    `12 sends ${
      withNonce ? "with" : "without"
    } a nonce, custody slower than the client's timeout, creates under 5xx/429 and drops: ${
      withNonce ? "each retried until answered" : "each given up three times while held"
    }, exactly 12 transactions`,
    async () => {
      const prefix = `slow-${withNonce ? "n" : "x"}-${crypto.randomUUID().slice(0, 8)}-`;
      const bridge = await stack.bridge([
        "--http",
        "--vaultAccountIds",
        "0",
        "--externalTxIdPrefix",
        prefix,
        "--pollingInterval",
        "20ms",
      ]);
      const to = "0x000000000000000000000000000000000000dEaD";
      const first = await nonce();
      const balanceBefore = BigInt(
        await anvilCall(stack.anvil.url, "eth_getBalance", [to, "latest"]),
      );
      let retried = 0;
      let last = "";
      try {
        for (let i = 1; i <= 12; i++) {
          if (i % 3 === 0) {
            await admin("/faults", {
              kind: "status",
              status: i % 2 ? 503 : 429,
              count: 1,
              path: "/v1/transactions",
              method: "POST",
            });
          }
          if (i % 4 === 1) {
            await admin("/faults", {
              kind: "drop",
              count: 1,
              path: "/v1/transactions",
              method: "POST",
            });
          }
          const tx: Record<string, unknown> = { from: VAULT0, to, value: "0x" + i.toString(16) };
          if (withNonce) tx.nonce = "0x" + (first + BigInt(i - 1)).toString(16);
          const a = withNonce
            ? await retryingSend(bridge.address, tx, i)
            : await abandonedSend(bridge.address, tx, i, prefix);
          assert.ok(a.result, `send ${i}: ${JSON.stringify(a.error)}`);
          last = a.result;
          if (a.tries > 1) retried++;
        }
      } finally {
        await custody.clearFaults(stack);
        await bridge.stop();
      }
      // the delays did outlast the client: most sends were asked for more than once
      assert.ok(retried >= 10, `only ${retried} of 12 sends were retried by the client`);
      // answered at BROADCASTING: the node may mine the last one a moment later
      await waitFor(
        "the last send mined",
        () => anvilCall(stack.anvil.url, "eth_getTransactionReceipt", [last]),
      );
      assert.equal(await nonce() - first, 12n, "exactly 12 transactions on chain");
      const balanceAfter = BigInt(
        await anvilCall(stack.anvil.url, "eth_getBalance", [to, "latest"]),
      );
      assert.equal(balanceAfter - balanceBefore, 78n, "each value sent once: 1+2+...+12");
      assert.equal(
        (await platformTransactions(prefix)).length,
        12,
        "exactly 12 platform transactions",
      );
    },
  );
}

Deno.test("a bridge SIGKILLed with a send held for approval: the same send through a new bridge follows it, before and after it landed", async () => {
  const prefix = `kill-${crypto.randomUUID().slice(0, 8)}-`;
  const flags = ["--http", "--vaultAccountIds", "0", "--externalTxIdPrefix", prefix, "--verbose"];
  const to = "0x000000000000000000000000000000000000bEEF";
  const first = await nonce();
  const tx = (n: bigint) => ({ from: VAULT0, to, value: "0x7", nonce: "0x" + n.toString(16) });
  const post = (url: string, n: bigint, signal?: AbortSignal) =>
    fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "eth_sendTransaction",
        params: [tx(n)],
      }),
      signal,
    }).then((r) => r.json() as Promise<{ result?: string; error?: unknown }>);
  const held = async () =>
    (await platformTransactions(prefix)).find((t) => t.status === "PENDING_AUTHORIZATION");

  // 1. held while the bridge dies; the new bridge's send arrives before the approval
  await admin("/faults", { kind: "hold", count: 1 });
  const a = await stack.bridge(flags);
  const lost = post(a.address, first).catch(() => undefined); // its client never hears back
  const h1 = await waitFor("the first send held", held);
  await a.stop("SIGKILL");
  await lost;
  const b = await stack.bridge(flags);
  const again = post(b.address, first);
  // the new bridge counts the held transaction in flight (it takes the nonce asked for), finds it
  // by the slot's derived externalTxId, proves it is the same send and follows it
  await waitFor(
    "the new bridge to find the held transaction",
    () => b.stderr().includes(`held by platform transaction ${h1.id} `),
  );
  await admin(`/transactions/${h1.id}/approve`);
  const r1 = await again;
  assert.ok(r1.result, JSON.stringify(r1));

  // 2. held while the bridge dies, approved and mined before the same send comes again
  await admin("/faults", { kind: "hold", count: 1 });
  const lost2 = post(b.address, first + 1n).catch(() => undefined);
  const h2 = await waitFor("the second send held", async () => {
    const t = await held();
    return t && t.id !== h1.id ? t : undefined;
  });
  await b.stop("SIGKILL");
  await lost2;
  await admin(`/transactions/${h2.id}/approve`);
  await waitFor("the second transaction mined", async () => await nonce() === first + 2n);
  const c = await stack.bridge(flags);
  const r2 = await post(c.address, first + 1n);
  assert.ok(r2.result, JSON.stringify(r2));

  const txs = await platformTransactions(prefix);
  assert.equal(txs.length, 2, JSON.stringify(txs));
  assert.deepEqual(
    new Set(txs.map((t) => t.txHash)),
    new Set([r1.result, r2.result]),
    "each answer is the hash of the transaction made before the kill",
  );
  assert.equal(await nonce(), first + 2n, "two transactions on chain");
});

Deno.test("stderr says when the client stopped waiting and prints the hash that nobody received; --quiet says nothing", async () => {
  for (const quiet of [false, true]) {
    const prefix = `talk-${crypto.randomUUID().slice(0, 8)}-`;
    const bridge = await stack.bridge([
      "--http",
      "--vaultAccountIds",
      "0",
      "--externalTxIdPrefix",
      prefix,
      ...(quiet ? ["--quiet"] : []),
    ]);
    await admin("/faults", { kind: "hold", count: 1 });
    const body = JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "eth_sendTransaction",
      params: [{ from: VAULT0, to: "0x000000000000000000000000000000000000bEEF", value: "0x3" }],
    });
    const gaveUp = await fetch(bridge.address, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body,
      signal: AbortSignal.timeout(300),
    }).then(() => false, () => true);
    assert.ok(gaveUp, "the client timed out");
    const held = await waitFor(
      "the send held",
      async () =>
        (await platformTransactions(prefix)).find((t) => t.status === "PENDING_AUTHORIZATION"),
    );
    await admin(`/transactions/${held.id}/approve`);
    const done = await waitFor(
      "the transaction sent",
      async () => (await platformTransactions(prefix)).find((t) => t.txHash),
    );
    if (quiet) {
      // the same moment as the hash line below: the bridge has seen the hash
      await waitFor("the bridge to follow the send to its end", async () => {
        const r = await fetch(bridge.address, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body,
        });
        return ((await r.json()) as { result?: string }).result === done.txHash;
      });
      assert.doesNotMatch(bridge.stderr(), /platform transaction|client stopped waiting/);
    } else {
      await waitFor("the hash on stderr", () => bridge.stderr().includes(done.txHash!));
      const lines = bridge.stderr().split("\n").filter((l) => l.includes(held.id));
      assert.match(
        lines[0],
        new RegExp(
          `^platform transaction ${held.id} \\(from ${VAULT0}\\): the client stopped waiting after \\d+ s; the transaction continues \\(waiting for approval\\) and its hash will be printed here`,
        ),
      );
      assert.match(
        lines.at(-1)!,
        /done after \d+ s: 0x[0-9a-f]{64} \(no client was waiting for it\)$/,
      );
    }
    await bridge.stop();
  }
});
