/**
 * Sequential `eth_sendTransaction` through the emulator (anvil automines):
 * transactions per second with the bridge's default polling (5 ms doubling to
 * 2 s) against a baseline in the same run, same anvil and emulator.
 *
 * The baseline is the platform's own bridge at its fastest setting
 * (`--pollingInterval 100`) when given the path of a built copy of it (its
 * public repository built with npm; never committed): `--peer <cli.js>`, run
 * with `node`. Otherwise (and in CI) it is our own bridge with a fixed
 * 100 ms poll (`--pollingInterval 100`: no backoff), which behaves like it.
 * The target (issue 15) is a ratio of at least 4.
 *
 * Then a first send: 7 fresh bridges, run as the npm package runs them
 * (`program.ts`; the first run warms Deno's caches and is not counted), each
 * timed on its first `eth_sendTransaction` (which loads the custody signer
 * and the platform's answer checks, `lazy_signer.ts`) and on its second, the
 * same-run baseline; medians.
 *
 * Usage: deno run -A scripts/bench/rpc_send.ts [sends=30] [--peer path/to/its/cli.js]
 *
 * @module
 */

import { startBridgeProcess } from "../../tests/support/rpc.ts";
import { startStack, VAULT0 } from "../../tests/support/rpc_stack.ts";
import { benchProgram } from "./program.ts";

/**
 * One `eth_sendTransaction` (vault account 0 to a fixed address, 1 wei, JSON-RPC id `i`) through
 * the bridge at `url`; throws unless it answers a hash.
 */
export async function send(url: string, i: number): Promise<void> {
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

if (import.meta.main) await main();

async function main(): Promise<void> {
  const args = [...Deno.args];
  const peerAt = args.indexOf("--peer");
  const peer = peerAt >= 0 ? args.splice(peerAt, 2)[1] : undefined;
  const sends = Number(args[0] ?? 30);
  const stack = await startStack();

  /** Sends `sends` transactions one after another through `url`; tx/s. */
  async function measure(url: string): Promise<number> {
    await send(url, 0); // warm-up: accounts lookup and connections
    const t0 = performance.now();
    for (let i = 1; i <= sends; i++) await send(url, i);
    return sends / ((performance.now() - t0) / 1000);
  }

  async function ours(extra: string[]): Promise<number> {
    const b = await startBridgeProcess([
      ...stack.flags,
      "--http",
      "--vaultAccountIds",
      "0",
      ...extra,
    ]);
    try {
      return await measure(b.address);
    } finally {
      await b.stop();
    }
  }

  /** The platform's bridge (a built copy at `cli`), HTTP on a free port, polling every 100 ms. */
  async function theirs(cli: string): Promise<number> {
    const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
    const port = l.addr.port;
    l.close();
    const child = new Deno.Command("node", {
      args: [cli, ...stack.flags, "--http", "--port", String(port), "--pollingInterval", "100"],
      stdin: "null",
      stdout: "null",
      stderr: "null",
    }).spawn();
    const url = `http://127.0.0.1:${port}`;
    try {
      const deadline = Date.now() + 30_000;
      for (;;) {
        try {
          const r = await fetch(url, {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_chainId", params: [] }),
          });
          await r.body?.cancel();
          if (r.ok) break;
        } catch { /* not up yet */ }
        if (Date.now() > deadline) throw new Error(`the peer bridge at ${cli} did not answer`);
        await new Promise((r) => setTimeout(r, 100));
      }
      return await measure(url);
    } finally {
      child.kill("SIGTERM");
      await child.status;
    }
  }

  /** The first and the second send of fresh bridges (medians over `runs`, after one warm-up). */
  async function firstSend(runs: number): Promise<{ firstMs: number; secondMs: number }> {
    const program = await benchProgram();
    const first: number[] = [], second: number[] = [];
    try {
      for (let i = 0; i <= runs; i++) {
        const b = await startBridgeProcess(
          [...stack.flags, "--http", "--quiet", "--vaultAccountIds", "0"],
          {},
          program.rpcArgs,
        );
        try {
          const t0 = performance.now();
          await send(b.address, 0);
          const t1 = performance.now();
          await send(b.address, 1);
          const t2 = performance.now();
          if (i > 0) first.push(t1 - t0), second.push(t2 - t1);
        } finally {
          await b.stop();
        }
      }
    } finally {
      await program.cleanup();
    }
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
    return { firstMs: median(first), secondMs: median(second) };
  }

  try {
    const adaptive = await ours([]);
    const baseline = peer ? await theirs(peer) : await ours(["--pollingInterval", "100"]);
    console.log(JSON.stringify(
      {
        sends,
        default_tx_per_s: Number(adaptive.toFixed(2)),
        baseline: peer ? "platform bridge --pollingInterval 100" : "ours, fixed 100 ms poll",
        baseline_tx_per_s: Number(baseline.toFixed(2)),
        ratio: Number((adaptive / baseline).toFixed(2)),
      },
      null,
      2,
    ));
    const fresh = await firstSend(6);
    console.log(JSON.stringify(
      {
        bridges: 6,
        program: "the bundle, as the npm package runs it (BRIDGE_SOURCE=1: main.ts)",
        first_send_median_ms: Number(fresh.firstMs.toFixed(1)),
        second_send_median_ms: Number(fresh.secondMs.toFixed(1)),
        first_over_second_ms: Number((fresh.firstMs - fresh.secondMs).toFixed(1)),
      },
      null,
      2,
    ));
  } finally {
    await stack.stop();
  }
}
