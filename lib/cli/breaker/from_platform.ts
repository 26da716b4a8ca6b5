/**
 * The command's side of `breaker simulate|explain --webhookId W`: the
 * window from the flags, the platform client (requests counted), the read
 * ({@linkcode readPlatformLog}) with a progress line on a terminal, the
 * `--save`d copy, and how the platform's findings are printed.
 *
 * @module
 */

import type { LogRecord } from "../../webhooks/mod.ts";
import { type CommandContext, platformClient } from "../command.ts";
import { UsageError } from "../errors.ts";
import type { Output } from "../output.ts";
import { type PlatformFacts, readPlatformLog, RETRY_LOOKBACK_MS } from "./platform_log.ts";
import { SavedLog } from "./saved_log.ts";
import type { Finding } from "./platform_check.ts";

/** The flags this part reads. */
export interface PlatformFlags {
  webhookId?: string;
  since?: number;
  from?: number;
  to?: number;
  save?: string;
  concurrency: number;
  skipInvalid?: boolean;
  apiKey?: string;
  privateKey?: string;
  apiBaseUrl?: string;
  timeout?: number;
  retries?: number;
}

/** What a read gives besides the records. */
export interface PlatformRead {
  /** What the platform says beside the attempts. */
  facts: PlatformFacts;
  /** The window, epoch ms. */
  from: number;
  /** The window, epoch ms. */
  to: number;
  /** HTTP requests made (retries included). */
  requests: number;
  /** Seconds the read took. */
  seconds: number;
}

const DAY = 86_400_000;

/** The window of the flags: `--since`, or `--from`/`--to`; default the last 24 hours. */
export function windowOf(flags: PlatformFlags, now: number): { from: number; to: number } {
  if (flags.since !== undefined && flags.from !== undefined) {
    throw new UsageError("--since and --from both give the window's start: give one of them.");
  }
  const to = flags.to ?? now;
  const from = flags.since ?? flags.from ?? to - DAY;
  if (from > to) {
    throw new UsageError(
      `The window starts (${new Date(from).toISOString()}) after it ends (${
        new Date(to).toISOString()
      }): give --from before --to.`,
    );
  }
  return { from, to };
}

/**
 * Reads the window's attempts of `flags.webhookId` from the platform into
 * `feed`, writing them to `flags.save` too (in place only once complete).
 */
export async function readFromPlatform(
  flags: PlatformFlags & { webhookId: string },
  ctx: CommandContext & { out: Output },
  feed: (r: LogRecord) => void,
  warn: (text: string) => void,
): Promise<PlatformRead> {
  const out = ctx.out;
  const { from, to } = windowOf(flags, (ctx.now ?? Date.now)());
  let requests = 0;
  const base = ctx.fetch ?? fetch;
  const counted: typeof fetch = (input, init) => {
    requests++;
    return base(input, init);
  };
  const client = await platformClient(flags, ctx, { fetch: counted });
  const saved = flags.save === undefined ? null : await SavedLog.create(flags.save);
  const started = performance.now();
  let shownAt = 0;
  let invalid = 0;
  try {
    const facts = await readPlatformLog(
      client,
      {
        webhookId: flags.webhookId,
        from,
        to,
        concurrency: flags.concurrency,
        skipInvalid: flags.skipInvalid,
        onInvalid: (e) => {
          if (invalid++ < 3) warn(`skipped ${e.message}`);
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
    return { facts, from, to, requests, seconds };
  } catch (e) {
    await saved?.abort();
    throw e;
  }
}

/** The platform's side in words, for the table view and `explain`. */
export function platformSummary(read: PlatformRead): string {
  const f = read.facts;
  const statuses = Object.entries(f.statuses).sort().map(([s, n]) => `${n} ${s}`).join(", ");
  return `The platform: endpoint ${f.webhook.id} is ${f.webhook.status} now; ${f.notifications} notification(s) created from ${
    new Date(Math.max(0, read.from - RETRY_LOOKBACK_MS)).toISOString()
  } (8 h before the window, for their retries) to ${new Date(read.to).toISOString()}${
    statuses ? ` (${statuses})` : ""
  }, ${f.attempts} of their ${f.attemptsListed} attempt(s) sent inside the window.`;
}

/**
 * Prints the findings after the result: a section of the table, NDJSON
 * lines `{"type":"platform",...}` after the summary, or warnings on standard
 * error with `--format json` (its one document stays as it is).
 */
export async function printFindings(out: Output, findings: Finding[]): Promise<void> {
  if (findings.length === 0) return;
  if (out.format === "table") {
    await out.write(`\n${findings.map((f) => `- ${f.message}`).join("\n")}\n`);
  } else if (out.format === "ndjson") {
    await out.write(
      findings.map((f) => JSON.stringify({ type: "platform", ...f })).join("\n") + "\n",
    );
  } else {
    for (const f of findings) if (f.kind !== "agree") await out.warn(f.message);
  }
}
