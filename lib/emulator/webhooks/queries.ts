/**
 * What the webhook routes read: pages of endpoints and attempts, the
 * notifications a filter selects, the delivery log and the outbox. The
 * routes and the console ask this read side, never the store (`store.ts`
 * holds the SQL; `engine.ts` the state rules and what changes state).
 *
 * @module
 */

import type { NotificationFilter, WebhookStore } from "./store.ts";
import type {
  AttemptRow,
  DeliveryLogEntry,
  NotificationRow,
  OutboxMail,
  WebhookRow,
} from "./rows.ts";

/** One page of rows kept in `seq` order, and the `seq` to continue after (none at the end). */
export interface SeqPage<T> {
  /** The rows of the page. */
  rows: T[];
  /** The last row's `seq` when more rows follow, else `null`. */
  nextAfter: number | null;
}

/** Takes `limit` rows of `rows` (read with one more to know whether another page follows). */
function pageOf<T extends { seq: number }>(rows: T[], limit: number): SeqPage<T> {
  const page = rows.slice(0, limit);
  return { rows: page, nextAfter: rows.length > limit ? page[page.length - 1].seq : null };
}

/**
 * The read side of the webhook store.
 *
 * @example
 * ```ts
 * import { WebhookStore } from "./store.ts";
 * import { DatabaseSync } from "node:sqlite";
 * const queries = new WebhookQueries(new WebhookStore(new DatabaseSync(":memory:")));
 * queries.webhooks("DESC", null, 10); // { rows: [], nextAfter: null }
 * ```
 */
export class WebhookQueries {
  readonly #store: WebhookStore;

  /** Reads `store`. */
  constructor(store: WebhookStore) {
    this.#store = store;
  }

  /** A page of endpoints after the one with `seq` `after` (from the start when `null`). */
  webhooks(order: "ASC" | "DESC", after: number | null, limit: number): SeqPage<WebhookRow> {
    return pageOf(this.#store.webhookPage(order, after, limit + 1), limit);
  }

  /** The `seq`s of the notifications `filter` selects, in its order. */
  notificationSeqs(filter: NotificationFilter): number[] {
    return this.#store.notificationSeqs(filter);
  }

  /** The notifications of `seqs` that still exist, in that order. */
  notifications(seqs: readonly number[]): NotificationRow[] {
    return seqs.map((s) => this.#store.notificationBySeq(s)).filter((n) => n !== undefined);
  }

  /** A page of a notification's attempts after the one with `seq` `after`. */
  attempts(notificationId: string, after: number, limit: number): SeqPage<AttemptRow> {
    return pageOf(this.#store.attemptPage(notificationId, after, limit + 1), limit);
  }

  /** Every attempt of a notification, oldest first. */
  allAttempts(notificationId: string): AttemptRow[] {
    return this.#store.attemptsOf(notificationId);
  }

  /** The delivery log (attempts and reactivations), of one endpoint or all. */
  deliveryLog(webhookId?: string): DeliveryLogEntry[] {
    return this.#store.deliveryLog(webhookId);
  }

  /** The suspension e-mails sent. */
  outbox(): OutboxMail[] {
    return this.#store.outbox();
  }
}
