/**
 * A `fetch` for platform calls that never replays a POST by itself.
 *
 * Deno's `fetch` silently re-sends a request when a reused keep-alive
 * connection closes after the request was written (checked: a server that
 * reads a POST and drops the connection sees it twice). For a create that
 * means the same signed token twice (refused as a nonce replay) or, against
 * a server without idempotency, two transactions. POSTs therefore go over a
 * client without an idle pool, so a lost answer surfaces as an error that
 * the custody signer handles (look up by `externalTxId`, retry with the same
 * `Idempotency-Key`). GETs keep the pooled connections (polling is frequent).
 *
 * @module
 */

/**
 * Returns the fetch described above.
 *
 * @example
 * ```ts
 * const f = noReplayFetch();
 * await f("http://127.0.0.1:8080/v1/transactions", { method: "POST", body: "{}" });
 * ```
 */
export function noReplayFetch(base: typeof fetch = fetch): typeof fetch {
  let client: Deno.HttpClient | undefined;
  return (input, init) => {
    const method = (init?.method ?? (input instanceof Request ? input.method : "GET"))
      .toUpperCase();
    if (method === "GET" || method === "HEAD") return base(input, init);
    client ??= Deno.createHttpClient({ poolMaxIdlePerHost: 0 });
    return base(input, { ...init, client } as unknown as RequestInit);
  };
}
