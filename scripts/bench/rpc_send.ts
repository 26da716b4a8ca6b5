/**
 * Sequential `eth_sendTransaction` through the emulator: transactions per
 * second with the bridge's adaptive polling (first poll 100 ms, backing off
 * to 2 s) versus a fixed 1 s poll (the platform's own bridge's way), same
 * run, same anvil and emulator.
 *
 * Usage: deno run -A scripts/bench/rpc_send.ts [sends=20]
 *
 * @module
 */

import { startBridgeProcess } from "../../tests/support/rpc.ts";
import { startStack, VAULT0 } from "../../tests/support/rpc_stack.ts";

const sends = Number(Deno.args[0] ?? 20);
const stack = await startStack();

async function run(extra: string[]): Promise<number> {
  const b = await startBridgeProcess([
    ...stack.flags,
    "--http",
    "--vaultAccountIds",
    "0",
    ...extra,
  ]);
  try {
    // warm-up: accounts lookup and connections
    await send(b.address, 0);
    const t0 = performance.now();
    for (let i = 1; i <= sends; i++) await send(b.address, i);
    return sends / ((performance.now() - t0) / 1000);
  } finally {
    await b.stop();
  }
}

async function send(url: string, i: number): Promise<void> {
  const r = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: i,
      method: "eth_sendTransaction",
      params: [{ from: VAULT0, to: "0x000000000000000000000000000000000000bEEF", value: "0x1" }],
    }),
  });
  const j = await r.json();
  if (!j.result) throw new Error(JSON.stringify(j.error));
}

try {
  const adaptive = await run([]);
  const fixed = await run(["--pollingInterval", "1s"]);
  console.log(JSON.stringify(
    {
      sends,
      adaptive_tx_per_s: Number(adaptive.toFixed(2)),
      fixed_1s_tx_per_s: Number(fixed.toFixed(2)),
      ratio: Number((adaptive / fixed).toFixed(2)),
    },
    null,
    2,
  ));
} finally {
  await stack.stop();
}
