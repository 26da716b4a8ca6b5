/**
 * Resending a listing of notifications one by one (Resend Notification), at
 * most `concurrency` at a time, as the listing streams in: only the page
 * being read and the resends in flight are held, never the whole list; at
 * most `max` are taken (more ends the run, `overMax`). The platform client
 * retries 5xx, 429 and network errors, honouring `Retry-After`; a 4xx is
 * counted as refused and the run goes on; anything else ends it (`fatal`).
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
import { resendNotification } from "./webhooks.ts";

const HOUR = 3_600_000;
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
 * The default run key: the webhook and the window's start, rounded down to the hour.
 *
 * @example
 * ```ts
 * defaultRunKey("w1", Date.parse("2026-01-01T10:20:00Z")); // "w1:2026-01-01T10:00:00.000Z"
 * ```
 */
export function defaultRunKey(webhookId: string, since: number): string {
  return `${webhookId}:${new Date(Math.floor(since / HOUR) * HOUR).toISOString()}`;
}

/** What {@linkcode resendOneByOne} resends. */
export interface OneByOneRun {
  /** The endpoint. */
  webhookId: string;
  /** The notifications to resend, in order, as the listing yields them (not held). */
  listed: AsyncIterable<{ id: string; status: string }>;
  /** The run key the per-notification keys come from. */
  runKey: string;
  /** Resends in flight at once. */
  concurrency: number;
  /** The most notifications taken from `listed`; more ends the run with `overMax`. */
  max: number;
  /** Settles (with why) when the run should stop taking new notifications. */
  stopped?: Promise<string>;
  /** Called after each resend with how many are done. */
  onProgress?: (done: number, taken: number) => void | Promise<void>;
}

/** How a {@linkcode resendOneByOne} run went. */
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

/**
 * Resends what `run.listed` yields, one by one; never throws (see `fatal`).
 *
 * @example
 * ```ts
 * import type { PlatformClient } from "./mod.ts";
 * declare const client: PlatformClient;
 * async function* listed() {
 *   yield { id: "n1", status: "FAILED" };
 * }
 * const r = await resendOneByOne(client, {
 *   webhookId: "w1",
 *   listed: listed(),
 *   runKey: "w1:2026-01-01T00:00:00.000Z",
 *   concurrency: 4,
 *   max: 100_000,
 * });
 * console.log(`resent ${r.resent} of ${r.taken}`);
 * ```
 */
export async function resendOneByOne(
  client: PlatformClient,
  run: OneByOneRun,
): Promise<OneByOneResult> {
  const { webhookId } = run;
  let stopped: string | undefined;
  void run.stopped?.then((why) => stopped = why);
  const tally = new StatusTally();
  let taken = 0;
  let resent = 0;
  let replayed = 0;
  let refused = 0;
  let overMax = false;
  let firstRefused: string | undefined;
  let fatal: unknown;
  const iterator = run.listed[Symbol.asyncIterator]();
  let listing: Promise<IteratorResult<{ id: string; status: string }>> | undefined;
  /** The next listed notification, one reader at a time; undefined at the end. */
  const nextId = async (): Promise<string | undefined> => {
    const previous = listing ?? Promise.resolve(undefined);
    const mine = previous.then(() => iterator.next());
    listing = mine.catch(() => ({ done: true, value: undefined }));
    const r = await mine;
    if (r.done || overMax) return undefined;
    if (++taken > run.max) {
      overMax = true;
      return undefined;
    }
    tally.add(r.value.status);
    return r.value.id;
  };
  const worker = async () => {
    while (stopped === undefined && fatal === undefined && !overMax) {
      let id: string | undefined;
      try {
        id = await nextId();
      } catch (e) {
        fatal ??= e;
        return;
      }
      if (id === undefined) return;
      try {
        const r = await resendNotification(
          client,
          webhookId,
          id,
          await resendKey(run.runKey, webhookId, id),
        );
        if (r.headers.get("idempotent-replayed") === "true") replayed++;
        else resent++;
      } catch (e) {
        if (e instanceof PlatformApiError && e.status >= 400 && e.status < 500) {
          refused++;
          firstRefused ??= `${id}: ${e.message}`;
        } else fatal ??= e;
      }
      await run.onProgress?.(resent + replayed + refused, taken);
    }
  };
  try {
    await Promise.all(Array.from({ length: run.concurrency }, worker));
  } finally {
    await iterator.return?.(undefined).catch(() => {});
  }
  const statuses = tally.counts();
  return { taken, resent, replayed, refused, firstRefused, statuses, overMax, fatal, stopped };
}
