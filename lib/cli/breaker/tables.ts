/**
 * How `breaker simulate` shows a result ({@linkcode printResult}): the table
 * view for people (the webhooks, the suspensions and the summary, the
 * notifications), the events, notifications and summary as JSON or NDJSON
 * (written as they go), and the comparison of two policies in every format.
 *
 * @module
 */

import type { Column, Output } from "../output.ts";
import {
  type BreakerConfig,
  compareEndpoints,
  comparisonRecord,
  comparisonSummary,
  eventRecord,
  iso,
  notificationRecords,
  type SimulationResult,
  summaryRecord,
} from "../../webhooks/mod.ts";
import type { NotificationSpill } from "../../breaker/mod.ts";
import { formatDuration } from "../../core/durations.ts";

function pct(x: number): string {
  return x < 0 ? "-" : `${(Math.round(x * 1000) / 10).toFixed(1)}%`;
}

const WEBHOOK_COLUMNS: Column[] = [
  { header: "webhook", value: "webhookId", width: 24 },
  { header: "attempts", value: "attempts", width: 9 },
  { header: "suspensions", value: "suspensions", width: 11 },
  { header: "first suspended", value: "firstSuspended", width: 24 },
  { header: "peak rate", value: "peak", width: 22 },
  { header: "suppressed", value: "suppressed" },
];

const SUSPENSION_COLUMNS: Column[] = [
  { header: "time", value: "time", width: 24 },
  { header: "webhook", value: "webhookId", width: 24 },
  { header: "event", value: "what", width: 21 },
  { header: "window", value: "window", width: 16 },
  { header: "band since", value: "bandSince" },
];

const COMPARE_COLUMNS: Column[] = [
  { header: "webhook", value: "webhookId", width: 24 },
  { header: "suspensions A", value: "suspensionsA", width: 13 },
  { header: "suspensions B", value: "suspensionsB", width: 13 },
  { header: "avoided by B", value: "avoided", width: 12 },
  { header: "gained by B", value: "gained", width: 11 },
  { header: "suppressed A", value: "suppressedA", width: 12 },
  { header: "suppressed B", value: "suppressedB" },
];

const TABLE_ROWS = 50;

/** The table view of a result: webhooks, suspensions, the summary (and notifications). */
export async function printTable(out: Output, result: SimulationResult, invalidLines: number) {
  const a = result.policies[0];
  const eps = [...result.endpoints].sort((x, y) =>
    y.policies[0].suspensions - x.policies[0].suspensions ||
    y.policies[0].peakRate - x.policies[0].peakRate
  );
  const firstSusp = new Map<string, number>();
  for (const e of a.events) {
    if (e.type === "suspended" && !firstSusp.has(e.webhookId)) firstSusp.set(e.webhookId, e.time);
  }
  const shown = eps.filter((e, i) => i < TABLE_ROWS || e.policies[0].suspensions > 0);
  await out.records(
    shown.map((ep) => {
      const t = ep.policies[0];
      const fs = firstSusp.get(ep.webhookId);
      return {
        webhookId: ep.webhookId,
        attempts: ep.attempts,
        suspensions: t.suspensions,
        firstSuspended: fs === undefined ? "-" : iso(fs),
        peak: t.peakRate < 0 ? "-" : `${pct(t.peakRate)} (${t.peakErrors}/${t.peakAttempts})`,
        suppressed: t.suppressed,
      };
    }),
    WEBHOOK_COLUMNS,
  );
  if (shown.length < eps.length) {
    await out.write(`... and ${eps.length - shown.length} more webhooks, none suspended.\n`);
  }
  if (a.events.length > 0) {
    await out.write("\n");
    await out.records(
      a.events.map((e) =>
        e.type === "enabled"
          ? { time: iso(e.time), webhookId: e.webhookId, what: "re-enabled", window: "" }
          : {
            time: iso(e.time),
            webhookId: e.webhookId,
            what: `suspended (${e.reason})`,
            window: `${pct(e.errorRate)} (${e.errors}/${e.attempts})`,
            bandSince: e.bandSince === undefined ? "" : iso(e.bandSince),
          }
      ),
      SUSPENSION_COLUMNS,
    );
  }
  await out.write(
    `\n${result.webhooks} webhook(s), ${result.attempts} attempt(s), ${a.suspensions} suspension(s), ${a.suppressed} suppressed attempt(s), ${invalidLines} invalid line(s).\n`,
  );
}

/** One table row per notification line (a cell without a value shows as "-"). */
async function* notificationTableRows(json: AsyncIterable<string>) {
  for await (const text of json) yield JSON.parse(text);
}

/** The columns of the notification table. */
export const NOTIFICATION_COLUMNS: Column[] = [
  { header: "notification", value: "notificationId", width: 24 },
  { header: "webhook", value: "webhookId", width: 24 },
  { header: "status", value: "status", width: 11 },
  { header: "attempts", value: "attempts", width: 8 },
  { header: "last sent", value: "lastSentTime", width: 24 },
  { header: "next attempt", value: "nextAttemptAt" },
];

/** The table view of a `--compare` run: per webhook, suspensions avoided and gained. */
export async function printComparison(out: Output, result: SimulationResult, invalidLines: number) {
  const rows = compareEndpoints(result);
  const [a, b] = result.policies;
  const summary = comparisonSummary(result, rows, invalidLines);
  const { avoided, gained } = summary;
  if (out.format === "table") {
    const policy = (c: BreakerConfig) =>
      `above ${c.immediateAbove} at once; from ${c.sustainedFrom} for ${
        formatDuration(c.sustainedForMs)
      }; window ${formatDuration(c.windowMs)}; min ${c.minAttempts} attempt(s)${
        c.bandResetsAfterIdleMs === null
          ? ""
          : `; band reset after ${formatDuration(c.bandResetsAfterIdleMs)} idle`
      }`;
    await out.write(
      `A (the flags):   ${policy(a.config)}\nB (--compare):  ${policy(b.config)}\n\n`,
    );
    await out.records(
      rows.map((r) => ({ ...r, avoided: r.avoided.length, gained: r.gained.length })),
      COMPARE_COLUMNS,
    );
    await out.write(
      `\nA: ${a.suspensions} suspension(s), ${a.suppressed} suppressed attempt(s). B: ${b.suspensions} suspension(s), ${b.suppressed} suppressed attempt(s).\n` +
        `B avoids ${avoided} and adds ${gained} suspension(s) across ${summary.webhooksChanged} webhook(s); ${result.webhooks} webhook(s), ${result.attempts} attempt(s), ${invalidLines} invalid line(s).\n`,
    );
    return;
  }
  if (out.format === "json") {
    return await out.object({ comparisons: rows.map(comparisonRecord), summary });
  }
  await out.records([...rows.map(comparisonRecord), summary], []);
}

/**
 * The notification lines of `result` as JSON texts: those that reached their final status
 * (from `spill`, in the order they did), then those still in progress.
 */
export async function* notificationJson(
  spill: NotificationSpill,
  result: SimulationResult,
): AsyncGenerator<string> {
  for await (const [, json] of spill.entries()) yield json;
  for (const r of notificationRecords(result)) yield JSON.stringify(r);
}

/**
 * Writes `result` in `out`'s format: the comparison when it holds two policies, else the table
 * view, or the events, the notification lines (when `notifications` gives them) and the summary
 * as one JSON document or as NDJSON. Long outputs are written as they go.
 *
 * @example
 * ```ts
 * import type { Output } from "../output.ts";
 * import type { SimulationResult } from "../../webhooks/mod.ts";
 * import type { NotificationSpill } from "../../breaker/mod.ts";
 * declare const out: Output, result: SimulationResult, spill: NotificationSpill;
 * await printResult(out, result, 0, () => notificationJson(spill, result));
 * ```
 */
export async function printResult(
  out: Output,
  result: SimulationResult,
  invalidLines: number,
  notifications: (() => AsyncIterable<string>) | undefined,
): Promise<void> {
  if (result.policies.length === 2) return await printComparison(out, result, invalidLines);
  if (out.format === "table") {
    await printTable(out, result, invalidLines);
    if (notifications) {
      await out.write("\n");
      await out.records(notificationTableRows(notifications()), NOTIFICATION_COLUMNS);
    }
    return;
  }
  const events = result.policies[0].events;
  const summary = summaryRecord(result, invalidLines);
  if (out.format === "json" && !notifications) {
    return await out.object({ events: events.map(eventRecord), summary });
  }
  // long outputs are written as they go, in pieces of about 64 KiB
  let buf = "";
  const put = async (text: string) => {
    buf += text;
    if (buf.length > 65536) {
      await out.write(buf);
      buf = "";
    }
  };
  if (out.format === "json") {
    // JSON.stringify({ events, notifications, summary }, null, 2)
    const indent = (v: unknown, by: string) => JSON.stringify(v, null, 2).replaceAll("\n", by);
    await put(`{\n  "events": ${indent(events.map(eventRecord), "\n  ")},\n  "notifications": [`);
    let n = 0;
    for await (const json of notifications!()) {
      await put(`${n++ === 0 ? "" : ","}\n    ${indent(JSON.parse(json), "\n    ")}`);
    }
    await out.write(
      `${buf}${n === 0 ? "]" : "\n  ]"},\n  "summary": ${indent(summary, "\n  ")}\n}\n`,
    );
    return;
  }
  for (const e of events) await put(JSON.stringify(eventRecord(e)) + "\n");
  for await (const json of notifications?.() ?? []) await put(json + "\n");
  await out.write(buf + JSON.stringify(summary) + "\n");
}
