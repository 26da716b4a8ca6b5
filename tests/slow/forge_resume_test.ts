/**
 * The seed's forge example with its first transaction held past forge's patience (forge gives up
 * after its five attempts): forge exits non-zero; the held transaction is then approved, and the
 * same command with `--resume` through a new bridge finds the platform transaction that exists
 * (by its externalTxId) instead of creating another, and completes with exactly three
 * transactions. forge's `--resume` sends to the address it recorded for each transaction (not to
 * `--rpc-url`), so both runs use one fixed address (`--port`, `--path /`).
 *
 * forge's own patience is 45 s a send, which no flag of forge 1.7.1 shortens: its five attempts
 * took 235 s, the longest wait of the suite. forge reaches the bridge through
 * `impatientRelay` (a loopback relay that cuts a request unanswered for 8 s, as forge's timeout
 * cuts it after 45 s): forge retries and gives up exactly as after its own timeouts, in about
 * 50 s. forge's own 45 s timeout and the repeat that joins the send after it are proven by
 * forge_approval_http_test.
 */
import assert from "node:assert/strict";
import { type Stack, startStack } from "../support/rpc_stack.ts";
import { forgeProject } from "../support/forge_project.ts";
import { approve, clearFaults, hold, platformTransactions } from "../support/slow_custody.ts";
import { waitFor } from "../support/wait_for.ts";
import { impatientRelay } from "../support/impatient_relay.ts";
import { assertExactlyThree, counts, runForge } from "./forge_held.ts";

let stack: Stack;

Deno.test.beforeAll(async () => {
  stack = await startStack();
});

Deno.test.afterAll(async () => {
  await stack?.stop();
});

Deno.test("forge script fails while the first transaction is held; approved, --resume through a new bridge completes with exactly 3", async () => {
  const project = await forgeProject();
  const before = await counts(stack);
  const free = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (free.addr as Deno.NetAddr).port;
  free.close();
  const bridgeFlags = ["--port", String(port), "--path", "/"];
  const relay = impatientRelay(port, 8_000);
  await hold(stack, 1);
  try {
    const failed = await runForge(stack, project, "http", { bridgeFlags, rpcUrl: relay.url });
    assert.notEqual(failed.code, 0, failed.stdout + failed.stderr);
    // forge gave up by itself, after its own retries: five attempts, each cut while held
    assert.match(failed.stderr, /Failed to send transaction after 4 attempts/);
    assert.equal(relay.cuts(), 5, failed.stderr);
    // one platform transaction however often forge sent it, still held
    const held = (await platformTransactions(stack)).slice(0, -before.platform || undefined);
    assert.deepEqual(held.map((t) => t.status), ["PENDING_AUTHORIZATION"], failed.stderr);
    // while forge retried, each retry joined the one send (said on stderr)
    assert.equal(
      failed.stderr.match(/a repeat of the request joined it/g)?.length,
      4,
      failed.stderr,
    );
    // forge gave up and exited: the bridge, stopping with it, says the send goes on and how to resume
    assert.match(
      failed.stderr,
      /is still waiting for approval after \d+ s as the bridge stops: it continues on the platform; the same request \(same nonce, destination, value and data\) joins it, through this bridge or a new one\./,
    );
    // and once: to wait until it has landed, then resume
    assert.equal(failed.stderr.split("--resume").length - 1, 1, failed.stderr);
    assert.match(
      failed.stderr,
      /to pick the script up again, wait until platform transaction \S+ has landed .*, then run the same command with --resume added to forge script's arguments: the new bridge finds the transactions already made/,
    );
    await approve(stack, held[0].id);
    await waitFor(
      "the approved transaction to complete",
      async () =>
        (await platformTransactions(stack)).find((t) => t.id === held[0].id)?.status ===
          "COMPLETED",
    );
    const resumed = await runForge(stack, project, "http", {
      bridgeFlags,
      forgeFlags: ["--resume"],
      rpcUrl: relay.url,
    });
    await assertExactlyThree(stack, project, before, resumed);
  } finally {
    await relay.close();
    await clearFaults(stack);
    await project.remove();
  }
});
