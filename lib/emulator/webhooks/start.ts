/**
 * The emulator's webhook side in one object, so that wiring it into the
 * emulator is a handful of lines: tables in the emulator's database, the
 * signing key (kept in its meta values, so `--state` keeps the JWKS stable
 * across restarts), the delivery engine (also the events sink), the
 * notification pager. Its HTTP routes are in `routes.ts` (the API and admin endpoints) and
 * `console_routes.ts` (the console's JSON).
 *
 * @module
 */

import type { Store } from "../store.ts";
import { SnapshotPager } from "./notification_paging.ts";
import { WebhookEngine, type WebhookEngineOptions } from "./engine.ts";
import { type Jwks, WebhookSigner } from "./signer.ts";
import { type WebhookQueries, WebhookStore } from "./store.ts";

/** Options of {@linkcode startWebhooks}. */
export interface WebhooksOptions extends
  Pick<
    WebhookEngineOptions,
    "deliveryTimeoutMs" | "concurrency" | "breaker" | "timeScale" | "log" | "now" | "consoleUrl"
  > {
  /** The emulator's store (a file with `--state`, else in memory). */
  store: Store;
}

/** The running webhook side; see {@linkcode startWebhooks}. */
export interface Webhooks {
  /** The delivery engine. */
  engine: WebhookEngine;
  /** What the routes read (the store's read side). */
  queries: WebhookQueries;
  /** Stable paging of notification lists. */
  pager: SnapshotPager;
  /** The JWKS document to serve at `/.well-known/jwks.json`. */
  jwks(): Jwks;
}

const KEY_META = "signing_key_jwk";

/**
 * Creates the tables, loads or makes the signing key, and starts delivering
 * what is due (after a restart: what was pending).
 *
 * @example
 * ```ts
 * import { Store } from "../store.ts";
 * const store = Store.open();
 * const io = { log: (line: string) => console.error(line) };
 * const webhooks = await startWebhooks({ store, timeScale: 1000, log: (l) => io.log(l) });
 * webhooks.engine.endpoints.create({ url: "http://127.0.0.1:8080/hook", events: ["transaction.created"] });
 * ```
 */
export async function startWebhooks(opts: WebhooksOptions): Promise<Webhooks> {
  const store = new WebhookStore(opts.store.db);
  // a state file of an earlier version keeps the key in its own wh_meta table
  const stored = opts.store.getMeta(KEY_META) ?? store.legacyMeta(KEY_META);
  const signer = stored
    ? await WebhookSigner.fromPrivateJwk(JSON.parse(stored))
    : await WebhookSigner.generate();
  opts.store.setMeta(KEY_META, JSON.stringify(signer.toPrivateJwk()));
  const now = opts.now ?? Date.now;
  const engine = new WebhookEngine({ ...opts, store, signer, now });
  engine.start();
  return {
    engine,
    queries: store,
    pager: new SnapshotPager(now),
    jwks: () => signer.jwks(),
  };
}
