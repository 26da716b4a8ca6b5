/**
 * What the one envelope rule costs a single pass-through request: building
 * the request the node gets (`upstreamText`) and putting the caller's id on
 * the node's answer (`answerText`), against, in the same run, the
 * `JSON.parse` of the same body that every transport already does. The
 * end-to-end pass-through (`rpc_passthrough.ts`) is too noisy on a shared
 * machine to show a cost this small; this isolates it. Prints µs per request
 * and the ratio to the parse.
 *
 * Usage: deno run -A scripts/bench/rpc_envelope.ts [iterations=200000]
 *
 * @module
 */

import { answerText, UPSTREAM_ID, upstreamText, validateRequest } from "../../lib/rpc/protocol.ts";
import type { RpcRequest } from "../../lib/rpc/protocol.ts";

const iterations = Number(Deno.args[0] ?? 200_000);

const CASES: Record<string, { body: string; answer: string }> = {
  eth_blockNumber: {
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_blockNumber", params: [] }),
    answer: `{"jsonrpc":"2.0","id":${UPSTREAM_ID},"result":"0x1b4"}`,
  },
  "eth_call 1KB": {
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "eth_call",
      params: [{
        to: "0x5FbDB2315678afecb367f032d93F642f64180aa3",
        data: "0x" + "ab".repeat(500),
      }, "latest"],
    }),
    answer: `{"jsonrpc":"2.0","id":${UPSTREAM_ID},"result":"0x${"00".repeat(32)}"}`,
  },
};

function perCall(fn: () => unknown): number {
  for (let i = 0; i < 10_000; i++) fn(); // warm-up
  const t0 = performance.now();
  for (let i = 0; i < iterations; i++) fn();
  return ((performance.now() - t0) * 1000) / iterations; // µs
}

let sink = 0;
const rows = [];
for (const [name, { body, answer }] of Object.entries(CASES)) {
  const request = validateRequest(JSON.parse(body)) as RpcRequest;
  const parse = perCall(() => {
    sink += (JSON.parse(body) as { id: number }).id;
  });
  const envelope = perCall(() => {
    sink += upstreamText(request, UPSTREAM_ID).length;
    sink += answerText(answer, UPSTREAM_ID, 1).length;
  });
  rows.push({
    method: name,
    parse_us: Number(parse.toFixed(3)),
    envelope_us: Number(envelope.toFixed(3)),
    ratio_to_parse: Number((envelope / parse).toFixed(2)),
  });
}
console.log(`iterations=${iterations} (sink ${sink > 0})`);
console.table(rows);
