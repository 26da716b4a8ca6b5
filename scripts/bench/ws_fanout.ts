/**
 * `newHeads` fan-out and a client that never reads, against one
 * `service rpc --http` over an anvil mining every 100 ms:
 *
 * 1. 1,000 WebSocket subscribers (one connection each) on the bridge: each
 *    must receive every block mined while they listen, once, in order. The
 *    same 1,000 on anvil's own WebSocket are the baseline (delivery and
 *    median lateness behind anvil's own push). The bridge's RSS is sampled
 *    throughout (target: under 100 MB).
 * 2. A client that sends `eth_getBlockByNumber` requests as fast as it can
 *    and never reads, on the IPC socket and on the WebSocket: the bridge's
 *    RSS peak over 10 s, against its RSS before (bounded; before the
 *    backpressure work an IPC client took it from 127 MB to 898 MB).
 *
 * The bridge runs as the npm package runs it (`program.ts`: the bundle, the
 * package's permissions and `rpc`'s V8 flags; `BRIDGE_SOURCE=1` and `BRIDGE_V8_FLAGS`
 * change that), started once first to warm Deno's caches.
 *
 * Usage: deno run -A scripts/bench/ws_fanout.ts [subscribers=1000] [seconds=10]
 *
 * @module
 */

import { startAnvil } from "../../tests/support/tools.ts";
import { offlineBridgeFlags, startBridgeProcess, tempPrivateKey } from "../../tests/support/rpc.ts";
import { rawHandshake, sendText } from "../../tests/support/ws_raw.ts";
import { benchProgram } from "./program.ts";
import { rssOf, rssSampler as sampler } from "./proc.ts";

function rssMb(pid: number): number {
  return rssOf(pid).total;
}

/** Subscribers to `newHeads` (one WebSocket each), with what they saw. */
export interface FanOut {
  /** Blocks each subscriber saw (numbers). */
  seen: number[][];
  /** Arrival time per block number (first subscriber), ms. */
  arrivals: Map<number, number[]>;
  close(): Promise<void>;
}

/** Opens `n` WebSockets to `url`, each subscribed to `newHeads` (resolves once all are). */
export async function subscribe(url: string, n: number): Promise<FanOut> {
  const seen: number[][] = [];
  const arrivals = new Map<number, number[]>();
  const sockets: WebSocket[] = [];
  const opening: Promise<void>[] = [];
  for (let i = 0; i < n; i++) {
    const ws = new WebSocket(url);
    const mine: number[] = [];
    seen.push(mine);
    sockets.push(ws);
    opening.push(
      new Promise<void>((resolve, reject) => {
        ws.onerror = () => reject(new Error(`subscriber ${i} failed`));
        ws.onopen = () =>
          ws.send('{"jsonrpc":"2.0","id":1,"method":"eth_subscribe","params":["newHeads"]}');
        ws.onmessage = (e) => {
          const m = JSON.parse(e.data);
          if (m.id === 1) return resolve();
          const number = Number(m.params.result.number);
          mine.push(number);
          const a = arrivals.get(number) ?? [];
          a.push(performance.now());
          arrivals.set(number, a);
        };
      }),
    );
  }
  await Promise.all(opening);
  return {
    seen,
    arrivals,
    async close() {
      // at most 10 s: a busy anvil was seen never to finish closing its 1,000 sockets
      let timer: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([
        Promise.all(sockets.map((ws) =>
          new Promise<void>((r) => {
            ws.onclose = () => r();
            ws.close();
          })
        )),
        new Promise<void>((r) => timer = setTimeout(r, 10_000)),
      ]);
      clearTimeout(timer);
    },
  };
}

/** Checks that every subscriber saw exactly `from..to`, in order. */
function complete(seen: number[][], from: number, to: number): number {
  let ok = 0;
  for (const s of seen) {
    const window = s.filter((b) => b >= from && b <= to);
    if (window.length === to - from + 1 && window.every((b, i) => b === from + i)) ok++;
  }
  return ok;
}

if (import.meta.main) await main();

async function main(): Promise<void> {
  const subscribers = Number(Deno.args[0] ?? 1000);
  const seconds = Number(Deno.args[1] ?? 10);
  const anvil = await startAnvil(["--block-time", "0.1"]);
  const key = await tempPrivateKey();
  const prog = await benchProgram();
  const program = prog.rpcArgs;
  // A first run of new code fills Deno's caches (dependency analysis, V8's code cache) and peaks
  // higher (measured: 74 MB idle against 58 MB); users run warm after their first start.
  await (await startBridgeProcess([...offlineBridgeFlags(key, anvil.url), "--http"], {}, program))
    .stop();
  const bridge = await startBridgeProcess(
    [...offlineBridgeFlags(key, anvil.url), "--http"],
    {},
    program,
  );
  const pid = bridge.process.pid;
  const bridgeWs = bridge.address.replace(/^http:/, "ws:");
  const anvilWs = `ws://127.0.0.1:${anvil.port}`;
  const blockNumber = async () => {
    const r = await fetch(anvil.url, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: '{"jsonrpc":"2.0","id":1,"method":"eth_blockNumber"}',
    });
    return Number((await r.json()).result);
  };
  try {
    const idle = rssMb(pid);
    // 1. fan-out
    const rss = sampler(pid);
    const viaBridge = await subscribe(bridgeWs, subscribers);
    const direct = await subscribe(anvilWs, subscribers);
    const from = (await blockNumber()) + 2;
    await new Promise((r) => setTimeout(r, seconds * 1000));
    const to = (await blockNumber()) - 3; // the last blocks may still be on their way
    // wait until every subscriber (both sides) has seen block `to`, at most 15 s
    const reached = () =>
      [...viaBridge.seen, ...direct.seen].every((s) => s.length > 0 && s[s.length - 1] >= to);
    for (let i = 0; i < 150 && !reached(); i++) await new Promise((r) => setTimeout(r, 100));
    const peak = rss.stop();
    const split = rss.peak();
    const okBridge = complete(viaBridge.seen, from, to);
    const okAnvil = complete(direct.seen, from, to);
    const lateness: number[] = [];
    for (let b = from; b <= to; b++) {
      const mine = viaBridge.arrivals.get(b);
      const theirs = direct.arrivals.get(b);
      if (mine && theirs) {
        mine.sort((x, y) => x - y);
        theirs.sort((x, y) => x - y);
        lateness.push(mine[mine.length >> 1] - theirs[theirs.length >> 1]);
      }
    }
    lateness.sort((a, b) => a - b);
    await viaBridge.close();
    await direct.close();
    console.log(
      `newHeads fan-out: ${subscribers} subscribers, blocks ${from}..${to}, bridge: ${prog.description}, V8 flags: ${
        prog.rpcV8Flags || "V8's defaults"
      }`,
    );
    console.table([{
      blocks: to - from + 1,
      anvil_complete_subscribers: okAnvil,
      bridge_complete_subscribers: okBridge,
      ratio: Number((okBridge / Math.max(1, okAnvil)).toFixed(3)),
      bridge_median_lateness_ms: Number((lateness[lateness.length >> 1] ?? NaN).toFixed(1)),
      bridge_rss_idle_mb: Number(idle.toFixed(1)),
      bridge_rss_peak_mb: Number(peak.toFixed(1)),
      peak_anon_mb: Number(split.anon.toFixed(1)),
      peak_file_backed_mb: Number(split.file.toFixed(1)),
    }]);
    console.log(
      `every subscriber got every block: bridge ${okBridge}/${subscribers}, anvil ${okAnvil}/${subscribers} (${
        okBridge === subscribers ? "yes" : "NO"
      })`,
    );
    console.log(
      `RESULT newHeads fan-out: bridge peak RSS ${peak.toFixed(1)} MB (anonymous ${
        split.anon.toFixed(1)
      }, file-backed code ${split.file.toFixed(1)}), target < 100 MB: ${
        peak < 100 ? "met" : "missed"
      }`,
    );

    // 2. clients that never read
    const rows: Record<string, unknown>[] = [];
    const request = JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "eth_getBlockByNumber",
      params: ["latest", true],
    });
    for (const transport of ["ipc", "ws"] as const) {
      const b = transport === "ipc"
        ? await startBridgeProcess([...offlineBridgeFlags(key, anvil.url)], {}, program)
        : bridge;
      const p = b.process.pid;
      const before = rssMb(p);
      const s = sampler(p);
      const end = Date.now() + seconds * 1000;
      let sent = 0;
      let conn: Deno.Conn;
      if (transport === "ipc") {
        conn = await Deno.connect({ transport: "unix", path: b.address });
        const chunk = new TextEncoder().encode((request + "\n").repeat(100));
        const writing = (async () => {
          try {
            while (Date.now() < end) {
              let o = 0;
              while (o < chunk.length) o += await conn.write(chunk.subarray(o));
              sent += 100;
            }
          } catch { /* closed below */ }
        })();
        await new Promise((r) => setTimeout(r, seconds * 1000));
        conn.close();
        await writing;
      } else {
        const h = await rawHandshake(bridgeWs);
        conn = h.conn;
        try {
          while (Date.now() < end) {
            await sendText(conn, Array(100).fill(request));
            sent += 100;
          }
        } catch { /* dropped by the bridge */ }
        conn.close();
      }
      const peak = s.stop();
      rows.push({
        transport,
        requests_written: sent,
        rss_before_mb: Number(before.toFixed(1)),
        rss_peak_mb: Number(peak.toFixed(1)),
        growth_mb: Number((peak - before).toFixed(1)),
      });
      if (b !== bridge) await b.stop();
    }
    console.log(`a client that never reads, ${seconds} s`);
    console.table(rows);
  } finally {
    await bridge.stop();
    await anvil.stop();
    await Deno.remove(key);
    await prog.cleanup();
  }
}
