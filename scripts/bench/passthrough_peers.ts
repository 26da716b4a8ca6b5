/**
 * HTTP pass-through of `service rpc --http` side by side with the proxies a
 * user would otherwise put in front of a node: nginx (1 worker, upstream
 * keepalive 64) and HAProxy (1 thread, `http-reuse always`), all in front of
 * the same anvil, and anvil alone. Each round measures every target once, in
 * an order that rotates from round to round (the machine is shared: pairing
 * and alternating, not one long run each): wrk `-t2 -c16` `eth_blockNumber`
 * for requests/s, and wrk `-t1 -c1` for the median latency, from which anvil's
 * own median in the same round is subtracted ("added p50"). Prints per
 * target the median and the range over the rounds, the bridge's ratios to
 * nginx and HAProxy (the median of the per-round ratios), and whether the
 * issue's targets are met: at least 0.95x nginx and 0.8x HAProxy in
 * requests/s, an added p50 at most 2.5x nginx's. Also the CPU each target's
 * processes and anvil's spent per request in the 16-connection runs (µs): on
 * a shared 2-core machine requests/s is what all the processes' CPU allows,
 * so this figure moves less with the machine's other load. The fifth target,
 * "Deno floor" (`deno_forwarder.ts`: `Deno.serve` and the bridge's node client,
 * nothing else), shows what the runtime itself costs: the bridge's ratios to it
 * are printed too (no target; context for the three above).
 *
 * Usage: deno run -A scripts/bench/passthrough_peers.ts [rounds=3] [seconds=5]
 * nginx, haproxy and wrk come from the system's packages, installed with
 * apt-get when missing. The bridge runs as the npm package runs it
 * (`program.ts`; `BRIDGE_SOURCE=1` for main.ts).
 *
 * @module
 */

import { startAnvil } from "../../tests/support/tools.ts";
import { offlineBridgeFlags, startBridgeProcess, tempPrivateKey } from "../../tests/support/rpc.ts";
import { benchProgram } from "./program.ts";
import { startDenoForwarder, startHaproxy, startNginx } from "./proxies.ts";
import { wrk } from "./wrk.ts";
import { treeCpuMs } from "./proc.ts";

const rounds = Number(Deno.args[0] ?? 3);
const seconds = Number(Deno.args[1] ?? 5);
const BODY = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_blockNumber", params: [] });

/** Installs the Debian packages whose commands are missing. */
async function ensurePackages(): Promise<void> {
  const need: Record<string, string> = { nginx: "nginx", haproxy: "haproxy", wrk: "wrk" };
  const missing: string[] = [];
  for (const [cmd, pkg] of Object.entries(need)) {
    const found = await new Deno.Command("sh", { args: ["-c", `command -v ${cmd}`] }).output();
    if (!found.success) missing.push(pkg);
  }
  if (missing.length === 0) return;
  console.error(`installing ${missing.join(", ")} with apt-get`);
  const run = async (args: string[]) => {
    const s = await new Deno.Command("apt-get", { args, stdout: "null" }).spawn().status;
    if (!s.success) throw new Error(`apt-get ${args.join(" ")} failed; install ${missing} by hand`);
  };
  await run(["update"]);
  await run(["install", "-y", ...missing]);
}

interface Peer {
  name: string;
  url: string;
  /** The process whose CPU (with its children's) is the target's; none for anvil alone. */
  pid?: number;
  stop(): Promise<void>;
}

/** wrk against `url`: requests/s with `conns` connections, and the median latency in ms. */
const run = (url: string, conns: number) => wrk(url, BODY, { connections: conns, seconds });

/** A proxy from proxies.ts; ensurePackages() installed its binary. */
async function proxy(started: Promise<Peer> | undefined, name: string): Promise<Peer> {
  if (!started) throw new Error(`${name} is not installed (apt-get install -y ${name})`);
  return await started;
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const range = (xs: number[], digits = 0) =>
  `${Math.min(...xs).toFixed(digits)}–${Math.max(...xs).toFixed(digits)}`;

await ensurePackages();
const anvil = await startAnvil();
const key = await tempPrivateKey();
const program = await benchProgram();
const anvilPort = Number(new URL(anvil.url).port);
const peers: Peer[] = [];
try {
  const bridge = await startBridgeProcess(
    [...offlineBridgeFlags(key, anvil.url), "--http"],
    {},
    program.rpcArgs,
  );
  peers.push(
    { name: "anvil alone", url: anvil.url, pid: anvil.process.pid, stop: () => Promise.resolve() },
    await proxy(startNginx(anvilPort), "nginx"),
    await proxy(startHaproxy(anvilPort), "haproxy"),
    {
      name: "bridge",
      url: bridge.address,
      pid: bridge.process.pid,
      stop: async () => void await bridge.stop(),
    },
    await startDenoForwarder(anvilPort),
  );
  for (const p of peers) await run(p.url, 16); // warm-up (JIT, upstream connections)
  const rps: Record<string, number[]> = {};
  const added: Record<string, number[]> = {};
  const p50s: Record<string, number[]> = {};
  const cpu: Record<string, number[]> = {}; // the target's own µs per request
  const anvilCpu: Record<string, number[]> = {}; // anvil's µs per request behind it
  for (let r = 0; r < rounds; r++) {
    const order = peers.map((_, i) => peers[(i + r) % peers.length]);
    const p50: Record<string, number> = {};
    for (const p of order) {
      const [own0, node0] = [p.pid ? treeCpuMs(p.pid) : NaN, treeCpuMs(anvil.process.pid)];
      const t0 = performance.now();
      const r16 = await run(p.url, 16);
      const requests = r16.rps * (performance.now() - t0) / 1000;
      (rps[p.name] ??= []).push(r16.rps);
      const perRequest = (ms: number) => ms * 1000 / requests;
      (anvilCpu[p.name] ??= []).push(perRequest(treeCpuMs(anvil.process.pid) - node0));
      if (p.name !== "anvil alone") {
        (cpu[p.name] ??= []).push(perRequest(treeCpuMs(p.pid!) - own0));
      }
      p50[p.name] = (await run(p.url, 1)).p50;
      (p50s[p.name] ??= []).push(p50[p.name]);
    }
    for (const p of peers) (added[p.name] ??= []).push(p50[p.name] - p50["anvil alone"]);
    console.error(
      `round ${r + 1}/${rounds}: ${
        peers.map((p) => `${p.name} ${Math.round(rps[p.name][r])}`).join(", ")
      }`,
    );
  }
  console.log(
    `HTTP pass-through, wrk -t2 -c16 -d${seconds}s eth_blockNumber (req/s) and -t1 -c1 (p50), ${rounds} alternating rounds; bridge: ${program.description}`,
  );
  console.table(peers.map((p) => ({
    target: p.name,
    "req/s median": Math.round(median(rps[p.name])),
    "req/s range": range(rps[p.name]),
    "p50 µs median": Math.round(median(p50s[p.name]) * 1000),
    "added p50 µs median": p.name === "anvil alone" ? "" : Math.round(median(added[p.name]) * 1000),
    "added p50 µs range": p.name === "anvil alone" ? "" : range(added[p.name].map((x) => x * 1000)),
    "CPU µs/req": p.name === "anvil alone" ? "" : median(cpu[p.name]).toFixed(1),
    "anvil CPU µs/req": median(anvilCpu[p.name]).toFixed(1),
  })));
  const perRound = (a: string, b: string, xs: Record<string, number[]>) =>
    xs[a].map((v, i) => v / xs[b][i]);
  const vsNginx = perRound("bridge", "nginx", rps);
  const vsHaproxy = perRound("bridge", "HAProxy", rps);
  const addedVsNginx = perRound("bridge", "nginx", added);
  const line = (what: string, ratios: number[], target: number, atMost = false) => {
    const m = median(ratios);
    const met = atMost ? m <= target : m >= target;
    console.log(
      `${what}: ${m.toFixed(2)}x (rounds ${range(ratios, 2)}), target ${
        atMost ? "<=" : ">="
      } ${target}x: ${met ? "met" : "missed"}`,
    );
  };
  line("bridge / nginx req/s", vsNginx, 0.95);
  line("bridge / HAProxy req/s", vsHaproxy, 0.8);
  line("bridge / nginx added p50 (1 connection)", addedVsNginx, 2.5, true);
  // the runtime's floor: how far the bridge is from the smallest Deno forwarder, and how far
  // that one is from nginx (no target: context for the three above)
  const floor = (what: string, ratios: number[]) =>
    console.log(`${what}: ${median(ratios).toFixed(2)}x (rounds ${range(ratios, 2)})`);
  floor("Deno floor / nginx req/s", perRound("Deno floor", "nginx", rps));
  floor("Deno floor / nginx added p50", perRound("Deno floor", "nginx", added));
  floor("bridge / Deno floor req/s", perRound("bridge", "Deno floor", rps));
  floor("bridge / Deno floor added p50", perRound("bridge", "Deno floor", added));
  const both = (name: string) => cpu[name].map((c, i) => c + anvilCpu[name][i]);
  console.log(
    `CPU per request, the proxy's own + anvil's (µs, median): bridge ${
      median(cpu.bridge).toFixed(1)
    } + ${median(anvilCpu.bridge).toFixed(1)}, nginx ${median(cpu.nginx).toFixed(1)} + ${
      median(anvilCpu.nginx).toFixed(1)
    }, HAProxy ${median(cpu.HAProxy).toFixed(1)} + ${
      median(anvilCpu.HAProxy).toFixed(1)
    }, Deno floor ${median(cpu["Deno floor"]).toFixed(1)} + ${
      median(anvilCpu["Deno floor"]).toFixed(1)
    }; bridge / nginx, both: ${(median(both("bridge")) / median(both("nginx"))).toFixed(2)}x`,
  );
} finally {
  for (const p of peers) await p.stop();
  await anvil.stop();
  await program.cleanup();
  await Deno.remove(key).catch(() => {});
}
