/**
 * `Idempotency-Key` on POST: the first answer to a key is kept for 24 hours
 * and given again (with `Idempotent-Replayed: true`) to every later request
 * with that key; a request that arrives while the first is still running
 * waits for its answer instead of running twice. Answers worth a retry
 * (5xx, 408, 429: the client's own rule, `isRetryableStatus`) are not kept,
 * so a retry runs again instead of being given the same failure.
 *
 * A key is scoped to the API user, the method and the path: the same key on
 * another route (or from another user) is another key. Within its scope, a
 * reuse with a different body is refused (400 naming the key) rather than
 * answered with the first request's answer, as the platform does: a client
 * must never be told that a request it did not send was carried out.
 *
 * The records are the `idempotency` table: one row per scoped key (a hash,
 * never the API key itself) with the answer given (status, body, headers)
 * and the hash of the request body.
 *
 * @module
 */

import type { DatabaseSync, StatementSync } from "node:sqlite";
import { ApiError, ErrorCode, type Reply } from "./reply.ts";
import { isRetryableStatus } from "../../platform/errors.ts";
import { sha256Hex } from "../../platform/jwt.ts";

/** How long an idempotency record answers, ms. */
export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;

const SCHEMA = `
CREATE TABLE IF NOT EXISTS idempotency (
  key TEXT PRIMARY KEY,
  method TEXT NOT NULL,
  path TEXT NOT NULL,
  status INTEGER NOT NULL,
  body TEXT,
  created_at INTEGER NOT NULL,
  headers TEXT
);
`;

/** A kept answer: JSON texts, `bodyHash` `null` in records made before it was kept. */
type KeptAnswer = {
  status: number;
  body: string | null;
  headers: string | null;
  createdAt: number;
  bodyHash: string | null;
};

/**
 * Runs requests at most once per key.
 *
 * @example
 * ```ts
 * import type { Reply } from "./reply.ts";
 * import type { RouteRequest } from "./router.ts";
 * import type { Store } from "../store.ts";
 * declare const store: Store, req: RouteRequest;
 * declare function create(req: RouteRequest): Promise<Reply>; // the route's own work
 * const once = new Idempotency(store.db, Date.now);
 * const reply = await once.run("k1", "POST", "/v1/transactions", () => create(req));
 * ```
 */
export class Idempotency {
  readonly #select: StatementSync;
  readonly #upsert: StatementSync;
  readonly #now: () => number;
  readonly #inflight = new Map<string, { reply: Promise<Reply>; bodyHash: string }>();

  /** Keeps the answers in `db` (creating the table when missing); `now` is the clock (ms). */
  constructor(db: DatabaseSync, now: () => number) {
    db.exec(SCHEMA);
    // state files made before a replay kept its headers and its request's body hash
    for (const column of ["headers", "body_hash"]) {
      try {
        db.exec(`ALTER TABLE idempotency ADD COLUMN ${column} TEXT`);
      } catch { /* already there */ }
    }
    this.#select = db.prepare(
      `SELECT status, body, headers, created_at AS createdAt, body_hash AS bodyHash
       FROM idempotency WHERE key = ?`,
    );
    this.#upsert = db.prepare(
      `INSERT OR REPLACE INTO idempotency (key, method, path, status, body, created_at, headers, body_hash)
       VALUES (:key, :method, :path, :status, :body, :createdAt, :headers, :bodyHash)`,
    );
    this.#now = now;
  }

  /**
   * The kept answer of `key` when there is one, else the answer of `work`
   * (kept unless it is worth a retry): when it returns, or earlier when `work` calls the
   * `keep` it is given (in the SQLite transaction of what it creates). `key` undefined: just `work()`.
   * `scope.user` (the API key) and `method path` scope the key; `scope.body`
   * (the raw request body) must be the same as the first request's.
   */
  async run(
    key: string | undefined,
    method: string,
    path: string,
    work: (keep: (reply: Reply) => void) => Promise<Reply>,
    scope: { user?: string; body?: Uint8Array } = {},
  ): Promise<Reply> {
    if (!key) return await work(() => {});
    // the stored key holds no API key, only its hash
    const [scoped, bodyHash] = await Promise.all([
      sha256Hex(`${scope.user ?? ""}\n${method}\n${path}\n${key}`),
      sha256Hex(scope.body ?? new Uint8Array()),
    ]);
    const refuse = () => {
      throw new ApiError(
        400,
        `Idempotency-Key ${
          JSON.stringify(key.slice(0, 100))
        } was already used for ${method} ${path} with a different body; use a new key for a new request.`,
        ErrorCode.badRequest,
      );
    };
    const pending = this.#inflight.get(scoped);
    if (pending) {
      if (pending.bodyHash !== bodyHash) refuse();
      return await pending.reply;
    }
    const kept = this.#select.get(scoped) as KeptAnswer | undefined;
    if (kept && this.#now() - kept.createdAt < IDEMPOTENCY_TTL_MS) {
      if (kept.bodyHash !== null && kept.bodyHash !== bodyHash) refuse();
      return {
        status: kept.status,
        body: kept.body === null ? undefined : JSON.parse(kept.body),
        headers: {
          ...(kept.headers ? JSON.parse(kept.headers) : {}),
          "Idempotent-Replayed": "true",
        },
      };
    }
    let keptNow = false;
    // synchronous: `work` may call it inside the SQLite transaction of what it creates
    const keep = (reply: Reply) => {
      keptNow = true;
      if (isRetryableStatus(reply.status)) return;
      this.#upsert.run({
        key: scoped,
        method,
        path,
        status: reply.status,
        body: reply.body === undefined ? null : JSON.stringify(reply.body),
        headers: reply.headers ? JSON.stringify(reply.headers) : null,
        createdAt: this.#now(),
        bodyHash,
      });
    };
    const p = (async () => {
      const reply = await work(keep);
      if (!keptNow) keep(reply);
      return reply;
    })();
    this.#inflight.set(scoped, { reply: p, bodyHash });
    try {
      return await p;
    } finally {
      this.#inflight.delete(scoped);
    }
  }
}
