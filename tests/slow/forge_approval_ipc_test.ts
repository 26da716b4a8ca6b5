/**
 * The seed's forge example over IPC with its first transaction held for approval 70 s:
 * forge's IPC requests have no 45 s timeout (measured: it waits), and the script
 * completes with exactly three transactions.
 */
import assert from "node:assert/strict";
import { type Stack, startStack } from "../support/rpc_stack.ts";
import { forgeProject } from "../support/forge_project.ts";
import { approveAfter, clearFaults, hold } from "../support/slow_custody.ts";
import { assertExactlyThree, counts, runForge } from "./forge_held.ts";

let stack: Stack;

Deno.test.beforeAll(async () => {
  stack = await startStack();
});

Deno.test.afterAll(async () => {
  await stack?.stop();
});

Deno.test("forge script over IPC, first transaction approved after 70 s: exit 0, exactly 3 transactions", async () => {
  const project = await forgeProject();
  const before = await counts(stack);
  await hold(stack, 1);
  const approver = approveAfter(stack, 70_000);
  try {
    const r = await runForge(stack, project, "ipc");
    assert.equal(approver.approved.length, 1, "the first transaction was held and approved");
    await assertExactlyThree(stack, project, before, r);
    // while it waited, the bridge said so
    assert.match(r.stderr, /waiting for approval/);
  } finally {
    await approver.stop();
    await clearFaults(stack);
    await project.remove();
  }
});
