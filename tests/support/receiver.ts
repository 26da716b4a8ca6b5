/**
 * A real webhook receiver for tests: `Deno.serve` on port 0 that answers from
 * a script (200, 500, 404, 429, 408, "hang", ...), verifies every request's
 * `Service-Webhook-Signature` against a JWKS fetched from the emulator, and
 * records what it received. The signature is checked with the npm package
 * `jose`, an implementation independent of the project's own verifier (which
 * has its own unit tests), so a bug shared by our signer and our verifier
 * cannot pass here. `refuse()` closes the listening socket so that
 * attempts get a real "connection refused"; `reopen()` listens again on the
 * same port. No mocks: the emulator delivers to it over real HTTP.
 *
 * @module
 */

import { base64url, createLocalJWKSet, flattenedVerify, type JSONWebKeySet } from "jose";

/** One scripted answer: an HTTP status, or "hang" (never answer until closed). */
export type ReceiverAnswer = number | "hang";

/** A request as the receiver saw it. */
export interface Received {
  /** Wall clock ms when the request arrived. */
  at: number;
  path: string;
  body: string;
  json:
    & { id: string; eventType: string; resourceId?: string; webhookId: string }
    & Record<
      string,
      unknown
    >;
  signatureOk: boolean;
  signatureProblem?: string;
  answered: ReceiverAnswer;
}

/**
 * Verifies a detached compact JWS (`<header>..<signature>`, RS512) over the
 * raw body against a JWKS, with `jose`. Returns null when valid, else why not.
 */
export async function joseVerifyDetached(
  header: string | null,
  body: Uint8Array,
  jwks: JSONWebKeySet,
): Promise<string | null> {
  if (!header) return "no signature header";
  const parts = header.split(".");
  if (parts.length !== 3 || parts[1] !== "") return "not a detached JWS (<header>..<signature>)";
  try {
    await flattenedVerify(
      { protected: parts[0], payload: base64url.encode(body), signature: parts[2] },
      createLocalJWKSet(jwks),
      { algorithms: ["RS512"] },
    );
    return null;
  } catch (e) {
    return `jose: ${e instanceof Error ? e.message : String(e)}`;
  }
}

/** Options of {@linkcode startReceiver}. */
export interface ReceiverOptions {
  /**
   * What to answer: an array consumed in order per path (the last entry
   * repeats), or a function of (the 0-based count of requests so far on
   * this path, the parsed body). Default: always 200.
   */
  script?: ReceiverAnswer[] | ((n: number, body: Received["json"]) => ReceiverAnswer);
  /** The JWKS URL to verify signatures against (fetched once, lazily). */
  jwksUrl?: string;
  /** Keep no bodies, only counts (for benchmarks). */
  countOnly?: boolean;
}

/** A running receiver. */
export interface Receiver {
  url: string;
  port: number;
  received: Received[];
  /** Requests received and recorded so far (counted even with countOnly). */
  count: number;
  /** Resolves when `count` reaches n. */
  waitForCount(n: number, timeoutMs?: number): Promise<void>;
  /** Stops listening: attempts get a real connection refused. */
  refuse(): Promise<void>;
  /** Listens again on the same port. */
  reopen(): void;
  close(): Promise<void>;
}

/** Starts a scripted receiver. */
export function startReceiver(opts: ReceiverOptions = {}): Receiver {
  const perPath = new Map<string, number>();
  const received: Received[] = [];
  const hangers = new Set<(v: Response) => void>();
  let jwks: Promise<JSONWebKeySet> | undefined;
  const waiters: { n: number; resolve: () => void }[] = [];
  const state = { count: 0 };
  const handler = async (req: Request): Promise<Response> => {
    const arrived = Date.now();
    const raw = new Uint8Array(await req.arrayBuffer());
    const body = new TextDecoder().decode(raw);
    const path = new URL(req.url).pathname;
    const n = perPath.get(path) ?? 0;
    perPath.set(path, n + 1);
    const counted = () => {
      state.count++;
      for (let i = waiters.length - 1; i >= 0; i--) {
        if (state.count >= waiters[i].n) {
          waiters[i].resolve();
          waiters.splice(i, 1);
        }
      }
    };
    if (opts.countOnly && !opts.script) {
      counted();
      return new Response(null, { status: 200 });
    }
    let json: Received["json"];
    try {
      json = JSON.parse(body);
    } catch {
      json = { id: "", eventType: "", webhookId: "" };
    }
    const script = opts.script;
    const answer: ReceiverAnswer = script === undefined
      ? 200
      : typeof script === "function"
      ? script(n, json)
      : script[Math.min(n, script.length - 1)];
    if (opts.countOnly) {
      counted();
      if (answer === "hang") return new Promise((r) => hangers.add(r));
      return new Response(null, { status: answer });
    }
    let signatureOk = false;
    let signatureProblem: string | undefined = "no JWKS URL given";
    if (opts.jwksUrl) {
      jwks ??= fetch(opts.jwksUrl).then((r) => r.json());
      const problem = await joseVerifyDetached(
        req.headers.get("service-webhook-signature"),
        raw,
        await jwks,
      );
      signatureOk = problem === null;
      signatureProblem = problem ?? undefined;
    }
    received.push({
      at: arrived,
      path,
      body,
      json,
      signatureOk,
      signatureProblem,
      answered: answer,
    });
    counted();
    if (answer === "hang") {
      // answered (503) only when the receiver closes or stops listening
      return new Promise((resolve) => hangers.add(resolve));
    }
    return new Response(answer >= 200 && answer !== 204 && answer !== 304 ? "ok" : null, {
      status: answer,
      headers: answer >= 300 && answer < 400 ? { location: "http://127.0.0.1:9/" } : {},
    });
  };
  const serve = (port: number) =>
    Deno.serve({ hostname: "127.0.0.1", port, onListen() {}, handler });
  let server = serve(0);
  const port = server.addr.port;
  const r: Receiver = {
    url: `http://127.0.0.1:${port}`,
    port,
    received,
    get count() {
      return state.count;
    },
    waitForCount(n, timeoutMs = 30_000) {
      if (state.count >= n) return Promise.resolve();
      return new Promise((resolve, reject) => {
        const t = setTimeout(
          () =>
            reject(new Error(`receiver got ${state.count} of ${n} requests in ${timeoutMs} ms`)),
          timeoutMs,
        );
        waiters.push({
          n,
          resolve: () => {
            clearTimeout(t);
            resolve();
          },
        });
      });
    },
    async refuse() {
      for (const h of hangers) h(new Response(null, { status: 503 }));
      hangers.clear();
      await server.shutdown();
    },
    reopen() {
      server = serve(port);
    },
    async close() {
      for (const h of hangers) h(new Response(null, { status: 503 }));
      hangers.clear();
      await server.shutdown().catch(() => {});
    },
  };
  return r;
}
