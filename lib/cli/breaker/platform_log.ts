/**
 * A webhook's delivery log read from the platform itself, for
 * `service breaker simulate --webhookId W` with no file: the window's
 * notifications (`GET /v1/webhooks/{id}/notifications`, by creation time),
 * each one's attempts (`…/{notificationId}/attempts`) with a bounded number
 * of requests in flight, put back into time order ({@linkcode AttemptMerge})
 * and handed out as the same {@linkcode LogRecord}s a log file gives (the
 * one validator of `lib/webhooks/log` checks them; `line` is the line the
 * record has in a `--save`d log).
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
} from "../../platform/mod.ts";
import {
  classifyOutcome,
  emptyRecord,
  fieldsToRecord,
  type InvalidLineError,
  type LogRecord,
  MAX_ATTEMPTS,
} from "../../webhooks/mod.ts";
import { AttemptMerge } from "./attempt_merge.ts";

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

/** Options of {@linkcode readPlatformLog}. */
export interface PlatformLogOptions {
  /** The endpoint. */
  webhookId: string;
  /** Start of the window, epoch ms: attempts sent at or after it are replayed. */
  from: number;
  /** End of the window, epoch ms (inclusive). */
  to: number;
  /** Notifications created this long before `from` are read too; default {@linkcode RETRY_LOOKBACK_MS}. */
  lookbackMs?: number;
  /** Attempt lists read at once; default 8. */
  concurrency?: number;
  /** Count and skip an attempt the validator refuses instead of throwing it. Default false. */
  skipInvalid?: boolean;
  /** Called after each notification's attempts are taken in. */
  onProgress?: (p: PlatformLogProgress) => void;
  /** Called with each refused attempt (with `skipInvalid`). */
  onInvalid?: (e: InvalidLineError) => void;
}

interface Fetched {
  n: Notification;
  attempts: NotificationAttempt[];
}

/**
 * Reads the window's attempts of one endpoint from the platform and hands
 * them to `emit` in time order (ties: the notifications' creation order,
 * then the order the API lists them). `emit` may keep the record only by
 * copying it. Throws the client's errors (`PlatformApiError`, ...), and the
 * validator's {@linkcode InvalidLineError} unless `skipInvalid`.
 *
 * @example
 * ```ts
 * import type { PlatformClient } from "../../platform/mod.ts";
 * import type { Simulation } from "../../webhooks/mod.ts";
 * declare const client: PlatformClient, sim: Simulation;
 * const facts = await readPlatformLog(client, { webhookId: "w1", from: Date.now() - 86_400_000, to: Date.now() }, (r) => sim.feed(r));
 * ```
 */
export async function readPlatformLog(
  client: PlatformClient,
  options: PlatformLogOptions,
  emit: (r: LogRecord) => void,
): Promise<PlatformFacts> {
  const { webhookId, from, to } = options;
  const concurrency = options.concurrency ?? 8;
  const lookback = options.lookbackMs ?? RETRY_LOOKBACK_MS;
  const merge = new AttemptMerge<{ a: NotificationAttempt; id: string }>();
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

  const out = (item: { a: NotificationAttempt; id: string }) => {
    const a = item.a;
    if (a.sentTime < from || a.sentTime > to) {
      facts.outsideWindow++;
      return;
    }
    const err = fieldsToRecord(
      rec,
      line + 1,
      webhookId,
      a.sentTime,
      undefined,
      a.responseCode ?? undefined,
      a.failureReason ?? undefined,
      item.id,
      undefined,
      a.duration ?? undefined,
    );
    if (err !== null) {
      facts.invalid++;
      if (!options.skipInvalid) throw err;
      options.onInvalid?.(err);
      return;
    }
    line++;
    rec.webhookIndex = 0;
    facts.attempts++;
    emit(rec);
  };

  const take = ({ n, attempts }: Fetched) => {
    facts.notifications++;
    facts.statuses[n.status] = (facts.statuses[n.status] ?? 0) + 1;
    facts.attemptsListed += attempts.length;
    const gap = attemptGap(n, attempts);
    if (gap !== null) {
      facts.gapCount++;
      if (facts.gaps.length < 20) facts.gaps.push(gap);
    }
    for (const a of attempts) merge.push(a.sentTime, { a, id: n.id });
    // every notification not taken in yet was created at or after this one,
    // so none of its attempts can come before n.createdAt
    for (const item of merge.release(n.createdAt)) out(item);
    options.onProgress?.({ notifications: facts.notifications, total, attempts: facts.attempts });
  };

  const inflight: Promise<Fetched>[] = [];
  const fetchOne = (n: Notification): Promise<Fetched> => {
    const p = (async () => {
      const attempts: NotificationAttempt[] = [];
      for await (const a of listAttempts(client, webhookId, n.id, 100)) attempts.push(a);
      return { n, attempts };
    })();
    p.catch(() => {}); // awaited in order below; an early failure is not "unhandled"
    return p;
  };
  for await (
    const n of listNotifications(
      client,
      webhookId,
      {
        order: "ASC",
        sortBy: "createdAt",
        pageSize: 100,
        startTime: Math.max(0, from - lookback),
        endTime: to,
      },
      (page) => {
        if (page.total !== undefined) total ??= page.total;
      },
    )
  ) {
    inflight.push(fetchOne(n));
    if (inflight.length >= concurrency) take(await inflight.shift()!);
  }
  while (inflight.length > 0) take(await inflight.shift()!);
  for (const item of merge.drain()) out(item);
  facts.peakHeld = merge.peak;
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
