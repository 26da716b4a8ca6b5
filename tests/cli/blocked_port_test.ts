/**
 * A node URL on a port that HTTP clients never connect to (`--rpcUrl
 * http://127.0.0.1:1`) is explained in our words, not Deno's ("Requests to
 * port 1 are blocked"), with exit 2 as any unreachable node.
 */
import assert from "node:assert/strict";
import { runCli } from "../support/tools.ts";
import { blockedPortReason } from "../../lib/core/mod.ts";

Deno.test("blockedPortReason names the Fetch standard's blocked ports only", () => {
  assert.match(blockedPortReason("http://127.0.0.1:1")!, /^port 1 is one that HTTP clients never/);
  assert.match(blockedPortReason("ws://localhost:6000/x")!, /^port 6000 /);
  for (const ok of ["http://127.0.0.1:8545", "https://node.example", "/tmp/anvil.ipc", "x"]) {
    assert.deepEqual(blockedPortReason(ok), undefined, ok);
  }
});

Deno.test("emulator and rpc --emulator with --rpcUrl on port 1: our words, exit 2", async () => {
  for (
    const args of [
      ["emulator", "--rpcUrl", "http://127.0.0.1:1"],
      ["rpc", "--emulator", "--rpcUrl", "http://127.0.0.1:1", "--", "true"],
    ]
  ) {
    const r = await runCli(args);
    assert.deepEqual(r.code, 2, r.stderr);
    assert.deepEqual(
      r.stderr,
      "error: Cannot reach the node at --rpcUrl http://127.0.0.1:1: port 1 is one that HTTP " +
        "clients never connect to (a blocked port of the Fetch standard). Run the node on " +
        "another port and give that one.\n",
    );
    assert.ok(!r.stderr.includes("Requests to port"), r.stderr);
  }
});
