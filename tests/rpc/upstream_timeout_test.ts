/**
 * The node clients' request timeout (HTTP and IPC): a node that takes a request
 * and never answers fails that request with the timeout's message (the sweep
 * armed only while a request is in flight), and a node that answers in time is
 * unaffected. The nodes are real TCP and Unix-socket servers.
 */
import assert from "node:assert/strict";
import { UpstreamClient, UpstreamError } from "../../lib/rpc/upstream.ts";
import { IpcUpstreamClient } from "../../lib/rpc/ipc_upstream.ts";

const ANSWER = '{"jsonrpc":"2.0","id":1,"result":"0x1"}';

/**
 * A node that reads requests and answers (`0x1`) only when `answer` says so: over HTTP on TCP,
 * or as JSON lines on a Unix socket at `ipcPath`.
 */
function node(answer: (request: string) => boolean, ipcPath?: string) {
  const listener = ipcPath
    ? Deno.listen({ transport: "unix", path: ipcPath })
    : Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const reply = new TextEncoder().encode(
    ipcPath
      ? ANSWER + "\n"
      : `HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: ${ANSWER.length}\r\n\r\n${ANSWER}`,
  );
  const conns: Deno.Conn[] = [];
  const served = (async () => {
    for await (const conn of listener) {
      conns.push(conn);
      (async () => {
        const buf = new Uint8Array(64 * 1024);
        try {
          for (;;) {
            const n = await conn.read(buf);
            if (n === null) return;
            if (answer(new TextDecoder().decode(buf.subarray(0, n)))) await conn.write(reply);
          }
        } catch { /* closed */ }
      })();
    }
  })();
  return {
    url: ipcPath ?? `http://127.0.0.1:${(listener.addr as Deno.NetAddr).port}`,
    async close() {
      listener.close();
      for (const c of conns) {
        try {
          c.close();
        } catch { /* closed */ }
      }
      await served.catch(() => {});
    },
  };
}

/** `p`, or a rejection naming `what` after `ms` (so a missing timeout fails instead of hanging). */
async function within<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    return await Promise.race([
      p,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`${what}: still pending after ${ms} ms`)), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

Deno.test("a request the node never answers fails after the timeout, naming it", async () => {
  const silent = node(() => false);
  // 1.5 s: the sweep runs every second, so the request is seen alive once and must be swept again
  const client = new UpstreamClient(silent.url, { timeoutMs: 1500 });
  try {
    const t0 = performance.now();
    await assert.rejects(
      within(client.send('{"jsonrpc":"2.0","id":1,"method":"eth_blockNumber"}'), 5000, "send"),
      (e) => e instanceof UpstreamError && /no answer from the node within 1500 ms/.test(e.message),
    );
    assert.ok(performance.now() - t0 >= 1500, "not before the timeout");
  } finally {
    client.close();
    await silent.close();
  }
});

Deno.test("a second request that hangs after a first answered one still times out", async () => {
  let requests = 0;
  const once = node(() => ++requests === 1);
  const client = new UpstreamClient(once.url, { timeoutMs: 300 });
  try {
    assert.match(await client.send('{"jsonrpc":"2.0","id":1,"method":"eth_chainId"}'), /0x1/);
    await assert.rejects(
      within(client.send('{"jsonrpc":"2.0","id":1,"method":"eth_blockNumber"}'), 5000, "send"),
      (e) => e instanceof UpstreamError && /no answer from the node within 300 ms/.test(e.message),
    );
  } finally {
    client.close();
    await once.close();
  }
});

Deno.test("over IPC too: a request the node never answers fails after the timeout", async () => {
  const dir = await Deno.makeTempDir({ prefix: "ipc-timeout-" });
  let requests = 0;
  const once = node(() => ++requests === 1, `${dir}/node.ipc`); // the first is answered, then silence
  const client = new IpcUpstreamClient(once.url, { timeoutMs: 300 });
  try {
    assert.match(await client.send('{"jsonrpc":"2.0","id":1,"method":"eth_chainId"}'), /0x1/);
    const t0 = performance.now();
    await assert.rejects(
      within(client.send('{"jsonrpc":"2.0","id":2,"method":"eth_blockNumber"}'), 5000, "send"),
      (e) => e instanceof UpstreamError && /no answer from the node within 300 ms/.test(e.message),
    );
    assert.ok(performance.now() - t0 >= 300, "not before the timeout");
  } finally {
    client.close();
    await once.close();
    await Deno.remove(dir, { recursive: true });
  }
});
