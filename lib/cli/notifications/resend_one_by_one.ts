/**
 * The one-by-one path of `service notifications resend-all`, for the windows
 * the platform's bulk call (resend by query) refuses: longer than 24 hours or
 * starting more than 72 hours back, or a platform that does not serve it.
 * The listed notifications are resent with Resend Notification, at most
 * `concurrency` at a time, as the listing streams in: only the page being read
 * and the resends in flight are held, never the whole list; a run lists at
 * most `--maxNotifications` ({@linkcode MAX_RESENDS_PER_RUN} by default; more
 * is an error saying how to narrow the window), and a page cursor that comes back is an error
 * (the platform client's). The platform client retries 5xx, 429 and network
 * errors, honouring `Retry-After`.
 *
 * Each notification's `Idempotency-Key` is derived from a run key, the
 * webhook id and the notification id (a SHA-256, written as a UUID), so a run
 * that is interrupted and started again with the same run key does not
 * resend twice what the first one sent: the platform answers the repeated
 * keys from its idempotency record (24 hours). The run key is
 * `--idempotencyKey`, else the webhook id with the window's start rounded
 * down to the hour (so a re-run in the same hour with the same `--since`
 * continues the first); it is printed on standard error, and an interrupted
 * run says how to go on. Repeats the platform flags (`Idempotent-Replayed:
 * true`, as the emulator does) are reported as "already resent"; when every
 * one was, the last line says how to resend them again (a new `--idempotencyKey`).
 *
 * @module
 */

import { CliError } from "../errors.ts";
import { whenStopped } from "../stop_signals.ts";
import type { Output } from "../output.ts";
import type { TakeSignals } from "../stop_signals.ts";
import { NOTIFICATION_STATUSES, toHex } from "../../core/mod.ts";
import type { PlatformClient } from "../../platform/mod.ts";

const HOUR = 3_600_000;
const KNOWN: ReadonlySet<string> = new Set(NOTIFICATION_STATUSES);

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
  const digest = await crypto.subtle.digest(
    "SHA-256",
    new TextEncoder().encode(`service notifications resend-all\n${runKey}\n${webhookId}\n${id}`),
  );
  const h = toHex(new Uint8Array(digest));
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-5${h.slice(13, 16)}-${
    ((parseInt(h[16], 16) & 3) | 8).toString(16)
  }${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

/** The default run key: the webhook and the window's start, rounded down to the hour. */
export function defaultRunKey(webhookId: string, since: number): string {
  return `${webhookId}:${new Date(Math.floor(since / HOUR) * HOUR).toISOString()}`;
}

/** The most notifications one run lists and resends one by one by default (`--maxNotifications`): 100,000. */
export const MAX_RESENDS_PER_RUN = 100_000;

/** What {@linkcode resendOneByOne} needs. */
export interface OneByOneRun {
  /** The endpoint. */
  webhookId: string;
  /** The notifications to resend, in order, as the listing yields them (not held). */
  listed: AsyncIterable<{ id: string; status: string }>;
  /** How many the pages read so far hold (the pages are counted as they arrive). */
  listedSoFar: () => number;
  /** `--idempotencyKey`, when given. */
  idempotencyKey?: string;
  /** The window's start (epoch ms). */
  since: number;
  /** Resends in flight at once. */
  concurrency: number;
  /** The most notifications listed (`--maxNotifications`); more is an error. */
  max: number;
  /** Print the summary object on standard output. */
  printSummary: boolean;
}

/** The error for a listing longer than `max` (`--maxNotifications`). */
export function tooMany(sinceIso: string, max: number): CliError {
  return new CliError(
    `More than ${max} notifications listed since ${sinceIso}: one run takes at most ${max} ` +
      `(--maxNotifications). Narrow the window (--since, --status, --event, --resourceId).`,
  );
}

/** Resends what `run.listed` yields, one by one; returns the exit code (throws on failure or interruption). */
export async function resendOneByOne(
  ctx: { out: Output; signal?: AbortSignal; takeSignals?: TakeSignals },
  client: PlatformClient,
  run: OneByOneRun,
): Promise<number> {
  const api = await import("../../platform/mod.ts");
  const { out } = ctx;
  const { webhookId } = run;
  const sinceIso = new Date(run.since).toISOString();
  const runKey = run.idempotencyKey ?? defaultRunKey(webhookId, run.since);
  await out.log(
    `resending the notifications created since ${sinceIso} one by one, as they are listed; run key ${runKey}`,
  );
  const release = ctx.takeSignals?.(["SIGINT", "SIGTERM"]) ?? (() => {});
  let stopped: string | undefined;
  void whenStopped(ctx.signal).then((why) => stopped = why);
  const byStatus: Record<string, number> = {};
  let yielded = 0;
  const listedCount = () => Math.max(yielded, run.listedSoFar());
  let resent = 0;
  let replayed = 0;
  let refusedCount = 0;
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
    if (r.done) return undefined;
    if (++yielded > run.max) throw tooMany(sinceIso, run.max);
    // only the statuses we know are counted: a platform's own words must not grow the tally
    if (KNOWN.has(r.value.status)) byStatus[r.value.status] = (byStatus[r.value.status] ?? 0) + 1;
    return r.value.id;
  };
  const worker = async () => {
    while (stopped === undefined && fatal === undefined) {
      let id: string | undefined;
      try {
        id = await nextId();
      } catch (e) {
        fatal ??= e;
        return;
      }
      if (id === undefined) return;
      try {
        const r = await api.resendNotification(
          client,
          webhookId,
          id,
          await resendKey(runKey, webhookId, id),
        );
        if (r.headers.get("idempotent-replayed") === "true") replayed++;
        else resent++;
      } catch (e) {
        if (e instanceof api.PlatformApiError && e.status >= 400 && e.status < 500) {
          refusedCount++;
          firstRefused ??= `${id}: ${e.message}`;
        } else fatal ??= e;
      }
      const done = resent + replayed + refusedCount;
      await out.progress(`resent ${done} of ${listedCount()}`);
    }
  };
  try {
    await Promise.all(Array.from({ length: run.concurrency }, worker));
  } finally {
    release();
    await iterator.return?.(undefined).catch(() => {});
    await out.clearProgress();
  }
  const done = resent + replayed + refusedCount;
  const total = listedCount();
  const statuses = Object.fromEntries(
    NOTIFICATION_STATUSES.filter((s) => byStatus[s]).map((s) => [s, byStatus[s]]),
  );
  const summary = {
    total,
    resent,
    alreadyResent: replayed,
    refused: refusedCount,
    since: sinceIso,
    statuses,
    runKey,
  };
  if (run.printSummary) await out.object(summary);
  await out.log(
    `resent ${resent} of ${total} notification(s)` +
      (replayed ? `; ${replayed} already resent by an earlier run with this run key` : "") +
      (refusedCount ? `; ${refusedCount} refused (first: ${firstRefused})` : ""),
  );
  if (fatal !== undefined || stopped !== undefined) {
    const how = `run again with --idempotencyKey '${runKey}' --since ${sinceIso} ` +
      "to go on without resending twice";
    if (fatal !== undefined) {
      if (!(fatal instanceof CliError)) {
        await out.log(`stopped after ${done} of ${total}: ${how}`);
      }
      throw fatal;
    }
    throw new CliError(`Interrupted (${stopped}) after ${done} of ${total}: ${how}.`);
  }
  if (refusedCount) {
    throw new CliError(
      `${refusedCount} of ${total} resend(s) were refused by the platform (first: ${firstRefused}).`,
    );
  }
  if (replayed > 0 && resent === 0) {
    await out.log(
      `nothing new was resent: ${
        run.idempotencyKey === undefined
          ? "a run in the same hour with the same --since already resent these (the run key is the webhook and the hour of --since)"
          : "an earlier run with this --idempotencyKey already resent these"
      }; to resend them again, give a new key: --idempotencyKey <new-key>`,
    );
  }
  return 0;
}
