/**
 * A small WebSocket load generator: `C` connections, each sending one
 * request and waiting for its answer, for `D` seconds (the closed loop wrk
 * and ipc_load.ts run). Prints `{"rps":..,"p50_ms":..,"p99_ms":..,"errors":..}`.
 *
 * Usage: deno run -A scripts/bench/ws_load.ts <ws-url> <body-json> [connections=16] [seconds=5]
 *
 * @module
 */

const [url, body, connArg, secArg] = Deno.args;
if (!url || !body) {
  console.error("usage: ws_load.ts <ws-url> <body-json> [connections] [seconds]");
  Deno.exit(2);
}
const connections = Number(connArg ?? 16);
const seconds = Number(secArg ?? 5);
const latencies: number[] = [];
let errors = 0;
const end = performance.now() + seconds * 1000;

async function worker(): Promise<void> {
  const ws = new WebSocket(url);
  await new Promise<void>((resolve, reject) => {
    ws.onopen = () => resolve();
    ws.onerror = () => reject(new Error(`cannot connect to ${url}`));
  });
  await new Promise<void>((done) => {
    let t0 = 0;
    const next = () => {
      if (performance.now() >= end) {
        ws.onclose = () => done();
        ws.close();
        return;
      }
      t0 = performance.now();
      ws.send(body);
    };
    ws.onmessage = (e) => {
      if (String(e.data).includes('"error"')) errors++;
      latencies.push(performance.now() - t0);
      next();
    };
    ws.onerror = () => {
      errors++;
      done();
    };
    next();
  });
}

const t0 = performance.now();
await Promise.all(Array.from({ length: connections }, worker));
const elapsed = (performance.now() - t0) / 1000;
latencies.sort((a, b) => a - b);
const q = (p: number) =>
  latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))];
console.log(JSON.stringify({
  rps: Math.round(latencies.length / elapsed),
  p50_ms: Number(q(0.5).toFixed(3)),
  p99_ms: Number(q(0.99).toFixed(3)),
  errors,
}));
