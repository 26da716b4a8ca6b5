/**
 * A webhook's delivery log read from the platform itself, for
 * `service breaker simulate --webhookId W` with no file: the window's
 * notifications (`GET /v1/webhooks/{id}/notifications`, by creation time),
 * each one's attempts (`…/{notificationId}/attempts`) with a bounded number
 * of requests in flight, put back into time order (see
 * {@linkcode readPlatformLog}) and handed out as the same
 * {@linkcode LogRecord}s a log file gives (the one validator of
 * `lib/webhooks/log` checks them; `line` is the line the record has in a
 * `--save`d log).
 *
 * Every request goes through the one platform client (its retries, timeout,
 * `Retry-After`). Nothing is written to the platform: stopping and starting
 * again is harmless (it reads everything again).
 *
 * What the platform's records say beside the attempts is kept too
 * ({@linkcode PlatformFacts}): the endpoint's status now, the notifications'
 * statuses, and the notifications whose listed attempts do not account for
 * their status (an attempt the API does not list).
 *
 * @module
 */

import {
  getWebhook,
  listAttempts,
  listNotifications,
  type Notification,
  type NotificationAttempt,
  type PlatformClient,
  type Webhook,
} from "../platform/mod.ts";
import { MinHeap } from "../core/mod.ts";
import {
  classifyOutcome,
  emptyRecord,
  fieldsToRecord,
  type LogRecord,
  MAX_ATTEMPTS,
} from "../webhooks/mod.ts";
import { BreakerError } from "./errors.ts";

/**
 * How far before the window notifications are read, so that the retries of
 * one created just before it are seen: the retry schedule's whole span
 * (10 s + 30 s + … + 4 h = 7 h 52 m 40 s, breaker.md §2), rounded up to 8 h.
 */
export const RETRY_LOOKBACK_MS = 8 * 3_600_000;

/** A notification whose listed attempts do not account for its status. */
export interface AttemptGap {
  /** The notification. */
  notificationId: string;
  /** Its status on the platform. */
  status: string;
  /** Attempts the API lists for it. */
  listed: number;
  /** What does not add up, in words. */
  what: string;
}

/** What the platform's records say besides the attempts. */
export interface PlatformFacts {
  /** The endpoint as the platform shows it after the read. */
  webhook: Webhook;
  /** Notifications read (created from `from - lookback` to `to`). */
  notifications: number;
  /** Notifications by status. */
  statuses: Record<string, number>;
  /** Attempts listed, all of them (also those outside the window). */
  attemptsListed: number;
  /** Attempts handed out (those sent inside the window). */
  attempts: number;
  /** Listed attempts sent outside the window (not replayed). */
  outsideWindow: number;
  /** Attempts the validator refused (with `skipInvalid`; else the read stops). */
  invalid: number;
  /** Notifications whose attempts do not account for their status (the first 20). */
  gaps: AttemptGap[];
  /** All such notifications. */
  gapCount: number;
  /** Most attempts held at once by the time-order merge. */
  peakHeld: number;
}

/** Progress of a read. */
export interface PlatformLogProgress {
  /** Notifications whose attempts have been read. */
  notifications: number;
  /** The platform's count of notifications in the query, when it gives one. */
  total: number | undefined;
  /** Attempts handed out so far. */
  attempts: number;
}

const DAY = 86_400_000;
const iso = (t: number) => Number.isFinite(t) ? new Date(t).toISOString() : String(t);

/**
 * The window of a read: `since`, or `from`/`to` (epoch ms); default the 24
 * hours before `now`. A {@linkcode BreakerError} `usage` when both starts
 * are given or it starts after it ends.
 *
 * @example
 * ```ts
 * platformWindow({ since: Date.now() - 3_600_000 }, Date.now()); // the last hour
 * ```
 */
export function platformWindow(
  w: { since?: number; from?: number; to?: number },
  now: number,
): { from: number; to: number } {
  if (w.since !== undefined && w.from !== undefined) {
    throw new BreakerError(
      "usage",
      "--since and --from both give the window's start: give one of them.",
    );
  }
  const to = w.to ?? now;
  const from = w.since ?? w.from ?? to - DAY;
  if (from > to) {
    throw new BreakerError(
      "usage",
      `The window starts (${iso(from)}) after it ends (${iso(to)}): give --from before --to.`,
    );
  }
  return { from, to };
}

/**
 * The most attempts one notification may list: 1,000 (a series has at most
 * 10, so 100 resends). More is a misbehaving platform: the read stops with a
 * {@linkcode BreakerError} naming the notification.
 */
export const MAX_ATTEMPTS_PER_NOTIFICATION = 1_000;

/**
 * The most notifications one read takes: 1,000,000 (a window that needs
 * more is narrowed with `--from`/`--to`).
 */
export const MAX_NOTIFICATIONS = 1_000_000;

/**
 * The most attempts the time-order merge holds at once: 100,000 (the
 * attempts of notifications already read that were sent after the newest
 * notification's creation: retries still to come). More cannot be put in
 * time order within the bound: the read stops with a {@linkcode BreakerError}.
 */
export const MAX_HELD = 100_000;

/** The page size asked for (a page holding more is refused by the client). */
const PAGE_SIZE = 100;

/**
 * The most pages one listing may take: 20 for a notification's attempts
 * (its 1,000 in full pages take 10), and for the window's notifications
 * twice what {@linkcode MAX_NOTIFICATIONS} takes in full pages (20,000).
 * More (pages nearly empty with a new `next` forever) is a misbehaving
 * platform: a {@linkcode BreakerError} naming the listing.
 */
export const MAX_PAGES = { attempts: 20, notifications: 20_000 };

/** Options of {@linkcode readPlatformLog}. */
export interface PlatformLogOptions {
  /** The endpoint. */
  webhookId: string;
  /** Start of the window, epoch ms: attempts sent at or after it are replayed. */
  from: number;
  /** End of the window, epoch ms (inclusive). */
  to: number;
  /** Attempt lists read at once; default 8. */
  concurrency?: number;
  /** Count and skip an attempt the validator refuses instead of stopping. Default false. */
  skipInvalid?: boolean;
  /** Stops the read (between requests) when aborted, with its reason. */
  signal?: AbortSignal;
  /** Called after each notification's attempts are taken in. */
  onProgress?: (p: PlatformLogProgress) => void;
  /** Called with each refused attempt in words (with `skipInvalid`). */
  onInvalid?: (message: string) => void;
}

interface Fetched {
  n: Notification;
  attempts: NotificationAttempt[];
}

/** One attempt held by the merge, with its notification's id and its arrival order. */
interface Held {
  id: string;
  a: NotificationAttempt;
  seq: number;
}

/**
 * Reads the window's attempts of one endpoint from the platform and hands
 * them to `emit` in time order (ties: the notifications' creation order,
 * then the order the API lists them). `emit` may keep the record only by
 * copying it.
 *
 * The platform lists the notifications by creation time and each one's
 * attempts on their own; an attempt is never sent before its notification
 * was created, but its retries (and resends) come hours later, interleaved
 * with the attempts of newer notifications. So attempts are held in a
 * min-heap on (sentTime, arrival order) and one is let out once every
 * notification not yet taken in was created after it: memory holds the
 * attempts still "in flight" at the frontier, not the window.
 *
 * Throws the client's errors (`PlatformApiError`, `PlatformResponseError`
 * for a page larger than asked or a repeated cursor, ...), and a
 * {@linkcode BreakerError}: `platform-bound` when the
 * platform's answers break a bound above or cannot be put in time order
 * (notifications out of creation order or created outside the query, an
 * attempt sent before its notification was created), `invalid-attempt` for
 * an attempt the validator refuses (unless `skipInvalid`).
 *
 * @example
 * ```ts
 * import type { PlatformClient } from "../platform/mod.ts";
 * import type { Simulation } from "../webhooks/mod.ts";
 * declare const client: PlatformClient, sim: Simulation;
 * const facts = await readPlatformLog(client, { webhookId: "w1", from: Date.now() - 86_400_000, to: Date.now() }, (r) => sim.feed(r));
 * ```
 */
export async function readPlatformLog(
  client: PlatformClient,
  options: PlatformLogOptions,
  emit: (r: LogRecord) => void,
): Promise<PlatformFacts> {
  const { webhookId, from, to, signal } = options;
  const concurrency = options.concurrency ?? 8;
  const start = Math.max(0, from - RETRY_LOOKBACK_MS);
  const held = new MinHeap<Held>((x, y) =>
    x.a.sentTime < y.a.sentTime || (x.a.sentTime === y.a.sentTime && x.seq < y.seq)
  );
  let seq = 0;
  const facts: Omit<PlatformFacts, "webhook"> = {
    notifications: 0,
    statuses: {},
    attemptsListed: 0,
    attempts: 0,
    outsideWindow: 0,
    invalid: 0,
    gaps: [],
    gapCount: 0,
    peakHeld: 0,
  };
  let total: number | undefined;
  const rec = emptyRecord();
  let line = 0;
  const bound = (message: string) => new BreakerError("platform-bound", message);

  const out = ({ id, a }: Held) => {
    const err = fieldsToRecord(rec, line + 1, {
      webhookId,
      sentTime: a.sentTime,
      responseCode: a.responseCode ?? undefined,
      failureReason: a.failureReason ?? undefined,
      notificationId: id,
      duration: a.duration ?? undefined,
    });
    if (err !== null) {
      facts.invalid++;
      const what = `an attempt of notification ${JSON.stringify(id)} sent at ${iso(a.sentTime)}: ${
        err.message.replace(/^line \d+: /, "")
      }`;
      if (!options.skipInvalid) {
        throw new BreakerError(
          "invalid-attempt",
          `The platform listed an invalid attempt: ${what}. Pass --skipInvalid to count and skip such attempts.`,
          { cause: err },
        );
      }
      options.onInvalid?.(`skipped ${what}`);
      return;
    }
    line++;
    rec.webhookIndex = 0;
    facts.attempts++;
    emit(rec);
  };

  /** Lets out, in order, every attempt held that was sent before `frontier`. */
  const release = (frontier: number) => {
    while (held.size > 0 && held.peek()!.a.sentTime < frontier) out(held.pop()!);
  };

  let newest = start;
  const take = ({ n, attempts }: Fetched) => {
    facts.notifications++;
    facts.statuses[n.status] = (facts.statuses[n.status] ?? 0) + 1;
    facts.attemptsListed += attempts.length;
    const gap = attemptGap(n, attempts);
    if (gap !== null) {
      facts.gapCount++;
      if (facts.gaps.length < 20) facts.gaps.push(gap);
    }
    for (const a of attempts) {
      if (a.sentTime < n.createdAt) {
        throw bound(
          `The platform lists an attempt of notification ${JSON.stringify(n.id)} sent at ${
            iso(a.sentTime)
          }, before the notification was created (${
            iso(n.createdAt)
          }): its attempts cannot be put in time order.`,
        );
      }
      if (a.sentTime < from || a.sentTime > to) {
        facts.outsideWindow++; // not replayed: never held
        continue;
      }
      held.push({ id: n.id, a, seq: seq++ });
      if (held.size > facts.peakHeld) facts.peakHeld = held.size;
    }
    // every notification not taken in yet was created at or after this one,
    // so none of its attempts can come before n.createdAt
    release(n.createdAt);
    if (held.size > MAX_HELD) {
      throw bound(
        `The platform's attempts cannot be put in time order within ${MAX_HELD} held at once (at notification ${
          JSON.stringify(n.id)
        }, created ${iso(n.createdAt)}): narrow the window with --from/--to.`,
      );
    }
    options.onProgress?.({ notifications: facts.notifications, total, attempts: facts.attempts });
  };

  const inflight: Promise<Fetched>[] = [];
  const fetchOne = (n: Notification): Promise<Fetched> => {
    const p = (async () => {
      const attempts: NotificationAttempt[] = [];
      let pages = 0;
      const onPage = () => {
        if (++pages > MAX_PAGES.attempts) {
          throw bound(
            `The platform lists the attempts of notification ${
              JSON.stringify(n.id)
            } over more than ${MAX_PAGES.attempts} pages: refused as a misbehaving answer.`,
          );
        }
      };
      for await (const a of listAttempts(client, webhookId, n.id, PAGE_SIZE, signal, onPage)) {
        if (attempts.length === MAX_ATTEMPTS_PER_NOTIFICATION) {
          throw bound(
            `The platform lists more than ${MAX_ATTEMPTS_PER_NOTIFICATION} attempts for notification ${
              JSON.stringify(n.id)
            } (a series has at most ${MAX_ATTEMPTS}): refused as a misbehaving answer.`,
          );
        }
        signal?.throwIfAborted();
        attempts.push(a);
      }
      return { n, attempts };
    })();
    p.catch(() => {}); // awaited in order below; an early failure is not "unhandled"
    return p;
  };
  let listed = 0;
  let pages = 0;
  for await (
    const n of listNotifications(
      client,
      webhookId,
      { order: "ASC", sortBy: "createdAt", pageSize: PAGE_SIZE, startTime: start, endTime: to },
      (page) => {
        if (++pages > MAX_PAGES.notifications) {
          throw bound(
            `The platform lists the window's notifications over more than ${MAX_PAGES.notifications} pages: refused as a misbehaving answer; narrow the window with --from/--to.`,
          );
        }
        if (page.total !== undefined) total ??= page.total;
      },
      signal,
    )
  ) {
    signal?.throwIfAborted();
    if (++listed > MAX_NOTIFICATIONS) {
      throw bound(
        `The platform lists more than ${MAX_NOTIFICATIONS} notifications for the window: narrow it with --from/--to.`,
      );
    }
    if (!(n.createdAt >= newest && n.createdAt <= to)) {
      throw bound(
        `The platform lists notification ${JSON.stringify(n.id)} created at ${iso(n.createdAt)}, ${
          n.createdAt > to
            ? `after the end asked for (${iso(to)})`
            : n.createdAt < start
            ? `before the start asked for (${iso(start)})`
            : `before the one listed ahead of it (${
              iso(newest)
            }), though they were asked in creation order`
        }: its attempts cannot be put in time order.`,
      );
    }
    newest = n.createdAt;
    inflight.push(fetchOne(n));
    if (inflight.length >= concurrency) take(await inflight.shift()!);
  }
  while (inflight.length > 0) take(await inflight.shift()!);
  release(Infinity);
  signal?.throwIfAborted();
  const webhook = await getWebhook(client, webhookId);
  return { webhook, ...facts };
}

/** Whether a notification's listed attempts account for its status; null when they do. */
export function attemptGap(n: Notification, attempts: NotificationAttempt[]): AttemptGap | null {
  const gap = (what: string) => ({
    notificationId: n.id,
    status: n.status,
    listed: attempts.length,
    what,
  });
  const outcome = (a: NotificationAttempt) =>
    a.responseCode !== undefined && a.responseCode !== null
      ? { responseCode: a.responseCode }
      : { failureReason: (a.failureReason ?? "NO_RESPONSE") as "TIMED_OUT" | "NO_RESPONSE" };
  if (n.status === "COMPLETED") {
    if (!attempts.some((a) => classifyOutcome(outcome(a)).delivered)) {
      return gap("it is COMPLETED but no listed attempt was delivered (2xx)");
    }
  } else if (n.status === "FAILED") {
    if (attempts.length === 0) return gap("it is FAILED but the API lists no attempt");
    const last = attempts[attempts.length - 1];
    if (classifyOutcome(outcome(last)).retryable && attempts.length % MAX_ATTEMPTS !== 0) {
      return gap(
        `it is FAILED after ${attempts.length} listed attempt(s), the last one retryable: a FAILED series has ${MAX_ATTEMPTS}, so attempts are missing`,
      );
    }
  }
  return null;
}
