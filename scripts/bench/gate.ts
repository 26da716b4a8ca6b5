/**
 * The regression gate: `deno task bench:gate [REF]`. Builds REF (default:
 * `gate_ref.ts`, the last commit of main this branch starts from, or HEAD~1)
 * in a temporary git worktree (this checkout's `node_modules` linked in;
 * removed at the end, on Ctrl-C too) and measures, paired and alternated
 * against the working tree (REF then now, now then REF, ...: one pair at a
 * time, back to back), the headline figures:
 *
 * - HTTP pass-through req/s (wrk, 16 connections) and added p50 (1
 *   connection) of `eth_blockNumber` through the bridge in front of one anvil,
 *   with anvil alone, nginx and HAProxy (when installed) as context;
 * - a send's time: `eth_sendTransaction` through the bridge on the emulator;
 * - `rpc --http -- true` start-up;
 * - `breaker simulate` time and peak memory on a 2M-line log (generated once,
 *   deterministic, and kept for the next runs in `$TMPDIR/service-bench-cache/`);
 * - webhook deliveries per second (the emulator to a local receiver);
 * - the 1,000-subscriber `newHeads` fan-out's peak memory.
 *
 * Both sides run as the npm package runs them (`program.ts`: each checkout's
 * own bundle and flags); the measuring code is this checkout's. Each figure's
 * verdict is the median of its per-pair ratios against a 10% threshold
 * (`gate_verdict.ts`); the gate prints one table and exits 1 when a figure is
 * WORSE (or could not be measured), 2 on bad usage, 130 when interrupted.
 *
 * Usage: deno task bench:gate [REF] [--only http,send,startup,breaker,webhooks,fanout]
 *
 * @module
 */

import { parseArgs } from "node:util";
import { startAnvil } from "../../tests/support/tools.ts";
import {
  type BridgeProcess,
  offlineBridgeFlags,
  startBridgeProcess,
  tempPrivateKey,
} from "../../tests/support/rpc.ts";
import { startStack } from "../../tests/support/rpc_stack.ts";
import { benchProgram, type Program } from "./program.ts";
import { wrk } from "./wrk.ts";
import { rssSampler, threadsCpuUs } from "./proc.ts";
import { send } from "./rpc_send.ts";
import { wallMs } from "./rpc_startup.ts";
import { generate, measure } from "./breaker_simulate.ts";
import { emulatorRun, Receiver } from "./webhook_delivery.ts";
import { subscribe } from "./ws_fanout.ts";
import { startHaproxy, startNginx } from "./proxies.ts";
import { chooseRef, commitOf, gitFacts } from "./gate_ref.ts";
import {
  type Better,
  formatTable,
  judge,
  median,
  type Pair,
  passes,
  type Row,
} from "./gate_verdict.ts";

const ROOT = new URL("../../", import.meta.url).pathname;

/**
 * The gate's sizes: pairs per figure and the size of each measurement, chosen
 * so that the whole gate takes under 5 minutes on a quiet 2-core machine.
 * `breaker simulate` has 5 pairs: this VM's CPU time for the same run is
 * sometimes 1.3 s and sometimes 2.0 s, and with 3 pairs one slow phase on one
 * side made a false WORSE (1.24 in a full gate; 0.90 and 0.92 in the two
 * `--only breaker` runs right after). Webhook deliveries have 5 pairs for the
 * same reason: with 3, one full gate with no change on the delivery path
 * said 1.124 WORSE (pairs 1.05-1.19); `--only webhooks` right after said
 * 1.052, then 0.898.
 */
const SIZES = {
  http: { pairs: 6, repeat: 2, seconds: 1, connections: 16 },
  send: { pairs: 7, sends: 5 },
  startup: { pairs: 7, repeat: 3 },
  breaker: { pairs: 5, repeat: 2, lines: 2_000_000, endpoints: 1000 },
  webhooks: { pairs: 5, repeat: 1, n: 1000, endpoints: 4 },
  fanout: { pairs: 3, subscribers: 1000, seconds: 2 },
} as const;

const SECTIONS = ["http", "send", "startup", "breaker", "webhooks", "fanout"] as const;
type Section = typeof SECTIONS[number];

const BLOCK_NUMBER = JSON.stringify({
  jsonrpc: "2.0",
  id: 1,
  method: "eth_blockNumber",
  params: [],
});

/** One side of the comparison. */
interface Side {
  name: "REF" | "now";
  program: Program;
}

/** A figure's pairs and how it was measured. */
interface Figure {
  figure: string;
  unit: string;
  better: Better;
  command: string;
  pairs: Pair[];
}

// ---- cleanup on every exit path: what was started is stopped, in reverse order

const closers: (() => Promise<unknown>)[] = [];

/** Registers `close` to run at the end (or on a signal); returns it, to run earlier once. */
function own(close: () => Promise<unknown>): () => Promise<void> {
  let done = false;
  const once = async () => {
    if (done) return;
    done = true;
    const i = closers.indexOf(once);
    if (i >= 0) closers.splice(i, 1);
    await close();
  };
  closers.push(once);
  return once;
}

async function closeAll(): Promise<void> {
  while (closers.length) {
    const close = closers[closers.length - 1];
    try {
      await close();
    } catch (e) {
      console.error(`gate: cleanup: ${(e as Error).message}`);
    }
    if (closers[closers.length - 1] === close) closers.pop();
  }
}

let interrupted = false;
for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
  Deno.addSignalListener(signal, () => {
    if (interrupted) return;
    interrupted = true;
    console.error(`\ngate: ${signal}: stopping what it started and removing the REF worktree`);
    closeAll().finally(() => Deno.exit(130));
  });
}

// ---- running one pair at a time, alternating which side goes first

/** Run `i`'s order: REF first in even runs, now first in odd ones (A B, B A, A B, ...). */
function order(sides: readonly [Side, Side], i: number): readonly Side[] {
  return i % 2 === 0 ? sides : [sides[1], sides[0]];
}

/** How a figure's pairs are taken. */
interface PairOptions {
  /** Runs of each side in one pair (alternating: A B B A for 2); the pair keeps each side's best. */
  repeat?: number;
  /** Runs first in each pair, e.g. a baseline both sides share. */
  before?: () => Promise<void>;
}

/** Each side's runs in one pair (empty where a side failed). */
interface PairRuns<T> {
  ref: T[];
  now: T[];
}

/**
 * Runs `measureOne` for REF and now, `pairs` pairs of `repeat` alternating
 * runs each; a run that throws is left out (a side with no run makes the
 * figure FAILED, never passed).
 */
async function pairedRuns<T>(
  sides: readonly [Side, Side],
  pairs: number,
  measureOne: (side: Side) => Promise<T>,
  options: PairOptions = {},
): Promise<PairRuns<T>[]> {
  const repeat = options.repeat ?? 1;
  const out: PairRuns<T>[] = [];
  for (let i = 0; i < pairs; i++) {
    const got: PairRuns<T> = { ref: [], now: [] };
    await options.before?.();
    for (let r = 0; r < repeat; r++) {
      for (const side of order(sides, i * repeat + r)) {
        try {
          got[side.name === "REF" ? "ref" : "now"].push(await measureOne(side));
        } catch (e) {
          console.error(`gate: ${side.name}: ${(e as Error).message}`);
        }
      }
    }
    out.push(got);
  }
  return out;
}

/** The best of some runs: the least when lower is better, the most otherwise. */
function best(xs: number[], better: Better): number {
  return xs.length === 0 ? NaN : better === "lower" ? Math.min(...xs) : Math.max(...xs);
}

/**
 * {@linkcode pairedRuns} of one number per run; each side's best in each
 * pair (load on a shared machine only ever makes a run slower).
 */
async function paired(
  sides: readonly [Side, Side],
  pairs: number,
  better: Better,
  measureOne: (side: Side) => Promise<number>,
  options: PairOptions = {},
): Promise<Pair[]> {
  return pick(await pairedRuns(sides, pairs, measureOne, options), (xs) => best(xs, better));
}

/** One number of each side's runs in each pair, as pairs (NaN where a side has no run). */
function pick<T>(runs: PairRuns<T>[], f: (ts: T[]) => number): Pair[] {
  return runs.map((r) => ({
    ref: r.ref.length ? f(r.ref) : NaN,
    now: r.now.length ? f(r.now) : NaN,
  }));
}

/** Starts a bridge of `side` with `args`, stopped at the end at the latest. */
async function bridgeOf(
  side: Side,
  args: string[],
): Promise<BridgeProcess & { close(): Promise<void> }> {
  const b = await startBridgeProcess(args, {}, side.program.rpcArgs);
  return { ...b, close: own(() => b.stop()) };
}

// ---- the figures

async function httpFigures(sides: readonly [Side, Side]): Promise<Figure[]> {
  const { pairs, repeat, seconds, connections } = SIZES.http;
  const anvil = await startAnvil();
  own(() => anvil.stop());
  const key = await tempPrivateKey();
  own(() => Deno.remove(key));
  const flags = [...offlineBridgeFlags(key, anvil.url), "--http", "--quiet"];
  const bridges = new Map<string, BridgeProcess>();
  for (const side of sides) bridges.set(side.name, await bridgeOf(side, flags));
  const load = { connections, seconds };
  const one = { connections: 1, seconds };
  for (const b of bridges.values()) await wrk(b.address, BLOCK_NUMBER, { connections, seconds: 1 });
  // the bridge's CPU time per request too (context: it hardly moves with the machine's load)
  const cpuPerRequest: Record<string, number[]> = { REF: [], now: [] };
  const rps = await paired(sides, pairs, "higher", async (s) => {
    const b = bridges.get(s.name)!;
    const cpu0 = threadsCpuUs(b.process.pid);
    const r = await wrk(b.address, BLOCK_NUMBER, load);
    cpuPerRequest[s.name].push((threadsCpuUs(b.process.pid) - cpu0) / (r.rps * seconds));
    return r.rps;
  }, { repeat });
  // added p50: the bridge's p50 at 1 connection less anvil's, anvil measured first in each pair
  let direct = NaN;
  const added = await paired(sides, pairs, "lower", async (s) => {
    const p50 = (await wrk(bridges.get(s.name)!.address, BLOCK_NUMBER, one)).p50;
    return p50 - direct;
  }, {
    repeat,
    before: async () => {
      direct = (await wrk(anvil.url, BLOCK_NUMBER, one)).p50;
    },
  });
  // context, in the same run: anvil alone and the proxies in front of it
  const context: string[] = [
    `the bridge's CPU time per request at 16 connections, median: REF ${
      median(cpuPerRequest.REF).toFixed(0)
    } µs, now ${median(cpuPerRequest.now).toFixed(0)} µs`,
  ];
  const proxies = [() => startNginx(anvil.port), () => startHaproxy(anvil.port)];
  let proxied = 0;
  const anvilRps = (await wrk(anvil.url, BLOCK_NUMBER, load)).rps;
  const anvilP50 = (await wrk(anvil.url, BLOCK_NUMBER, one)).p50;
  context.push(
    `anvil alone: ${Math.round(anvilRps)} req/s, p50 ${(anvilP50 * 1000).toFixed(0)} µs`,
  );
  for (const startProxy of proxies) {
    const starting = startProxy();
    if (!starting) continue;
    proxied++;
    try {
      const p = await starting;
      const close = own(() => p.stop());
      await wrk(p.url, BLOCK_NUMBER, { connections, seconds: 1 });
      const r = (await wrk(p.url, BLOCK_NUMBER, load)).rps;
      const p50 = (await wrk(p.url, BLOCK_NUMBER, one)).p50;
      const nowRps = median(rps.map((x) => x.now));
      const nowAdded = median(added.map((x) => x.now));
      context.push(
        `${p.description}: ${Math.round(r)} req/s, added p50 ${
          ((p50 - anvilP50) * 1000).toFixed(0)
        } µs; the bridge now: ${(nowRps / r).toFixed(2)}x its req/s, ${
          (nowAdded / (p50 - anvilP50)).toFixed(2)
        }x its added p50`,
      );
      await close();
    } catch (e) {
      context.push(`a proxy failed to start: ${(e as Error).message}`);
    }
  }
  if (proxied === 0) context.push("nginx and HAProxy: not installed (no context)");
  for (const b of bridges.values()) await (b as BridgeProcess & { close(): Promise<void> }).close();
  console.log(`\ncontext (same run, not judged): ${context.join("; ")}`);
  const bridge = "deno <program> rpc --http --quiet <offline flags: anvil, a throwaway key>";
  return [
    {
      figure: "HTTP pass-through, 16 connections",
      unit: "req/s",
      better: "higher",
      command: `wrk -t2 -c${connections} -d${seconds}s -s <POST eth_blockNumber> against ${bridge}`,
      pairs: rps,
    },
    {
      figure: "added p50, 1 connection",
      unit: "ms",
      better: "lower",
      command:
        `wrk -t1 -c1 -d${seconds}s --latency, p50 through the bridge less anvil's own (measured in the same pair)`,
      pairs: added,
    },
  ];
}

async function sendFigure(sides: readonly [Side, Side]): Promise<Figure[]> {
  const { pairs, sends } = SIZES.send;
  const stack = await startStack();
  own(() => stack.stop());
  const flags = [...stack.flags, "--http", "--quiet", "--vaultAccountIds", "0"];
  const bridges = new Map<string, BridgeProcess & { close(): Promise<void> }>();
  for (const side of sides) {
    const b = await bridgeOf(side, flags);
    bridges.set(side.name, b);
    await send(b.address, 0); // warm-up: the signer, the accounts lookup, connections
  }
  let id = 1;
  const result = await paired(sides, pairs, "lower", async (s) => {
    const url = bridges.get(s.name)!.address;
    const times: number[] = [];
    for (let i = 0; i < sends; i++) {
      const t0 = performance.now();
      await send(url, id++);
      times.push(performance.now() - t0);
    }
    return median(times);
  });
  for (const b of bridges.values()) await b.close();
  return [{
    figure: "send through the bridge",
    unit: "ms",
    better: "lower",
    command:
      `median of ${sends} sequential eth_sendTransaction per side and pair, bridge (defaults: 5 ms poll doubling) on the emulator (this checkout's, in process) and anvil`,
    pairs: result,
  }];
}

async function startupFigure(sides: readonly [Side, Side]): Promise<Figure[]> {
  const anvil = await startAnvil();
  own(() => anvil.stop());
  const key = await tempPrivateKey();
  own(() => Deno.remove(key));
  const args = ["rpc", "--http", ...offlineBridgeFlags(key, anvil.url), "--", "true"];
  for (const s of sides) await wallMs(s.program.rpcArgs, args); // warm Deno's caches
  const { pairs, repeat } = SIZES.startup;
  const result = await paired(sides, pairs, "lower", (s) => wallMs(s.program.rpcArgs, args), {
    repeat,
  });
  return [{
    figure: "rpc --http -- true start-up",
    unit: "ms",
    better: "lower",
    command: "deno <program> rpc --http <offline flags> -- true (wall time, clean environment)",
    pairs: result,
  }];
}

async function breakerFigures(sides: readonly [Side, Side], cacheDir: string): Promise<Figure[]> {
  const { pairs, repeat, lines, endpoints } = SIZES.breaker;
  const log = `${cacheDir}/deliveries-${lines}-${endpoints}.ndjson`;
  if (!(await Deno.stat(log).catch(() => undefined))) {
    const t0 = performance.now();
    const partial = `${log}.partial`;
    await generate(partial, { lines, endpoints });
    await Deno.rename(partial, log);
    console.error(`gate: generated ${log} in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  }
  const args = (s: Side) => [...s.program.args, "breaker", "simulate", log, "--format", "ndjson"];
  for (const s of sides) await measure(args(s), false, true); // page cache, Deno's caches
  const runs = await pairedRuns(sides, pairs, async (s) => {
    const m = await measure(args(s), false, true);
    if (m.code !== 0) throw new Error(`breaker simulate exited ${m.code}`);
    return m;
  }, { repeat });
  const cpu = (side: "ref" | "now") =>
    median(runs.flatMap((r) => r[side].map((m) => m.cpuSeconds)));
  console.log(
    `\ncontext (not judged): breaker simulate CPU time (user + system), median: REF ${
      cpu("ref").toFixed(2)
    } s, now ${cpu("now").toFixed(2)} s`,
  );
  const command = `deno <program> breaker simulate <${lines / 1e6}M-line log> --format ndjson`;
  return [
    {
      figure: `breaker simulate, ${lines / 1e6}M lines`,
      unit: "s",
      better: "lower",
      command: `${command} (wall time)`,
      pairs: pick(runs, (ms) => best(ms.map((m) => m.seconds), "lower")),
    },
    {
      figure: `breaker simulate peak memory`,
      unit: "MB",
      better: "lower",
      command: `${command} (peak RSS, VmHWM)`,
      pairs: pick(runs, (ms) => best(ms.map((m) => m.peakRssMb), "lower")),
    },
  ];
}

async function webhookFigure(sides: readonly [Side, Side]): Promise<Figure[]> {
  const { pairs, repeat, n, endpoints } = SIZES.webhooks;
  const rx = new Receiver();
  own(() => rx.shutdown());
  const run = (s: Side) => emulatorRun(rx, "ok", { n, endpoints, program: s.program.args });
  for (const s of sides) {
    await emulatorRun(rx, "ok", { n: 100, endpoints, program: s.program.args });
  }
  const result = await paired(
    sides,
    pairs,
    "higher",
    async (s) => (await run(s)).deliveredPerSecond,
    { repeat },
  );
  return [{
    figure: "webhook deliveries",
    unit: "/s",
    better: "higher",
    command:
      `deno <program> emulator --timeScale 1000 on anvil; ${n} notifications to ${endpoints} endpoints of a receiver answering 200`,
    pairs: result,
  }];
}

async function fanoutFigure(sides: readonly [Side, Side]): Promise<Figure[]> {
  const { pairs, subscribers, seconds } = SIZES.fanout;
  const anvil = await startAnvil(["--block-time", "0.1"]);
  own(() => anvil.stop());
  const key = await tempPrivateKey();
  own(() => Deno.remove(key));
  const flags = [...offlineBridgeFlags(key, anvil.url), "--http", "--quiet"];
  for (const s of sides) await (await bridgeOf(s, flags)).close(); // warm Deno's caches
  const result = await paired(sides, pairs, "lower", async (s) => {
    const b = await bridgeOf(s, flags);
    try {
      const rss = rssSampler(b.process.pid);
      const fan = await subscribe(b.address.replace(/^http:/, "ws:"), subscribers);
      await new Promise((r) => setTimeout(r, seconds * 1000));
      // every subscriber must have had a block (a busy machine may take longer than `seconds`)
      const got = () => fan.seen.filter((x) => x.length > 0).length;
      for (let i = 0; i < 100 && got() < subscribers; i++) {
        await new Promise((r) => setTimeout(r, 100));
      }
      const peak = rss.stop();
      const reached = got();
      await fan.close();
      if (reached < subscribers) {
        throw new Error(`only ${reached} of ${subscribers} subscribers got a block`);
      }
      return peak;
    } finally {
      await b.close();
    }
  });
  return [{
    figure: `newHeads fan-out, ${subscribers} subscribers`,
    unit: "MB",
    better: "lower",
    command:
      `deno <program> rpc --http on anvil --block-time 0.1; ${subscribers} WebSockets subscribe to newHeads, ${seconds} s; the bridge's peak RSS`,
    pairs: result,
  }];
}

// ---- the REF worktree

/** Adds a detached worktree of `sha` under `dir` with this checkout's node_modules linked in. */
async function refWorktree(sha: string, dir: string): Promise<string> {
  const git = async (args: string[]) => {
    const out = await new Deno.Command("git", { args, cwd: ROOT, stdout: "null", stderr: "piped" })
      .output();
    if (!out.success) {
      throw new Error(`git ${args.join(" ")}: ${new TextDecoder().decode(out.stderr).trim()}`);
    }
  };
  const wt = `${dir}/ref`;
  own(async () => {
    // the link first, by itself: removing the worktree must never reach into what it points to
    await Deno.remove(`${wt}/node_modules`).catch(() => {});
    await git(["worktree", "remove", "--force", wt]).catch(() => {});
    await Deno.remove(wt, { recursive: true }).catch(() => {});
    await git(["worktree", "prune"]).catch(() => {});
  });
  await git(["worktree", "add", "--detach", "--quiet", wt, sha]);
  const modules = await Deno.realPath(`${ROOT}node_modules`).catch(() => undefined);
  if (modules) await Deno.symlink(modules, `${wt}/node_modules`);
  return `${wt}/`;
}

async function main(): Promise<number> {
  const { values, positionals } = parseArgs({
    args: Deno.args,
    allowPositionals: true,
    options: { only: { type: "string" } },
  });
  if (positionals.length > 1) {
    console.error("usage: deno task bench:gate [REF] [--only http,send,...]");
    return 2;
  }
  const only = values.only?.split(",").map((x) => x.trim()) ?? [...SECTIONS];
  const unknown = only.filter((x) => !(SECTIONS as readonly string[]).includes(x));
  if (unknown.length) {
    console.error(`gate: unknown section ${unknown.join(", ")} (sections: ${SECTIONS.join(", ")})`);
    return 2;
  }
  const started = performance.now();
  const load0 = Deno.loadavg()[0];
  let choice, sha;
  try {
    choice = chooseRef(positionals[0], await gitFacts(ROOT));
    sha = await commitOf(ROOT, choice.ref);
  } catch (e) {
    console.error(`gate: ${(e as Error).message}`);
    return 2;
  }
  const tmp = await Deno.makeTempDir({ prefix: "service-gate-" });
  own(() => Deno.remove(tmp, { recursive: true }));
  const cacheDir = `${Deno.env.get("TMPDIR") ?? "/tmp"}/service-bench-cache`;
  await Deno.mkdir(cacheDir, { recursive: true });
  try {
    const refRoot = await refWorktree(sha, tmp);
    const dirty = (await new Deno.Command("git", {
      args: ["status", "--porcelain", "--untracked-files=no"],
      cwd: ROOT,
      stdout: "piped",
    }).output()).stdout.length > 0;
    const named = sha.startsWith(choice.ref)
      ? sha.slice(0, 12)
      : `${choice.ref} = ${sha.slice(0, 12)}`;
    console.log(`REF: ${named} (${choice.why}), built in ${refRoot}`);
    console.log(`now: the working tree ${ROOT}${dirty ? " (with uncommitted changes)" : ""}`);
    const [refProgram, nowProgram] = [await benchProgram(refRoot), await benchProgram()];
    own(() => refProgram.cleanup());
    own(() => nowProgram.cleanup());
    console.log(`program REF: deno ${refProgram.args.join(" ")}`);
    console.log(`program now: deno ${nowProgram.args.join(" ")}`);
    console.log(`rpc's V8 flags: REF ${refProgram.rpcV8Flags}, now ${nowProgram.rpcV8Flags}`);
    console.log(
      `pairs alternate the order (REF first, then now first, ...); load average ${
        load0.toFixed(1)
      } at the start`,
    );
    if (load0 > navigator.hardwareConcurrency) {
      console.log(
        `warning: the machine is busy (load ${
          load0.toFixed(1)
        } on ${navigator.hardwareConcurrency} cores): ` +
          "wall-clock figures (req/s, ms, /s) may differ by more than 10% between identical trees",
      );
    }
    const sides = [
      { name: "REF", program: refProgram },
      { name: "now", program: nowProgram },
    ] as const satisfies readonly [Side, Side];
    const run: Record<Section, () => Promise<Figure[]>> = {
      http: () => httpFigures(sides),
      send: () => sendFigure(sides),
      startup: () => startupFigure(sides),
      breaker: () => breakerFigures(sides, cacheDir),
      webhooks: () => webhookFigure(sides),
      fanout: () => fanoutFigure(sides),
    };
    const figures: Figure[] = [];
    const took: string[] = [];
    for (const section of SECTIONS) {
      if (!only.includes(section)) continue;
      const t0 = performance.now();
      const mark = closers.length;
      try {
        figures.push(...await run[section]());
      } catch (e) {
        console.error(`gate: ${section}: ${(e as Error).message}`);
        figures.push({
          figure: `${section} (failed: see above)`,
          unit: "-",
          better: "lower",
          command: "-",
          pairs: [],
        });
      } finally {
        // what the section started, stopped before the next one measures
        while (closers.length > mark) await closers[closers.length - 1]().catch(() => {});
      }
      took.push(`${section} ${((performance.now() - t0) / 1000).toFixed(0)} s`);
    }
    const rows: Row[] = figures.map((f) => ({
      figure: f.figure,
      unit: f.unit,
      judged: judge(f.pairs, f.better),
    }));
    console.log("\ncommands (<program> as above, REF's and now's):");
    for (const f of figures) console.log(`  ${f.figure}: ${f.command}`);
    console.log(`\n${formatTable(rows)}`);
    const ok = passes(rows.map((r) => r.judged.verdict));
    console.log(
      `\ngate: ${ok ? "PASS" : "FAIL"} in ${((performance.now() - started) / 1000).toFixed(0)} s (${
        took.join(", ")
      }); load average ${load0.toFixed(1)} -> ${Deno.loadavg()[0].toFixed(1)}`,
    );
    return ok ? 0 : 1;
  } finally {
    await closeAll();
  }
}

if (import.meta.main) Deno.exit(await main());
