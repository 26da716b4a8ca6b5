/**
 * `Idempotency-Key` on POST: the first answer to a key is kept for 24 hours
 * and given again (with `Idempotent-Replayed: true`) to every later request
 * with that key; a request that arrives while the first is still running
 * waits for its answer instead of running twice. Answers worth a retry
 * (5xx, 408, 429: the client's own rule, `isRetryableStatus`) are not kept,
 * so a retry runs again instead of being given the same failure.
 *
 * @module
 */

import type { Reply } from "./reply.ts";
import type { IdempotencyStore } from "./idempotency_store.ts";
import { isRetryableStatus } from "../../platform/retryable_status.ts";

/** How long an idempotency record answers, ms. */
export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;

/**
 * Runs requests at most once per key.
 *
 * @example
 * ```ts
 * import { IdempotencyStore } from "./idempotency_store.ts";
 * import type { Reply } from "./reply.ts";
 * import type { RouteRequest } from "./router.ts";
 * import type { Store } from "../store.ts";
 * declare const store: Store, req: RouteRequest;
 * declare function create(req: RouteRequest): Promise<Reply>; // the route's own work
 * const once = new Idempotency(new IdempotencyStore(store.db), Date.now);
 * const reply = await once.run("k1", "POST", "/v1/transactions", () => create(req));
 * ```
 */
export class Idempotency {
  readonly #records: IdempotencyStore;
  readonly #now: () => number;
  readonly #inflight = new Map<string, Promise<Reply>>();

  /** `records` holds the answers; `now` is the clock (ms). */
  constructor(records: IdempotencyStore, now: () => number) {
    this.#records = records;
    this.#now = now;
  }

  /**
   * The kept answer of `key` when there is one, else the answer of `work`
   * (kept unless it is worth a retry). `key` undefined: just `work()`.
   */
  async run(
    key: string | undefined,
    method: string,
    path: string,
    work: () => Promise<Reply>,
  ): Promise<Reply> {
    if (!key) return await work();
    const pending = this.#inflight.get(key);
    if (pending) return await pending;
    const kept = this.#records.get(key);
    if (kept && this.#now() - kept.createdAt < IDEMPOTENCY_TTL_MS) {
      return {
        status: kept.status,
        body: kept.body === null ? undefined : JSON.parse(kept.body),
        headers: {
          ...(kept.headers ? JSON.parse(kept.headers) : {}),
          "Idempotent-Replayed": "true",
        },
      };
    }
    const p = (async () => {
      const reply = await work();
      if (!isRetryableStatus(reply.status)) {
        this.#records.put(key, method, path, {
          status: reply.status,
          body: reply.body === undefined ? null : JSON.stringify(reply.body),
          headers: reply.headers ? JSON.stringify(reply.headers) : null,
          createdAt: this.#now(),
        });
      }
      return reply;
    })();
    this.#inflight.set(key, p);
    try {
      return await p;
    } finally {
      this.#inflight.delete(key);
    }
  }
}
