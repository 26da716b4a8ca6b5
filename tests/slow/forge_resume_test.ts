/**
 * The seed's forge example with its first transaction held past forge's patience (forge gives up
 * after its attempts, each 45 s over HTTP): forge exits non-zero; the held transaction is then
 * approved, and the same command with `--resume` through a new bridge finds the platform
 * transaction that exists (by its externalTxId) instead of creating another, and completes
 * with exactly three transactions. forge's `--resume` sends to the address it recorded for each
 * transaction (not to `--rpc-url`), so both runs use one fixed address (`--port`, `--path /`).
 */
import assert from "node:assert/strict";
import { type Stack, startStack } from "../support/rpc_stack.ts";
import { forgeProject } from "../support/forge_project.ts";
import { approve, clearFaults, hold, platformTransactions } from "../support/slow_custody.ts";
import { waitFor } from "../support/wait_for.ts";
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
  await hold(stack, 1);
  try {
    const failed = await runForge(stack, project, "http", { bridgeFlags });
    assert.notEqual(failed.code, 0, failed.stdout + failed.stderr);
    // one platform transaction however often forge sent it, still held
    const held = (await platformTransactions(stack)).slice(0, -before.platform || undefined);
    assert.deepEqual(held.map((t) => t.status), ["PENDING_AUTHORIZATION"], failed.stderr);
    // while forge retried, each retry joined the one send (said on stderr)
    assert.match(failed.stderr, /a repeat of the request joined it/);
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
    });
    await assertExactlyThree(stack, project, before, resumed);
  } finally {
    await clearFaults(stack);
    await project.remove();
  }
});
