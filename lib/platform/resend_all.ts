/**
 * Resending every notification of a window (the console's "Resend
 * notifications"): {@linkcode resendAll} makes one bulk call (resend by query)
 * for a window the platform takes (at most 24 hours), else, or when the
 * platform does not serve it (404, 405), lists the window and resends it
 * one by one: at most `concurrency` at a time, as the listing
 * streams in: only the page being read and the resends in flight are held,
 * never the whole list; at most `max` are taken (more ends the run,
 * `overMax`). The platform client retries 5xx, 429 and network errors,
 * honouring `Retry-After`; a 4xx is counted as refused and the run goes on;
 * anything else ends it (`fatal`).
 *
 * Each notification's `Idempotency-Key` is {@linkcode resendKey} of a run
 * key, the webhook id and the notification id, so a run that is interrupted
 * and started again with the same run key does not resend twice what the
 * first one sent: the platform answers the repeated keys from its
 * idempotency record (24 hours). Repeats the platform flags
 * (`Idempotent-Replayed: true`) are counted as `replayed`.
 *
 * @module
 */

import { NOTIFICATION_STATUSES } from "../core/mod.ts";
import type { PlatformClient } from "./client.ts";
import { PlatformApiError } from "./errors.ts";
import { sha256Hex } from "./jwt.ts";
import { listNotifications, resendByQuery, resendNotification } from "./webhooks.ts";
import type { ResendQuery } from "./webhooks.ts";

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const KNOWN: ReadonlySet<string> = new Set(NOTIFICATION_STATUSES);

/**
 * Notifications counted by status: only the statuses of the vocabulary, so a
 * platform's own words cannot grow the tally.
 *
 * @example
 * ```ts
 * const tally = new StatusTally();
 * for (const s of ["FAILED", "FAILED", "SOMETHING_NEW"]) tally.add(s);
 * tally.counts(); // { FAILED: 2 }
 * ```
 */
export class StatusTally {
  #by: Record<string, number> = {};
  /** Counts one notification of `status`. */
  add(status: string): void {
    if (KNOWN.has(status)) this.#by[status] = (this.#by[status] ?? 0) + 1;
  }
  /** The counts in the vocabulary's order, without zeros. */
  counts(): Record<string, number> {
    return Object.fromEntries(
      NOTIFICATION_STATUSES.filter((s) => this.#by[s]).map((s) => [s, this.#by[s]]),
    );
  }
}

/**
 * The `Idempotency-Key` of one notification's resend in a run: a SHA-256 of
 * the run key, the webhook id and the notification id, written as a UUID.
 *
 * @example
 * ```ts
 * await resendKey("w1:2026-01-01T00:00:00.000Z", "w1", "n1"); // "1f0c...-...."
 * ```
 */
export async function resendKey(runKey: string, webhookId: string, id: string): Promise<string> {
  const h = await sha256Hex(`service notifications resend-all\n${runKey}\n${webhookId}\n${id}`);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-5${h.slice(13, 16)}-${
    ((parseInt(h[16], 16) & 3) | 8).toString(16)
  }${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

/**
 * The default run key: the webhook and the window's start, rounded down to the hour, so a
 * re-run in the same hour with the same start continues the first without resending twice.
 *
 * @example
 * ```ts
 * defaultRunKey("w1", Date.parse("2026-01-01T10:20:00Z")); // "w1:2026-01-01T10:00:00.000Z"
 * ```
 */
export function defaultRunKey(webhookId: string, since: number): string {
  return `${webhookId}:${new Date(Math.floor(since / HOUR) * HOUR).toISOString()}`;
}

/** What {@linkcode resendAll} resends: `webhookId`'s notifications created from `since` to `now`. */
export interface ResendAllRun {
  /** The endpoint. */
  webhookId: string;
  /** The window's start, epoch ms. */
  since: number;
  /** The window's end, epoch ms. */
  now: number;
  /** Only these statuses (empty: every status), events (empty: all), resource. */
  filters: { statuses: string[]; events: string[]; resourceId?: string };
  /** List and count only, resend nothing. */
  dryRun?: boolean;
  /** The bulk call's `Idempotency-Key`; one by one, the run key (else {@linkcode defaultRunKey}). */
  idempotencyKey?: string;
  /** One by one: resends in flight at once. */
  concurrency: number;
  /** Listed: the most notifications taken; more ends the run with `overMax`. */
  max: number;
  /** Settles (with why) when the run should stop taking new notifications. */
  stopped?: Promise<string>;
  /** The bulk call was refused with `status` (404 or 405): one by one follows. */
  onFallback?: (status: number) => void | Promise<void>;
  /** One by one starts, with its run key. */
  onOneByOne?: (runKey: string) => void | Promise<void>;
  /** After each resend (`dryRun`: each page listed): how many are done of how many are known. */
  onProgress?: (done: number, total: number) => void | Promise<void>;
}

/** How a listed (`dryRun` or one-by-one) {@linkcode resendAll} run went. */
export interface OneByOneResult {
  /** Notifications taken from the listing. */
  taken: number;
  /** Resent now. */
  resent: number;
  /** Answered from the platform's idempotency record (resent by an earlier run). */
  replayed: number;
  /** Refused with a 4xx. */
  refused: number;
  /** The first refusal: `id: message`. */
  firstRefused?: string;
  /** The taken notifications by (known) status. */
  statuses: Record<string, number>;
  /** The listing held more than `max`. */
  overMax: boolean;
  /** What ended the run early (a listing or platform error), if anything did. */
  fatal?: unknown;
  /** Why it was stopped, if it was. */
  stopped?: string;
}

/** How a {@linkcode resendAll} run went, by the path it took (`total`: matched, or listed). */
export type ResendAllResult =
  | { path: "query"; total: number; jobId?: string; idempotencyKey?: string }
  | { path: "dryRun" | "oneByOne"; total: number; runKey: string } & OneByOneResult;

/**
 * Resends (or with `dryRun` counts) `run.webhookId`'s notifications of the window. Listed, it
 * never throws (see `fatal`); the bulk call throws what the platform answers.
 *
 * @example
 * ```ts
 * import type { PlatformClient } from "./mod.ts";
 * declare const client: PlatformClient;
 * const now = Date.now();
 * const r = await resendAll(client, {
 *   webhookId: "w1",
 *   since: now - 3_600_000,
 *   now,
 *   filters: { statuses: ["FAILED"], events: [] },
 *   concurrency: 4,
 *   max: 100_000,
 * });
 * if (r.path === "query") console.log(`job ${r.jobId}: ${r.total} to resend`);
 * ```
 */
export async function resendAll(
  client: PlatformClient,
  run: ResendAllRun,
): Promise<ResendAllResult> {
  const { webhookId, since, filters: f } = run;
  const filters: ResendQuery = {
    statuses: f.statuses.length ? f.statuses : [...NOTIFICATION_STATUSES],
    events: f.events.length ? f.events : undefined,
    resourceId: f.resourceId,
  };
  if (run.now - since <= DAY && !run.dryRun) {
    try {
      const body = { ...filters, startTime: since, endTime: run.now };
      const r = await resendByQuery(client, webhookId, body, run.idempotencyKey);
      const { jobId, idempotencyKey } = r;
      return { path: "query", total: r.data.total ?? 0, jobId, idempotencyKey };
    } catch (e) {
      // a platform without the bulk call: one by one
      if (!(e instanceof PlatformApiError && (e.status === 404 || e.status === 405))) throw e;
      await run.onFallback?.(e.status);
    }
  }
  let listed = 0;
  const query = { startTime: since, sortBy: "createdAt", order: "ASC", pageSize: 100, ...filters };
  const iterator = listNotifications(client, webhookId, query, (page) => {
    listed += page.data.length;
    if (run.dryRun) void run.onProgress?.(0, listed);
  });
  const runKey = run.idempotencyKey ?? defaultRunKey(webhookId, since);
  if (!run.dryRun) await run.onOneByOne?.(runKey);
  const o = { taken: 0, resent: 0, replayed: 0, refused: 0, overMax: false } as OneByOneResult;
  void run.stopped?.then((why) => o.stopped = why);
  const tally = new StatusTally();
  let listing: Promise<IteratorResult<{ id: string; status: string }>> | undefined;
  /** The next listed notification, one reader at a time; undefined at the end. */
  const nextId = async (): Promise<string | undefined> => {
    const previous = listing ?? Promise.resolve(undefined);
    const mine = previous.then(() => iterator.next());
    listing = mine.catch(() => ({ done: true, value: undefined }));
    const r = await mine;
    if (r.done || o.overMax) return undefined;
    if (++o.taken > run.max) {
      o.overMax = true;
      return undefined;
    }
    tally.add(r.value.status);
    return r.value.id;
  };
  const worker = async () => {
    while (o.stopped === undefined && o.fatal === undefined && !o.overMax) {
      let id: string | undefined;
      try {
        id = await nextId();
      } catch (e) {
        o.fatal ??= e;
        return;
      }
      if (id === undefined) return;
      if (run.dryRun) continue;
      try {
        const key = await resendKey(runKey, webhookId, id);
        const r = await resendNotification(client, webhookId, id, key);
        if (r.headers.get("idempotent-replayed") === "true") o.replayed++;
        else o.resent++;
      } catch (e) {
        if (e instanceof PlatformApiError && e.status >= 400 && e.status < 500) {
          o.refused++;
          o.firstRefused ??= `${id}: ${e.message}`;
        } else o.fatal ??= e;
      }
      await run.onProgress?.(o.resent + o.replayed + o.refused, Math.max(o.taken, listed));
    }
  };
  try {
    await Promise.all(Array.from({ length: run.concurrency }, worker));
  } finally {
    await iterator.return?.(undefined).catch(() => {});
  }
  const path = run.dryRun ? "dryRun" as const : "oneByOne" as const;
  return { ...o, path, total: Math.max(o.taken, listed), runKey, statuses: tally.counts() };
}
