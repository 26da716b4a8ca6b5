/**
 * The command's side of `breaker simulate|explain --webhookId W`: the
 * window from the flags, the platform client (requests counted), the read
 * ({@linkcode readPlatformLog}) with a progress line on a terminal, the
 * `--save`d copy, and how the platform's findings are printed.
 *
 * @module
 */

import type { LogRecord, ReadStats } from "../../webhooks/mod.ts";
import { type CommandContext, platformClient } from "../command.ts";
import { CliError } from "../errors.ts";
import { signalExitCode } from "../../core/mod.ts";
import { STOP_SIGNALS, StopRequest } from "../stop_signals.ts";
import type { Output } from "../output.ts";
import type { ParsedFlags } from "../flags.ts";
import type { SIMULATE_FLAGS } from "../breaker.ts";
import {
  type Finding,
  type PlatformFacts,
  platformWindow,
  readPlatformLog,
  SavedLog,
} from "../../breaker/mod.ts";

/** What a read gives besides the records. */
export interface PlatformRead {
  /** What the platform says beside the attempts. */
  facts: PlatformFacts;
  /** The window, epoch ms. */
  from: number;
  /** The window, epoch ms. */
  to: number;
  /** The read's counts as a log file's are given. */
  stats: ReadStats;
}

/**
 * Reads the window's attempts of `flags.webhookId` from the platform into
 * `feed`, writing them to `flags.save` too (in place only once complete).
 */
export async function readFromPlatform(
  flags: ParsedFlags<typeof SIMULATE_FLAGS>,
  ctx: CommandContext & { out: Output },
  feed: (r: LogRecord) => void,
  warn: (text: string) => void,
): Promise<PlatformRead> {
  const out = ctx.out;
  const { from, to } = platformWindow(flags, (ctx.now ?? Date.now)());
  let requests = 0;
  const base = ctx.fetch ?? fetch;
  const counted: typeof fetch = (input, init) => {
    requests++;
    return base(input, init);
  };
  const client = await platformClient(flags, ctx, { fetch: counted });
  const saved = flags.save === undefined ? null : await SavedLog.create(flags.save);
  // a stop signal drops the --save temporary file at once, then ends the read
  const release = saved === null
    ? () => {}
    : ctx.takeSignals?.(STOP_SIGNALS, () => saved.discard()) ?? (() => {});
  const started = performance.now();
  let shownAt = 0;
  let invalid = 0;
  try {
    const facts = await readPlatformLog(
      client,
      {
        webhookId: flags.webhookId!, // given: the caller reads the platform only then
        from,
        to,
        concurrency: flags.concurrency,
        skipInvalid: flags.skipInvalid,
        signal: saved === null ? undefined : ctx.signal,
        onInvalid: (message) => {
          if (invalid++ < 3) warn(message);
        },
        onProgress: (p) => {
          const t = performance.now();
          if (t - shownAt < 100) return;
          shownAt = t;
          void out.progress(
            `${p.notifications.toLocaleString("en-US")}${
              p.total === undefined ? "" : `/${p.total.toLocaleString("en-US")}`
            } notifications, ${p.attempts.toLocaleString("en-US")} attempts, ${requests} requests`,
          );
        },
      },
      (r) => {
        saved?.add(r);
        feed(r);
      },
    );
    await saved?.commit();
    const seconds = (performance.now() - started) / 1000;
    await out.clearProgress();
    await out.debug(
      `read ${facts.notifications} notification(s) and ${facts.attemptsListed} attempt(s) of webhook ${flags.webhookId} in ${requests} request(s), ${
        seconds.toFixed(1)
      } s; ${facts.outsideWindow} attempt(s) outside the window; at most ${facts.peakHeld} held for ordering`,
    );
    if (flags.save !== undefined) {
      await out.debug(`wrote ${facts.attempts} line(s) to ${flags.save}`);
    }
    const stats: ReadStats = {
      lines: facts.attempts + facts.invalid,
      records: facts.attempts,
      invalidLines: facts.invalid,
      format: "platform",
      scanned: 0,
    };
    return { facts, from, to, stats };
  } catch (e) {
    await saved?.abort();
    const stop = ctx.signal?.reason;
    if (saved !== null && stop instanceof StopRequest) {
      throw new CliError(
        `Stopped by ${stop.signal} before the read ended: nothing was written to "${flags.save}".`,
        signalExitCode(stop.signal),
      );
    }
    throw e;
  } finally {
    release();
  }
}

/**
 * Prints the findings after the result: a section of the table, NDJSON
 * lines `{"type":"platform",...}` after the summary, or warnings on standard
 * error with `--format json` (its one document stays as it is).
 */
export async function printFindings(out: Output, findings: Finding[]): Promise<void> {
  if (findings.length === 0) return;
  if (out.format === "table") {
    await out.write("\n");
    for (const f of findings) await out.text(`- ${f.message}`);
  } else if (out.format === "ndjson") {
    await out.write(
      findings.map((f) => JSON.stringify({ type: "platform", ...f })).join("\n") + "\n",
    );
  } else {
    for (const f of findings) if (f.kind !== "agree") await out.warn(f.message);
  }
}
