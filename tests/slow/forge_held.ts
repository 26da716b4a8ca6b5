/**
 * The seed's forge example through `service rpc -- forge script ... --rpc-url {}` with custody
 * holding transactions for approval, checked for exactly-once: the bridge's own run, what
 * forge recorded, the platform's transactions and the account's nonce on chain.
 *
 * @module
 */

import assert from "node:assert/strict";
import { type CliResult, runCli } from "../support/tools.ts";
import {
  anvilCall,
  anvilTransaction,
  type Stack,
  startStack,
  VAULT0,
} from "../support/rpc_stack.ts";
import { type ForgeProject, forgeProject } from "../support/forge_project.ts";
import {
  approveAfter,
  clearFaults,
  hold,
  nonceOf,
  platformTransactions,
} from "../support/slow_custody.ts";

/**
 * Runs the forge example as the bridge's child over `transport` (with `bridgeFlags` for the
 * bridge, `forgeFlags` for forge, `rpcUrl` for forge's `--rpc-url` instead of the bridge's own
 * address); returns the bridge's result.
 */
export function runForge(
  stack: Stack,
  project: ForgeProject,
  transport: "http" | "ipc",
  { bridgeFlags = [], forgeFlags = [], rpcUrl }: {
    bridgeFlags?: string[];
    forgeFlags?: string[];
    rpcUrl?: string;
  } = {},
): Promise<CliResult> {
  return runCli([
    "rpc",
    ...stack.flags,
    ...(transport === "http" ? ["--http"] : []),
    "--vaultAccountIds",
    "0",
    ...bridgeFlags,
    "--",
    ...project.command(forgeFlags, rpcUrl),
  ], { cwd: project.dir, timeoutMs: 360_000 });
}

/** What the account and the platform had before a run. */
export async function counts(stack: Stack): Promise<{ platform: number; nonce: number }> {
  return {
    platform: (await platformTransactions(stack)).length,
    nonce: await nonceOf(stack, VAULT0),
  };
}

/**
 * Checks that the forge run completed with exactly its three transactions since `before`:
 * three platform transactions, three mined from vault 0 with forge's nonces, the counter at 42.
 */
export async function assertExactlyThree(
  stack: Stack,
  project: ForgeProject,
  before: { platform: number; nonce: number },
  r: CliResult,
): Promise<void> {
  assert.equal(r.code, 0, r.stdout + r.stderr);
  assert.match(r.stdout, /ONCHAIN EXECUTION COMPLETE & SUCCESSFUL/);
  const run = await project.lastRun();
  assert.equal(run.receipts.length, 3);
  for (const receipt of run.receipts) assert.equal(receipt.status, "0x1");
  for (const t of run.transactions) {
    const onChain = await anvilTransaction(stack.anvil.url, t.hash);
    assert.equal(BigInt(onChain.nonce), BigInt(t.transaction.nonce), t.hash);
  }
  const after = await counts(stack);
  assert.equal(after.platform - before.platform, 3, "platform transactions");
  assert.equal(after.nonce - before.nonce, 3, "transactions mined from vault 0");
  const number = await anvilCall(stack.anvil.url, "eth_call", [
    { to: run.transactions[0].contractAddress, data: "0x8381f58a" }, // number()
    "latest",
  ]);
  assert.equal(BigInt(number), 42n);
}

/**
 * The seed's forge example over `transport` on a fresh stack, its first transaction held for
 * approval and approved after 70 s: forge exits 0 with exactly three transactions, and the
 * bridge said on stderr that it was waiting. One test file per transport, so that the slow
 * group runs them side by side.
 */
export function heldForSeventySeconds(transport: "http" | "ipc"): void {
  let stack: Stack;
  Deno.test.beforeAll(async () => {
    stack = await startStack();
  });
  Deno.test.afterAll(async () => {
    await stack?.stop();
  });
  Deno.test(`forge script over ${transport.toUpperCase()}, first transaction approved after 70 s: exit 0, exactly 3 transactions`, async () => {
    const project = await forgeProject();
    const before = await counts(stack);
    await hold(stack, 1);
    const approver = approveAfter(stack, 70_000);
    try {
      const r = await runForge(stack, project, transport);
      assert.equal(approver.approved.length, 1, "the first transaction was held and approved");
      await assertExactlyThree(stack, project, before, r);
      // while it waited, the bridge said so
      assert.match(r.stderr, /waiting for approval/);
      // over HTTP forge gave up on its first attempt after its 45 s and sent again, which joined
      // the send; over IPC forge has no timeout and sent once
      assert.equal(
        r.stderr.match(/a repeat of the request joined it after/g)?.length ?? 0,
        transport === "http" ? 1 : 0,
        r.stderr,
      );
    } finally {
      await approver.stop();
      await clearFaults(stack);
      await project.remove();
    }
  });
}
