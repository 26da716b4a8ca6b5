/**
 * A small IPC load generator (wrk has no Unix-socket JSON mode): `C`
 * connections, each sending one request and waiting for its answer, for `D`
 * seconds. Prints `{"rps":..,"p50_ms":..,"p99_ms":..,"errors":..}`.
 *
 * Usage: deno run -A scripts/bench/ipc_load.ts <socket> <body-json> [connections=16] [seconds=5]
 *
 * @module
 */

const [path, body, connArg, secArg] = Deno.args;
if (!path || !body) {
  console.error("usage: ipc_load.ts <socket> <body-json> [connections] [seconds]");
  Deno.exit(2);
}
const connections = Number(connArg ?? 16);
const seconds = Number(secArg ?? 5);
const payload = new TextEncoder().encode(body.trim() + "\n");
const latencies: number[] = [];
let errors = 0;
const end = performance.now() + seconds * 1000;

async function worker(): Promise<void> {
  const conn = await Deno.connect({ transport: "unix", path });
  const buf = new Uint8Array(1 << 20);
  while (performance.now() < end) {
    const t0 = performance.now();
    let o = 0;
    while (o < payload.length) o += await conn.write(payload.subarray(o));
    // read one newline-terminated answer
    let got = false;
    while (!got) {
      const n = await conn.read(buf);
      if (n === null) {
        errors++;
        return;
      }
      if (buf.subarray(0, n).includes(10)) got = true;
    }
    latencies.push(performance.now() - t0);
  }
  conn.close();
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
