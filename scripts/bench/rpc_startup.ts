/**
 * Start-up of the bridge, against `service --version` (Deno's own start-up
 * with our CLI) as the same-run baseline, runs interleaved so that a busy
 * machine weighs on both alike:
 *
 * - wall time of `service rpc --http -- true` (and of the IPC default);
 * - first answer: from spawning `service rpc --http` (no child) to the
 *   answer of a first `eth_blockNumber` through it;
 * - idle memory (RSS) of that bridge 500 ms after its first answer.
 *
 * Every command (the baseline too) runs as the npm package runs it
 * (`program.ts`: the bundle, the package's permissions and V8 flags;
 * `BRIDGE_SOURCE=1` runs `main.ts`, `BRIDGE_V8_FLAGS` replaces the flags).
 *
 * Usage: deno run -A scripts/bench/rpc_startup.ts [runs=15]
 *
 * @module
 */

import { startAnvil } from "../../tests/support/tools.ts";
import { offlineBridgeFlags, tempPrivateKey } from "../../tests/support/rpc.ts";
import { benchProgram } from "./program.ts";

const root = new URL("../..", import.meta.url).pathname;
const deno = Deno.execPath();
/** The clean environment every command runs in. */
const env: Record<string, string> = {
  PATH: Deno.env.get("PATH") ?? "",
  HOME: Deno.env.get("HOME") ?? "/tmp",
};

/**
 * Wall time (ms) of `deno <program> <args>` run to its end in a clean
 * environment, output discarded; throws when it exits non-zero.
 */
export async function wallMs(program: readonly string[], args: string[]): Promise<number> {
  const t0 = performance.now();
  const { code } = await new Deno.Command(deno, {
    args: [...program, ...args],
    cwd: root,
    clearEnv: true,
    env,
    stdin: "null",
    stdout: "null",
    stderr: "null",
  }).output();
  if (code !== 0) throw new Error(`${args.join(" ")} exited ${code}`);
  return performance.now() - t0;
}

if (import.meta.main) await main();

async function main(): Promise<void> {
  const runs = Number(Deno.args[0] ?? 15);
  const program = await benchProgram();
  const anvil = await startAnvil();
  const key = await tempPrivateKey();
  const flags = [...offlineBridgeFlags(key, anvil.url)];
  // as the package's launcher runs them: rpc with its own V8 flags
  const argv = (
    args: string[],
  ) => [...(args[0] === "rpc" ? program.rpcArgs : program.args), ...args];
  const wall = (args: string[]) => wallMs(args[0] === "rpc" ? program.rpcArgs : program.args, args);

  /** Spawn to first answer through the bridge, and its RSS once idle. */
  async function firstAnswer(): Promise<{ ms: number; rssMb: number }> {
    const t0 = performance.now();
    const child = new Deno.Command(deno, {
      args: argv(["rpc", "--http", "--quiet", ...flags]),
      cwd: root,
      clearEnv: true,
      env,
      stdin: "null",
      stdout: "piped",
      stderr: "null",
    }).spawn();
    try {
      const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
      let buf = "";
      while (!buf.includes("\n")) {
        const { value, done } = await reader.read();
        if (done) throw new Error("the bridge exited before printing its address");
        buf += value;
      }
      const r = await fetch(buf.split("\n")[0], {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: '{"jsonrpc":"2.0","id":1,"method":"eth_blockNumber","params":[]}',
      });
      const answer = await r.json();
      const ms = performance.now() - t0;
      if (typeof answer.result !== "string") {
        throw new Error(`bad answer ${JSON.stringify(answer)}`);
      }
      await new Promise((res) => setTimeout(res, 500));
      const status = await Deno.readTextFile(`/proc/${child.pid}/status`);
      const rssMb = Number(status.match(/VmRSS:\s+(\d+)/)?.[1]) / 1024;
      reader.releaseLock();
      return { ms, rssMb };
    } finally {
      child.kill("SIGTERM");
      await child.status;
      await child.stdout.cancel().catch(() => {});
    }
  }

  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  try {
    const version: number[] = [], http: number[] = [], ipc: number[] = [], first: number[] = [];
    const rss: number[] = [];
    for (let i = 0; i < runs + 2; i++) {
      const v = await wall(["--version"]);
      const h = await wall(["rpc", "--http", ...flags, "--", "true"]);
      const p = await wall(["rpc", ...flags, "--", "true"]);
      const f = await firstAnswer();
      if (i < 2) continue; // warm the module cache
      version.push(v), http.push(h), ipc.push(p), first.push(f.ms), rss.push(f.rssMb);
    }
    const base = median(version);
    const round = (x: number) => Number(x.toFixed(1));
    console.log(JSON.stringify(
      {
        runs,
        program: program.description,
        v8_flags: program.v8Flags,
        version_median_ms: round(base),
        rpc_http_true_median_ms: round(median(http)),
        rpc_ipc_true_median_ms: round(median(ipc)),
        rpc_http_true_over_version_ms: round(median(http) - base),
        first_answer_median_ms: round(median(first)),
        idle_rss_median_mb: round(median(rss)),
        targets: "rpc --http -- true <= 60 ms, first answer <= 80 ms, idle RSS <= 45 MB",
      },
      null,
      2,
    ));
    const verdict = (name: string, target: number, unit: string, measured: number) =>
      console.log(
        `${name}: target <= ${target} ${unit}, measured ${
          round(measured)
        } ${unit} (median of ${runs}): ${measured <= target ? "met" : "missed"}`,
      );
    verdict("rpc --http -- true wall", 60, "ms", median(http));
    verdict("first answer", 80, "ms", median(first));
    verdict("idle RSS", 45, "MB", median(rss));
    console.log(`(baseline: service --version ${round(base)} ms in the same run)`);
  } finally {
    await anvil.stop();
    await Deno.remove(key);
    await program.cleanup();
  }
}
