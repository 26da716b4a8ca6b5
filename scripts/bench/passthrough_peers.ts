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
 * requests/s, an added p50 at most 2.5x nginx's.
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

/** A free loopback port (bound and released; the proxy binds it right after). */
function freePort(): number {
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (l.addr as Deno.NetAddr).port;
  l.close();
  return port;
}

interface Peer {
  name: string;
  url: string;
  stop(): Promise<void>;
}

/** Waits until `port` accepts connections. */
async function listening(port: number): Promise<void> {
  for (let i = 0; i < 100; i++) {
    try {
      (await Deno.connect({ hostname: "127.0.0.1", port })).close();
      return;
    } catch {
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  throw new Error(`nothing listens on ${port}`);
}

function spawned(name: string, cmd: string, args: string[], port: number, dir: string): Peer {
  const child = new Deno.Command(cmd, { args, stdout: "null", stderr: "piped" }).spawn();
  return {
    name,
    url: `http://127.0.0.1:${port}/`,
    async stop() {
      try {
        child.kill("SIGTERM");
      } catch { /* gone */ }
      await child.output().catch(() => {});
      await Deno.remove(dir, { recursive: true }).catch(() => {});
    },
  };
}

async function startNginx(upstreamPort: number): Promise<Peer> {
  const dir = await Deno.makeTempDir({ prefix: "bench-nginx-" });
  const port = freePort();
  await Deno.writeTextFile(
    `${dir}/nginx.conf`,
    `worker_processes 1;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log;
events { worker_connections 1024; }
http {
  access_log off;
  client_body_temp_path ${dir}/body;
  proxy_temp_path ${dir}/proxy;
  upstream node { server 127.0.0.1:${upstreamPort}; keepalive 64; }
  server {
    listen 127.0.0.1:${port};
    location / {
      proxy_pass http://node;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
    }
  }
}
`,
  );
  const peer = spawned(
    "nginx",
    "nginx",
    ["-e", `${dir}/error.log`, "-p", dir, "-c", `${dir}/nginx.conf`, "-g", "daemon off;"],
    port,
    dir,
  );
  await listening(port);
  return peer;
}

async function startHaproxy(upstreamPort: number): Promise<Peer> {
  const dir = await Deno.makeTempDir({ prefix: "bench-haproxy-" });
  const port = freePort();
  await Deno.writeTextFile(
    `${dir}/haproxy.cfg`,
    `global
  nbthread 1
defaults
  mode http
  timeout connect 5s
  timeout client 60s
  timeout server 60s
  http-reuse always
frontend f
  bind 127.0.0.1:${port}
  default_backend node
backend node
  server anvil 127.0.0.1:${upstreamPort}
`,
  );
  const peer = spawned("haproxy", "haproxy", ["-f", `${dir}/haproxy.cfg`], port, dir);
  await listening(port);
  return peer;
}

/** wrk against `url`: requests/s with `conns` connections, and the median latency in ms. */
async function wrk(url: string, conns: number): Promise<{ rps: number; p50: number }> {
  const lua = await Deno.makeTempFile({ suffix: ".lua" });
  await Deno.writeTextFile(
    lua,
    `wrk.method = "POST"\nwrk.headers["Content-Type"] = "application/json"\nwrk.body = ${
      JSON.stringify(BODY)
    }\n`,
  );
  const out = await new Deno.Command("wrk", {
    args: [conns > 1 ? "-t2" : "-t1", `-c${conns}`, `-d${seconds}s`, "--latency", "-s", lua, url],
    stdout: "piped",
    stderr: "piped",
  }).output();
  await Deno.remove(lua);
  const text = new TextDecoder().decode(out.stdout);
  if (/Non-2xx|Socket errors/.test(text)) console.error(`warning (${url}):\n${text}`);
  const rps = Number(text.match(/Requests\/sec:\s+([\d.]+)/)?.[1]);
  const m = text.match(/\s50%\s+([\d.]+)(us|ms|s)/);
  const p50 = m ? Number(m[1]) * (m[2] === "us" ? 0.001 : m[2] === "s" ? 1000 : 1) : NaN;
  return { rps, p50 };
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
    program.args,
  );
  peers.push(
    { name: "anvil alone", url: anvil.url, stop: () => Promise.resolve() },
    await startNginx(anvilPort),
    await startHaproxy(anvilPort),
    { name: "bridge", url: bridge.address, stop: async () => void await bridge.stop() },
  );
  for (const p of peers) await wrk(p.url, 16); // warm-up (JIT, upstream connections)
  const rps: Record<string, number[]> = {};
  const added: Record<string, number[]> = {};
  const p50s: Record<string, number[]> = {};
  for (let r = 0; r < rounds; r++) {
    const order = peers.map((_, i) => peers[(i + r) % peers.length]);
    const p50: Record<string, number> = {};
    for (const p of order) {
      (rps[p.name] ??= []).push((await wrk(p.url, 16)).rps);
      p50[p.name] = (await wrk(p.url, 1)).p50;
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
  })));
  const perRound = (a: string, b: string, xs: Record<string, number[]>) =>
    xs[a].map((v, i) => v / xs[b][i]);
  const vsNginx = perRound("bridge", "nginx", rps);
  const vsHaproxy = perRound("bridge", "haproxy", rps);
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
} finally {
  for (const p of peers) await p.stop();
  await anvil.stop();
  await program.cleanup();
  await Deno.remove(key).catch(() => {});
}
