/**
 * The HTTP node client reads every answer layout a node or the proxy in front
 * of it may write: `Content-Length` under any letter case, a chunked body (in
 * pieces that arrive separately), `Connection: close`, HTTP/1.0 with a body
 * that ends with the connection, and a 204. Each node is a real TCP server on
 * loopback that writes its answer by hand.
 */
import assert from "node:assert/strict";
import { UpstreamClient, UpstreamError } from "../../lib/rpc/upstream.ts";

const BODY = '{"jsonrpc":"2.0","id":1,"result":"0x2a"}';
const enc = new TextEncoder();

/** A node answering every request with `parts` (written one by one, a moment apart). */
function node(parts: (n: number) => string[], closeAfter = false) {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  let served = 0;
  const conns = new Set<Deno.Conn>();
  const loop = (async () => {
    for await (const conn of listener) {
      conns.add(conn);
      (async () => {
        const buf = new Uint8Array(64 * 1024);
        try {
          for (;;) {
            const n = await conn.read(buf);
            if (n === null) break;
            for (const p of parts(served++)) {
              await conn.write(enc.encode(p));
              await new Promise((r) => setTimeout(r, 5));
            }
            if (closeAfter) break;
          }
        } catch { /* closed */ }
        conns.delete(conn);
        try {
          conn.close();
        } catch { /* closed */ }
      })();
    }
  })();
  return {
    url: `http://127.0.0.1:${(listener.addr as Deno.NetAddr).port}/`,
    async stop() {
      listener.close();
      for (const c of conns) {
        try {
          c.close();
        } catch { /* closed */ }
      }
      await loop.catch(() => {});
    },
  };
}

/** Sends three requests in turn through a client of `n`'s URL; returns the answers. */
async function threeAnswers(n: ReturnType<typeof node>): Promise<string[]> {
  const client = new UpstreamClient(n.url, { timeoutMs: 5_000 });
  try {
    const out: string[] = [];
    for (let i = 0; i < 3; i++) {
      out.push(await client.send('{"jsonrpc":"2.0","id":1,"method":"eth_chainId"}'));
    }
    return out;
  } finally {
    client.close();
    await n.stop();
  }
}

Deno.test("upstream: Content-Length in any letter case, and other headers around it", async () => {
  const n = node(() => [
    `HTTP/1.1 200 OK\r\nDate: Thu, 26 Nov 2026 00:00:00 GMT\r\nCONTENT-length:  ${BODY.length} \r\n` +
    `Vary: origin\r\nContent-Type: application/json\r\n\r\n${BODY}`,
  ]);
  assert.deepEqual(await threeAnswers(n), [BODY, BODY, BODY]);
});

Deno.test("upstream: an answer arriving in pieces (the head cut mid-line, the body cut), then whole again", async () => {
  const whole = `HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n` +
    `Content-Length:\t${BODY.length}\r\nX-Note: connection close\r\n\r\n${BODY}`;
  const pieces: string[] = [];
  for (let i = 0; i < whole.length; i += 7) pieces.push(whole.slice(i, i + 7));
  const n = node((i) => (i === 1 ? pieces : [whole]));
  assert.deepEqual(await threeAnswers(n), [BODY, BODY, BODY]);
});

Deno.test("upstream: a chunked answer, its chunks arriving separately", async () => {
  const half = BODY.length >> 1;
  const n = node(() => [
    "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n",
    `${half.toString(16)};ext=1\r\n${BODY.slice(0, half)}\r\n`,
    `${(BODY.length - half).toString(16)}\r\n${BODY.slice(half)}\r\n`,
    "0\r\n\r\n",
  ]);
  assert.deepEqual(await threeAnswers(n), [BODY, BODY, BODY]);
});

Deno.test("upstream: Connection: close, and HTTP/1.0 whose body ends with the connection", async () => {
  const closing = node(
    () => [`HTTP/1.1 200 OK\r\nconnection: Close\r\ncontent-length: ${BODY.length}\r\n\r\n${BODY}`],
    true,
  );
  assert.deepEqual(await threeAnswers(closing), [BODY, BODY, BODY]);
  const old = node(
    () => [`HTTP/1.0 200 OK\r\nContent-Type: application/json\r\n\r\n${BODY}`],
    true,
  );
  assert.deepEqual(await threeAnswers(old), [BODY, BODY, BODY]);
});

Deno.test("upstream: a 204 has no body; a 502 page that is not JSON is an UpstreamError", async () => {
  const empty = node(() => ["HTTP/1.1 204 No Content\r\nContent-Length: 0\r\n\r\n"]);
  assert.deepEqual(await threeAnswers(empty), ["", "", ""]);
  const page = "<html>Bad gateway</html>";
  const bad = node(() => [
    `HTTP/1.1 502 Bad Gateway\r\nContent-Type: text/html\r\nContent-Length: ${page.length}\r\n\r\n${page}`,
  ]);
  await assert.rejects(threeAnswers(bad), (e) => {
    assert.ok(e instanceof UpstreamError);
    assert.match(e.message, /HTTP 502/);
    return true;
  });
});

/**
 * A node that reads each request by its `Content-Length` (as a real server
 * does) and answers with the body it got, so a request whose head and body do
 * not agree shows up as a wrong answer or a hang.
 */
function echoNode() {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const dec = new TextDecoder();
  let connections = 0;
  const loop = (async () => {
    for await (const conn of listener) {
      connections++;
      (async () => {
        let buf = new Uint8Array(0);
        const more = async () => {
          const chunk = new Uint8Array(64 * 1024);
          const n = await conn.read(chunk);
          if (n === null) return false;
          const next = new Uint8Array(buf.length + n);
          next.set(buf);
          next.set(chunk.subarray(0, n), buf.length);
          buf = next;
          return true;
        };
        try {
          for (;;) {
            let end: number;
            while ((end = dec.decode(buf).indexOf("\r\n\r\n")) === -1) if (!(await more())) return;
            const head = dec.decode(buf.subarray(0, end)); // ASCII: string and byte offsets agree
            const length = Number(/content-length: *(\d+)/i.exec(head)![1]);
            while (buf.length < end + 4 + length) if (!(await more())) return;
            const body = buf.slice(end + 4, end + 4 + length);
            buf = buf.slice(end + 4 + length);
            const answer = enc.encode(
              JSON.stringify({ jsonrpc: "2.0", id: 1, result: dec.decode(body) }),
            );
            await conn.write(
              enc.encode(`HTTP/1.1 200 OK\r\nContent-Length: ${answer.length}\r\n\r\n`),
            );
            await conn.write(answer);
          }
        } catch {
          /* closed */
        } finally {
          try {
            conn.close();
          } catch { /* closed */ }
        }
      })();
    }
  })();
  return {
    url: `http://127.0.0.1:${(listener.addr as Deno.NetAddr).port}/`,
    connections: () => connections,
    async stop() {
      listener.close();
      await loop.catch(() => {});
    },
  };
}

Deno.test("upstream: requests of every size and script on one kept-alive connection arrive whole (the reused write buffer)", async () => {
  const n = echoNode();
  const client = new UpstreamClient(n.url, { timeoutMs: 5_000 });
  try {
    // small after large after small, multi-byte characters (é: 2 bytes, 😀: 4), the limit of
    // the reused buffer (16,384 UTF-16 units) on both sides, and one far above it
    const bodies = [
      '{"a":1}',
      "é".repeat(16_384),
      '{"b":2}',
      "😀".repeat(8_192), // 16,384 units, 32,768 bytes
      "x".repeat(16_385),
      "€".repeat(300_000),
      "z",
    ];
    for (const body of bodies) {
      const answer = JSON.parse(await client.send(body));
      assert.equal(answer.result.length, body.length);
      assert.equal(answer.result, body);
    }
    assert.equal(n.connections(), 1);
  } finally {
    client.close();
    await n.stop();
  }
});
