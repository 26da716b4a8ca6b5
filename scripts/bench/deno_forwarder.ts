/**
 * The smallest JSON-RPC forwarder Deno can run: `Deno.serve` (the same
 * per-connection HTTP server as the bridge) reading each body as text and
 * sending it to the node through the bridge's own node client
 * (`lib/rpc/upstream.ts`, keep-alive HTTP/1.1), then answering the node's
 * text. No checks, no ids rewritten, no batching. The pass-through benchmark
 * (`passthrough_peers.ts`) runs it beside the bridge as the runtime's floor:
 * what any Deno program pays per request before doing anything of its own.
 *
 * Usage: deno run --allow-net scripts/bench/deno_forwarder.ts NODE_URL PORT
 *
 * @module
 */

import { UpstreamClient } from "../../lib/rpc/upstream.ts";

if (import.meta.main) {
  const [nodeUrl, port] = Deno.args;
  const node = new UpstreamClient(nodeUrl);
  const headers = { "content-type": "application/json" };
  Deno.serve(
    { hostname: "127.0.0.1", port: Number(port), onListen() {} },
    async (request) => new Response(await node.send(await request.text()), { headers }),
  );
}
