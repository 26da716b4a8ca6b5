/**
 * A webhook's new notifications and status changes, by polling: the API has
 * no event stream, so each {@linkcode NotificationTail.poll} reads the list
 * endpoint sorted by `updatedAt`, newest first, only back to what the
 * previous poll saw (less 5 s of slack for clocks and equal timestamps). A
 * notification not seen before gives a `created` line (or `updated` when it
 * was created before `since`); one whose status differs from the last seen
 * gives a `status` line with `previousStatus`. Lines come in `updatedAt`
 * order. What was seen more than 10 minutes before the newest change is
 * forgotten, so a long tail holds a bounded set.
 *
 * @module
 */

import type { PlatformClient } from "./client.ts";
import { listNotifications } from "./webhooks.ts";

const SLACK_MS = 5_000;
const KEEP_MS = 10 * 60_000;

/** One change a tail reports. */
export interface TailLine {
  /** `created` (first seen), `status` (its status changed) or `updated` (first seen, older). */
  change: "created" | "status" | "updated";
  /** `updatedAt` as ISO 8601. */
  time: string;
  /** The notification's id. */
  id: string;
  /** The endpoint. */
  webhookId: string;
  /** Its event type. */
  eventType: string;
  /** Its resource, if any. */
  resourceId: string | null;
  /** Its status now. */
  status: string;
  /** The status seen before, for `status` lines. */
  previousStatus?: string;
  /** Epoch ms. */
  createdAt: number;
  /** Epoch ms. */
  updatedAt: number;
}

/**
 * The changes of one webhook's notifications since `since` (epoch ms), one poll at a time.
 *
 * @example
 * ```ts
 * import type { PlatformClient } from "./mod.ts";
 * declare const client: PlatformClient;
 * const tail = new NotificationTail(client, "w1", Date.now() - 3_600_000);
 * for (const line of await tail.poll()) console.log(line.change, line.id, line.status);
 * ```
 */
export class NotificationTail {
  #seen = new Map<string, { status: string; updatedAt: number }>();
  #watermark: number;

  /** Tails `webhookId` through `client` from `since` on. */
  constructor(
    private readonly client: PlatformClient,
    private readonly webhookId: string,
    private readonly since: number,
  ) {
    this.#watermark = since;
  }

  /** Reads what changed since the previous poll (the first: since `since`). */
  async poll(): Promise<TailLine[]> {
    const { webhookId, since } = this;
    const fresh: TailLine[] = [];
    const floor = this.#watermark - SLACK_MS;
    for await (
      const n of listNotifications(this.client, webhookId, {
        sortBy: "updatedAt",
        order: "DESC",
        pageSize: 100,
      })
    ) {
      const { createdAt, updatedAt } = n;
      if (updatedAt < floor) break;
      if (updatedAt < since) continue;
      const before = this.#seen.get(n.id);
      if (before && before.status === n.status) continue;
      const line = (
        change: TailLine["change"],
        status: string,
        at: number,
        previousStatus?: string,
      ): TailLine => ({
        change,
        time: new Date(at).toISOString(),
        id: n.id,
        webhookId,
        eventType: n.eventType,
        resourceId: n.resourceId ?? null,
        status,
        ...(previousStatus ? { previousStatus } : {}),
        createdAt,
        updatedAt: at,
      });
      if (
        !before && createdAt >= since && updatedAt > createdAt &&
        (n.status === "COMPLETED" || n.status === "FAILED")
      ) {
        // Created and delivered between two polls (or before a one-shot tail): both changes.
        // A notification reaches COMPLETED or FAILED only from IN_PROGRESS (deliveries are
        // made to IN_PROGRESS ones), the status a notification is created with.
        fresh.push(line("created", "IN_PROGRESS", createdAt));
        fresh.push(line("status", n.status, updatedAt, "IN_PROGRESS"));
        continue;
      }
      const change: TailLine["change"] = before
        ? "status"
        : createdAt >= since
        ? "created"
        : "updated";
      fresh.push(line(change, n.status, updatedAt, before?.status));
    }
    fresh.sort((a, b) => a.updatedAt - b.updatedAt || a.createdAt - b.createdAt);
    for (const l of fresh) {
      this.#seen.set(l.id, { status: l.status, updatedAt: l.updatedAt });
      if (l.updatedAt > this.#watermark) this.#watermark = l.updatedAt;
    }
    for (const [id, s] of this.#seen) {
      if (s.updatedAt < this.#watermark - KEEP_MS) this.#seen.delete(id);
    }
    return fresh;
  }
}
