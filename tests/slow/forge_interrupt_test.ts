/**
 * forge script Ctrl-C'd while its first transaction waits for approval, blocks mined so that
 * the base fee moves (forge re-prices every transaction on `--resume`), then the same command
 * with `--resume` through a new bridge, as the bridge's stop line says: the resumed first
 * transaction joins the held one (its slot: chain, sender, nonce; the fee fields are not part
 * of the send), so exactly three transactions and one Counter; and the same when the held one
 * had already landed before the resume (forge's first transaction is then proven on chain and
 * answered, where it used to be refused as "nonce too low" for good).
 */
import assert from "node:assert/strict";
import { type Stack, startStack } from "../support/rpc_stack.ts";
import { forgeProject } from "../support/forge_project.ts";
import { mainCommand } from "../support/main_command.ts";
import {
  approve,
  approveAfter,
  clearFaults,
  hold,
  platformTransactions,
  type PlatformTx,
} from "../support/slow_custody.ts";
import { anvilCall } from "../support/rpc_stack.ts";
import { waitFor } from "../support/wait_for.ts";
import { assertExactlyThree, counts, runForge } from "./forge_held.ts";

let stack: Stack;

Deno.test.beforeAll(async () => {
  stack = await startStack();
});

Deno.test.afterAll(async () => {
  await stack?.stop();
});

/** A fixed loopback port, free now: forge `--resume` sends to the address it recorded. */
function freePort(): number {
  const free = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (free.addr as Deno.NetAddr).port;
  free.close();
  return port;
}

/**
 * Runs the forge example through a bridge until its first transaction is held, then sends
 * SIGINT to the bridge (which passes it to forge, as a terminal's Ctrl-C reaches both);
 * returns the held platform transaction and the bridge's stderr.
 */
async function interruptedWhileHeld(
  project: Awaited<ReturnType<typeof forgeProject>>,
  bridgeFlags: string[],
  known: number,
): Promise<{ held: PlatformTx; stderr: string; code: number }> {
  const child = mainCommand([
    "rpc",
    ...stack.flags,
    "--http",
    "--vaultAccountIds",
    "0",
    ...bridgeFlags,
    "--",
    ...project.command(),
  ], { cwd: project.dir }).spawn();
  const stderr = new Response(child.stderr).text();
  const stdout = new Response(child.stdout).text();
  try {
    const held = await waitFor(
      "forge's first transaction held for approval",
      async () => {
        const all = await platformTransactions(stack);
        return all.length > known
          ? all.find((t) => t.status === "PENDING_AUTHORIZATION")
          : undefined;
      },
      120_000,
    );
    child.kill("SIGINT");
    const status = await child.status;
    await stdout;
    return { held, stderr: await stderr, code: status.code };
  } catch (e) {
    child.kill("SIGKILL");
    await child.status;
    throw e;
  }
}

Deno.test("forge Ctrl-C'd during approval, blocks mined, --resume through a new bridge: exactly 3 transactions, one Counter", async () => {
  const project = await forgeProject();
  const before = await counts(stack);
  const bridgeFlags = ["--port", String(freePort()), "--path", "/"];
  await hold(stack, 1);
  try {
    const first = await interruptedWhileHeld(project, bridgeFlags, before.platform);
    assert.notEqual(first.code, 0);
    // the bridge says once how to pick the script up, and which transaction to wait for
    assert.equal(first.stderr.split("--resume").length - 1, 1, first.stderr);
    assert.match(
      first.stderr,
      new RegExp(
        `wait until platform transaction ${first.held.id} has landed .*then run the same command with --resume added to forge script's arguments`,
      ),
    );
    await anvilCall(stack.anvil.url, "anvil_mine", ["0x5"]);
    // the resume joins the held transaction; it is approved while forge waits for it
    const approver = approveAfter(stack, 3_000);
    try {
      const resumed = await runForge(stack, project, "http", {
        bridgeFlags,
        forgeFlags: ["--resume"],
      });
      await assertExactlyThree(stack, project, before, resumed);
      assert.deepEqual(approver.approved, [first.held.id]);
    } finally {
      await approver.stop();
    }
  } finally {
    await clearFaults(stack);
    await project.remove();
  }
});

Deno.test("forge Ctrl-C'd during approval; the held one lands; blocks mined; --resume through a new bridge completes with exactly 3", async () => {
  const project = await forgeProject();
  const before = await counts(stack);
  const bridgeFlags = ["--port", String(freePort()), "--path", "/"];
  await hold(stack, 1);
  try {
    const first = await interruptedWhileHeld(project, bridgeFlags, before.platform);
    await approve(stack, first.held.id);
    await waitFor(
      "the held transaction to land",
      async () =>
        (await platformTransactions(stack)).find((t) => t.id === first.held.id)?.status ===
          "COMPLETED",
    );
    await anvilCall(stack.anvil.url, "anvil_mine", ["0x5"]);
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
