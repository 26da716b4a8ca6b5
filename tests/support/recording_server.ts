/**
 * A real local HTTP server that records every request (method, path, query,
 * headers, exact body bytes) and answers from a script. Used to test the
 * platform client's wire behaviour; it is a real server, not a mock of fetch.
 *
 * @module
 */

import { loadCredentials, PlatformClient } from "../../lib/platform/mod.ts";
import { makeTestKeys } from "./keys.ts";

/** One recorded request. */
export interface Recorded {
  method: string;
  path: string;
  search: string;
  headers: Headers;
  body: Uint8Array;
}

/** What the script answers. */
export type Answer = { status: number; body?: unknown; headers?: Record<string, string> };

/** A running recording server. */
export interface RecordingServer {
  url: string;
  requests: Recorded[];
  /** Answers for the next requests, in order; afterwards `fallback`. */
  script: Answer[];
  fallback: Answer;
  close(): Promise<void>;
}

/** Starts a recording server on 127.0.0.1, port 0. */
export function startRecordingServer(
  fallback: Answer = { status: 200, body: {} },
): RecordingServer {
  const state: RecordingServer = {
    url: "",
    requests: [],
    script: [],
    fallback,
    close: async () => {},
  };
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
    const u = new URL(req.url);
    const body = new Uint8Array(await req.arrayBuffer());
    state.requests.push({
      method: req.method,
      path: u.pathname,
      search: u.search,
      headers: req.headers,
      body,
    });
    const answer = state.script.length ? state.script.shift()! : state.fallback;
    const headers = new Headers({
      "X-Request-ID": `req-${state.requests.length}`,
      ...answer.headers,
    });
    if (answer.body === undefined) return new Response(null, { status: answer.status, headers });
    headers.set("content-type", "application/json");
    return new Response(JSON.stringify(answer.body), { status: answer.status, headers });
  });
  state.url = `http://127.0.0.1:${server.addr.port}`;
  state.close = () => server.shutdown();
  return state;
}

/** A platform client for `url` (a recording server) with a throw-away key, without retries. */
export async function clientFor(url: string): Promise<PlatformClient> {
  const keys = await makeTestKeys();
  const creds = await loadCredentials({
    apiKey: "3f1d2c4b-0000-4000-8000-00000000abcd",
    privateKey: keys.pkcs8Pem,
    apiBaseUrl: url,
  });
  return new PlatformClient(creds, { retries: 0 });
}
