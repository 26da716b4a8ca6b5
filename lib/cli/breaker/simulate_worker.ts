/**
 * One worker thread of `breaker simulate --jobs N`: reads the whole log
 * file itself, keeps only the webhooks of its partition (the breaker and
 * retry state is per webhook, so partitions are independent), replays them,
 * posts the notification lines of notifications that reached their final
 * status in batches as it goes, then its {@linkcode PartResult} (or the
 * error that stopped it), to the thread that started it
 * ({@linkcode simulateParallel}).
 *
 * @module
 */

import { readDeliveryLog } from "../../webhooks/log/delivery_log.ts";
import { DeliveryLogError, InvalidLineError } from "../../webhooks/log/delivery_log_error.ts";
import { Simulation } from "../../webhooks/simulate.ts";
import { notificationRecord } from "../../webhooks/report.ts";
import { fileChunks } from "./file_chunks.ts";
import type { PartError, PartFinals, PartResult, PartTask } from "./simulate_parallel.ts";

/** Runs one partition; never throws (errors are posted). */
async function run(task: PartTask): Promise<PartResult | PartError> {
  try {
    // notifications that reach their final status go to the parent in batches
    let finals = "";
    let count = 0;
    const sim = new Simulation({
      policies: task.policies,
      notifications: task.notifications,
      onNotificationFinal: (n, line) => {
        finals += `${line}\t${JSON.stringify(notificationRecord(n))}\n`;
        if (++count === 4096) {
          scope.postMessage({ ok: "finals", text: finals, count } satisfies PartFinals);
          finals = "";
          count = 0;
        }
      },
    });
    let seconds: { line: number; time: number } | null = null;
    const invalid: { line: number; message: string }[] = [];
    const stats = await readDeliveryLog(
      fileChunks(task.path),
      (r) => {
        if (seconds === null && r.time > 0 && r.time < 1e11) {
          seconds = { line: r.line, time: r.time };
        }
        sim.feed(r);
      },
      {
        skipInvalid: task.skipInvalid,
        notificationIds: task.notifications,
        partition: { index: task.index, count: task.count },
        onInvalid: (e) => {
          if (invalid.length < 3) invalid.push({ line: e.line, message: e.message });
        },
      },
    );
    const result = sim.finish();
    if (count > 0) scope.postMessage({ ok: "finals", text: finals, count } satisfies PartFinals);
    return {
      ok: true,
      stats,
      seconds,
      invalid,
      webhooks: result.webhooks,
      attempts: result.attempts,
      enables: result.enables,
      timeRange: result.timeRange,
      policies: result.policies.map((p) => ({
        suspensions: p.suspensions,
        suppressed: p.suppressed,
        events: p.events,
      })),
      endpoints: result.endpoints,
      notifications: result.notifications?.toData() ?? null,
    };
  } catch (e) {
    if (e instanceof InvalidLineError) {
      return {
        ok: false,
        kind: "line",
        line: e.line,
        field: e.field,
        reason: e.reason,
        message: e.message.slice(`line ${e.line}: `.length),
      };
    }
    if (e instanceof DeliveryLogError) {
      return { ok: false, kind: "log", reason: e.reason, message: e.message, details: e.details };
    }
    return { ok: false, kind: "other", message: e instanceof Error ? e.message : String(e) };
  }
}

// deno-lint-ignore no-explicit-any
const scope = self as any;
scope.onmessage = async (ev: MessageEvent<PartTask>) => {
  scope.postMessage(await run(ev.data));
  scope.close();
};
