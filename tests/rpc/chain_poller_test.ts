/**
 * The chain poller when the chain is reorganised while a poll is walking it:
 * the poll read the head of the old chain, reported its blocks, and the node
 * reverted and built a new chain before the poll's next request. The poller
 * must drop the old blocks and report the new chain from the fork point (it
 * used to keep comparing the new blocks with the stale head it read at the
 * start, rewinding for ever: a subscriber got no block again and the node was
 * asked without pause). The node is a real anvil; the only hook is the moment
 * the reorganisation happens (just before the poller's check of its cursor),
 * which a real node cannot be asked to choose.
 */
import assert from "node:assert/strict";
import { ChainPoller, type RpcBlock } from "../../lib/rpc/chain_poller.ts";
import { Upstream, UpstreamClient } from "../../lib/rpc/upstream.ts";
import { startAnvil } from "../support/tools.ts";
import { waitFor } from "../support/wait_for.ts";

/** anvil, with `before(body)` run before a request is passed on (once it returns true, no more). */
class HookedNode extends Upstream {
  readonly url: string;
  readonly shownUrl: string;
  readonly inner: UpstreamClient;
  requests = 0;
  /** How many of the last requests in a row read the `latest` block (a poll that found nothing new). */
  latestInARow = 0;
  #before: ((body: string) => Promise<boolean>) | undefined;

  constructor(url: string) {
    super();
    this.url = url;
    this.shownUrl = url;
    this.inner = new UpstreamClient(url);
  }

  /** Runs `hook` before each request until it returns true. */
  hook(hook: (body: string) => Promise<boolean>): void {
    this.#before = hook;
  }

  async send(body: string | Uint8Array): Promise<string> {
    const text = typeof body === "string" ? body : new TextDecoder().decode(body);
    this.requests++;
    const latest = text.includes('"eth_getBlockByNumber"') && text.includes('"latest"');
    this.latestInARow = latest ? this.latestInARow + 1 : 0;
    if (this.#before && await this.#before(text)) this.#before = undefined;
    return await this.inner.send(text);
  }

  close(): void {
    this.inner.close();
  }
}

Deno.test("a reorg that happens while a poll walks the chain: old blocks removed, the new chain reported once", async () => {
  const anvil = await startAnvil();
  const node = new HookedNode(anvil.url);
  const direct = new UpstreamClient(anvil.url);
  const poller = new ChainPoller(node, { intervalMs: 300 });
  const seen: string[] = [];
  try {
    const fork = await direct.request("eth_getBlockByNumber", ["latest", false]) as RpcBlock;
    const forkNumber = Number(fork.number);
    const hex = (n: number) => "0x" + n.toString(16);
    const off = await poller.listen({
      onBlock: (b) => {
        seen.push(`+${Number(b.number) - forkNumber}:${b.hash}`);
      },
      onRemoved: (b) => {
        seen.push(`-${Number(b.number) - forkNumber}:${b.hash}`);
      },
    });
    const snapshot = await direct.request("evm_snapshot");
    await direct.request("anvil_mine", ["0x2"]); // fork+1, fork+2: the old chain
    const old = [
      await direct.request("eth_getBlockByNumber", [hex(forkNumber + 1), false]) as RpcBlock,
      await direct.request("eth_getBlockByNumber", [hex(forkNumber + 2), false]) as RpcBlock,
    ];
    // When the poller, having reported fork+2, checks that it is still there, the node has
    // gone back to the fork and built another chain of three blocks (one transaction makes
    // its first block differ from the old one).
    node.hook(async (body) => {
      if (!body.includes('"eth_getBlockByNumber"') || !body.includes(`"${hex(forkNumber + 2)}"`)) {
        return false;
      }
      if (!seen.some((s) => s.startsWith("+2:"))) return false; // the fetch of fork+2 itself
      assert.equal(await direct.request("evm_revert", [snapshot]), true);
      const [from] = await direct.request("eth_accounts") as string[];
      await direct.request("eth_sendTransaction", [{ from, to: from, value: "0x1" }]);
      await direct.request("anvil_mine", ["0x2"]);
      return true;
    });
    const fresh: RpcBlock[] = [];
    const expected = () => [
      `+1:${old[0].hash}`,
      `+2:${old[1].hash}`,
      `-2:${old[1].hash}`,
      `-1:${old[0].hash}`,
      ...fresh.map((b, i) => `+${i + 1}:${b.hash}`),
    ];
    await waitFor("seven block events", () => seen.length >= 7, 10_000);
    for (let n = 1; n <= 3; n++) {
      fresh.push(
        await direct.request("eth_getBlockByNumber", [hex(forkNumber + n), false]) as RpcBlock,
      );
    }
    assert.notEqual(fresh[0].hash, old[0].hash, "the new chain differs from its first block on");
    assert.deepEqual(seen, expected());
    // and the poller is not still asking: it comes to rest (three polls in a row that each
    // read only the latest block, which a poll still walking or rewinding never does) after a
    // few requests, not thousands
    const before = node.requests;
    await waitFor("the poller at rest (three polls of one request each)", () => {
      return node.latestInARow >= 3;
    });
    assert.ok(node.requests - before < 20, `${node.requests - before} requests before at rest`);
    assert.deepEqual(seen, expected(), "nothing reported twice");
    off();
  } finally {
    poller.close();
    node.close();
    direct.close();
    await anvil.stop();
  }
});
