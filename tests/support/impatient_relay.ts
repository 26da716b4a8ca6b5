/**
 * A loopback TCP relay in front of a server that cuts a connection when a
 * request on it has had no byte of answer for a given time: a client's
 * patience, shorter than the client's own. forge 1.7.1 sends a broadcast with
 * a fixed 45 s timeout (`--rpc-timeout` is not applied there,
 * foundry-rs/foundry#16587) and retries it four times; through this relay it
 * gives up the same way (the same retries, the same exit), its requests cut
 * after `patienceMs` instead. To the server, a cut request is what forge's own
 * timeout makes of it: the client's connection closes while the answer is
 * awaited.
 *
 * @module
 */

/** A running relay. */
export interface ImpatientRelay {
  /** Its address, `http://127.0.0.1:PORT/`. */
  url: string;
  /** How many connections it cut so far. */
  cuts(): number;
  /** Stops listening and closes every connection. */
  close(): Promise<void>;
}

/**
 * Relays every connection to `targetPort` on 127.0.0.1 (connecting when the client connects, so
 * the server may start later or be replaced by another on the same port). A connection is cut
 * (both sides closed) once the client has sent a byte and the server has sent none for
 * `patienceMs` since; an idle keep-alive connection is never cut.
 */
export function impatientRelay(targetPort: number, patienceMs: number): ImpatientRelay {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const open = new Set<() => void>();
  const pumps: Promise<void>[] = [];
  let cut = 0;
  const relay = async (client: Deno.Conn) => {
    let server: Deno.Conn;
    try {
      server = await Deno.connect({ hostname: "127.0.0.1", port: targetPort });
    } catch {
      client.close();
      return;
    }
    let timer: ReturnType<typeof setTimeout> | undefined;
    let closed = false;
    const close = () => {
      if (closed) return;
      closed = true;
      clearTimeout(timer);
      open.delete(close);
      for (const c of [client, server]) {
        try {
          c.close();
        } catch { /* already closed */ }
      }
    };
    open.add(close);
    const pump = async (from: Deno.Conn, to: Deno.Conn, onChunk: () => void) => {
      const buf = new Uint8Array(64 * 1024);
      try {
        for (;;) {
          const n = await from.read(buf);
          if (n === null) break;
          onChunk();
          let at = 0;
          while (at < n) at += await to.write(buf.subarray(at, n));
        }
      } catch { /* closed by the other side or by a cut */ }
      close();
    };
    await Promise.all([
      pump(client, server, () => {
        timer ??= setTimeout(() => {
          cut++;
          close();
        }, patienceMs);
      }),
      pump(server, client, () => {
        clearTimeout(timer);
        timer = undefined;
      }),
    ]);
  };
  const accepting = (async () => {
    try {
      for await (const c of listener) pumps.push(relay(c));
    } catch { /* listener closed */ }
  })();
  return {
    url: `http://127.0.0.1:${(listener.addr as Deno.NetAddr).port}/`,
    cuts: () => cut,
    async close() {
      listener.close();
      await accepting;
      for (const c of [...open]) c();
      await Promise.all(pumps);
    },
  };
}
