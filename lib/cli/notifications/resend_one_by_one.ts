/**
 * The one-by-one path of `service notifications resend-all`, for the windows
 * the platform's bulk call (resend by query) refuses: longer than 24 hours or
 * starting more than 72 hours back, or a platform that does not serve it.
 * The platform's `resendOneByOne` resends the listed notifications as the
 * listing streams in; this file says what it does on standard error: a run
 * lists at most `--maxNotifications` ({@linkcode MAX_RESENDS_PER_RUN} by
 * default; more is an error saying how to narrow the window).
 *
 * The run key is `--idempotencyKey`, else the webhook id with the window's
 * start rounded down to the hour (so a re-run in the same hour with the same
 * `--since` continues the first); it is printed on standard error, and an
 * interrupted run says how to go on. Repeats the platform flags are reported
 * as "already resent"; when every one was, the last line says how to resend
 * them again (a new `--idempotencyKey`).
 *
 * @module
 */

import { CliError } from "../errors.ts";
import { whenStopped } from "../stop_signals.ts";
import type { Output } from "../output.ts";
import type { TakeSignals } from "../stop_signals.ts";
import type { PlatformClient } from "../../platform/mod.ts";

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
  const runKey = run.idempotencyKey ?? api.defaultRunKey(webhookId, run.since);
  await out.log(
    `resending the notifications created since ${sinceIso} one by one, as they are listed; run key ${runKey}`,
  );
  const release = ctx.takeSignals?.(["SIGINT", "SIGTERM"]) ?? (() => {});
  let r;
  try {
    r = await api.resendOneByOne(client, {
      webhookId,
      listed: run.listed,
      runKey,
      concurrency: run.concurrency,
      max: run.max,
      stopped: whenStopped(ctx.signal),
      onProgress: (done, taken) =>
        out.progress(`resent ${done} of ${Math.max(taken, run.listedSoFar())}`),
    });
  } finally {
    release();
    await out.clearProgress();
  }
  const { resent, replayed, refused, firstRefused, stopped } = r;
  const fatal = r.overMax ? tooMany(sinceIso, run.max) : r.fatal;
  const done = resent + replayed + refused;
  const total = Math.max(r.taken, run.listedSoFar());
  const summary = {
    total,
    resent,
    alreadyResent: replayed,
    refused,
    since: sinceIso,
    statuses: r.statuses,
    runKey,
  };
  if (run.printSummary) await out.object(summary);
  await out.log(
    `resent ${resent} of ${total} notification(s)` +
      (replayed ? `; ${replayed} already resent by an earlier run with this run key` : "") +
      (refused ? `; ${refused} refused (first: ${firstRefused})` : ""),
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
  if (refused) {
    throw new CliError(
      `${refused} of ${total} resend(s) were refused by the platform (first: ${firstRefused}).`,
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
