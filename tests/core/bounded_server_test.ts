/**
 * What a bounded server tells a handler about a request's connection
 * (`lib/core/bounded_server.ts`): `nextRequest` resolves when the same
 * connection carries its next request (the send book counts an answer as read
 * then, `lib/rpc/send_book.ts`), on a connection's first requests (served by
 * the program's own HTTP/1.1 where upgrades may come) and on the fast server
 * alike; another connection's requests do not resolve it.
 */
import assert from "node:assert/strict";
import { type RequestInfo, serveBounded } from "../../lib/core/bounded_server.ts";
import { nextMacrotask } from "../../lib/core/macrotask.ts";

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** One keep-alive POST on `conn` and its whole answer (`ok`, by Content-Length). */
async function post(conn: Deno.Conn, body: string): Promise<string> {
  await conn.write(
    encoder.encode(
      `POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
    ),
  );
  let text = "";
  const buf = new Uint8Array(4096);
  while (!/\r\n\r\n[\s\S]*ok$/.test(text)) {
    const n = await conn.read(buf);
    if (n === null) throw new Error(`closed after: ${text}`);
    text += decoder.decode(buf.subarray(0, n));
  }
  return text;
}

/** Whether `p` has resolved, after a few event-loop turns. */
async function resolved(p: Promise<void>): Promise<boolean> {
  let done = false;
  p.then(() => done = true);
  for (let i = 0; i < 5; i++) await nextMacrotask();
  return done;
}

for (const upgrades of [true, false]) {
  Deno.test(`bounded server${upgrades ? " (upgrades)" : ""}: a request's nextRequest resolves when its own connection carries the next one`, async () => {
    const infos = new Map<string, RequestInfo>();
    const server = await serveBounded(async (request, info) => {
      infos.set(await request.text(), info);
      return new Response("ok");
    }, { hostname: "127.0.0.1", port: 0, upgrades });
    const a = await Deno.connect({ hostname: "127.0.0.1", port: server.port });
    const b = await Deno.connect({ hostname: "127.0.0.1", port: server.port });
    try {
      for (let i = 1; i <= 3; i++) await post(a, `a${i}`);
      assert.equal(await resolved(infos.get("a1")!.nextRequest), true);
      assert.equal(await resolved(infos.get("a2")!.nextRequest), true);
      const last = infos.get("a3")!.nextRequest;
      await post(b, "b1"); // another connection's request
      assert.equal(await resolved(last), false);
      await post(a, "a4");
      assert.equal(await resolved(last), true);
      assert.equal(await resolved(infos.get("b1")!.nextRequest), false);
    } finally {
      a.close();
      b.close();
      await server.close();
    }
  });
}
