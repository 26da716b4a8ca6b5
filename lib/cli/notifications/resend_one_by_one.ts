/**
 * The one-by-one path of `service notifications resend-all`, for the windows
 * the platform's bulk call (resend by query) refuses: longer than 24 hours or
 * starting more than 72 hours back, or a platform that does not serve it.
 * The listed notifications are resent with Resend Notification, at most
 * `concurrency` at a time; the platform client retries 5xx, 429 and network
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
 * true`, as the emulator does) are reported as "already resent".
 *
 * @module
 */

import { CliError } from "../errors.ts";
import { whenStopped } from "../stop_signals.ts";
import type { Output } from "../output.ts";
import type { TakeSignals } from "../stop_signals.ts";
import { toHex } from "../../core/mod.ts";
import type { PlatformClient } from "../../platform/mod.ts";

const HOUR = 3_600_000;

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

/** What {@linkcode resendOneByOne} needs. */
export interface OneByOneRun {
  /** The endpoint. */
  webhookId: string;
  /** The notifications to resend, in order. */
  ids: string[];
  /** `--idempotencyKey`, when given. */
  idempotencyKey?: string;
  /** The window's start (epoch ms). */
  since: number;
  /** How many of each status were listed. */
  statuses: Record<string, number>;
  /** Resends in flight at once. */
  concurrency: number;
  /** Print the summary object on standard output. */
  printSummary: boolean;
}

/** Resends `run.ids` one by one; returns the exit code (throws on failure or interruption). */
export async function resendOneByOne(
  ctx: { out: Output; signal?: AbortSignal; takeSignals?: TakeSignals },
  client: PlatformClient,
  run: OneByOneRun,
): Promise<number> {
  const api = await import("../../platform/mod.ts");
  const { out } = ctx;
  const { webhookId, ids, statuses } = run;
  const sinceIso = new Date(run.since).toISOString();
  const breakdown = Object.entries(statuses).map(([s, c]) => `${c} ${s}`).join(", ") || "none";
  const runKey = run.idempotencyKey ?? defaultRunKey(webhookId, run.since);
  await out.log(
    `resending ${ids.length} notification(s) created since ${sinceIso} (${breakdown}) one by one; run key ${runKey}`,
  );
  const release = ctx.takeSignals?.(["SIGINT", "SIGTERM"]) ?? (() => {});
  let stopped: string | undefined;
  void whenStopped(ctx.signal).then((why) => stopped = why);
  let next = 0;
  let resent = 0;
  let replayed = 0;
  const refused: string[] = [];
  let fatal: unknown;
  const worker = async () => {
    while (next < ids.length && stopped === undefined && fatal === undefined) {
      const id = ids[next++];
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
          refused.push(`${id}: ${e.message}`);
        } else fatal ??= e;
      }
      const done = resent + replayed + refused.length;
      await out.progress(`resent ${done} of ${ids.length}`);
    }
  };
  try {
    await Promise.all(Array.from({ length: Math.min(run.concurrency, ids.length) }, worker));
  } finally {
    release();
    await out.clearProgress();
  }
  const done = resent + replayed + refused.length;
  const summary = {
    total: ids.length,
    resent,
    alreadyResent: replayed,
    refused: refused.length,
    since: sinceIso,
    statuses,
    runKey,
  };
  if (run.printSummary) await out.object(summary);
  await out.log(
    `resent ${resent} of ${ids.length} notification(s)` +
      (replayed ? `; ${replayed} already resent by an earlier run with this run key` : "") +
      (refused.length ? `; ${refused.length} refused (first: ${refused[0]})` : ""),
  );
  if (fatal !== undefined || stopped !== undefined) {
    const how = `run again with --idempotencyKey '${runKey}' --since ${sinceIso} ` +
      "to go on without resending twice";
    if (fatal !== undefined) {
      await out.log(`stopped after ${done} of ${ids.length}: ${how}`);
      throw fatal;
    }
    throw new CliError(`Interrupted (${stopped}) after ${done} of ${ids.length}: ${how}.`);
  }
  if (refused.length) {
    throw new CliError(
      `${refused.length} of ${ids.length} resend(s) were refused by the platform (first: ${
        refused[0]
      }).`,
    );
  }
  return 0;
}
