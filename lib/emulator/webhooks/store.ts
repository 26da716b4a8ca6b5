/**
 * The emulator's Webhooks V2 tables in SQLite (`node:sqlite`): endpoints,
 * notifications, attempts, resend jobs and the e-mail outbox (the signing
 * key is one of the emulator's meta values: `start.ts`). Every write that the API acknowledges is committed before the answer
 * leaves, so with `--state FILE` (WAL journal) it survives SIGKILL.
 *
 * Reactivations (an endpoint made ENABLED again) are kept in `wh_enables`
 * with the last attempt recorded before them, so that the delivery log
 * ({@linkcode WebhookStore.deliveryLog}) can show them as `action: enable`
 * lines in the right place.
 *
 * The breaker's window is not stored as a blob (it can hold millions of
 * attempts): it is rebuilt at start from the attempts table (attempts with
 * `evaluated = 1` after the endpoint's `breaker_reset_seq`), and only
 * `band_since` / `last_attempt_at` are kept on the endpoint row.
 *
 * @module
 */

import type { DatabaseSync } from "node:sqlite";
import { withTransaction } from "../store.ts";
import type { NOTIFICATION_SORT_FIELDS } from "../../core/mod.ts";
import type { WindowAttempt } from "../../webhooks/mod.ts";
import { jobFrom, webhookFrom } from "./rows.ts";
import type {
  AttemptRow,
  DeliveryLogEntry,
  JobRow,
  NotificationRow,
  OutboxMail,
  WebhookRow,
} from "./rows.ts";

const SCHEMA = `
CREATE TABLE IF NOT EXISTS wh_webhooks (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  id TEXT NOT NULL UNIQUE,
  url TEXT NOT NULL,
  events TEXT NOT NULL,
  description TEXT,
  status TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  band_since INTEGER,
  last_attempt_at INTEGER,
  breaker_reset_seq INTEGER NOT NULL DEFAULT 0,
  deleted INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS wh_notifications (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  id TEXT NOT NULL UNIQUE,
  webhook_id TEXT NOT NULL,
  event_type TEXT NOT NULL,
  resource_id TEXT,
  data TEXT NOT NULL,
  status TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  attempts INTEGER NOT NULL DEFAULT 0,
  last_sent_time INTEGER,
  next_attempt_at INTEGER,
  series INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS wh_notifications_webhook ON wh_notifications (webhook_id, created_at);
CREATE INDEX IF NOT EXISTS wh_notifications_pending ON wh_notifications (status)
  WHERE status IN ('IN_PROGRESS', 'ON_HOLD');
CREATE TABLE IF NOT EXISTS wh_attempts (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  notification_id TEXT NOT NULL,
  webhook_id TEXT NOT NULL,
  sent_time INTEGER NOT NULL,
  duration INTEGER NOT NULL,
  response_code INTEGER,
  failure_reason TEXT,
  error INTEGER NOT NULL,
  evaluated INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS wh_attempts_notification ON wh_attempts (notification_id, seq);
CREATE INDEX IF NOT EXISTS wh_attempts_webhook ON wh_attempts (webhook_id, seq);
CREATE TABLE IF NOT EXISTS wh_enables (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  webhook_id TEXT NOT NULL,
  time INTEGER NOT NULL,
  after_attempt_seq INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS wh_jobs (
  id TEXT PRIMARY KEY,
  webhook_id TEXT NOT NULL,
  status TEXT NOT NULL,
  processed INTEGER NOT NULL,
  total INTEGER NOT NULL,
  pending TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  kind TEXT NOT NULL DEFAULT 'failed',
  statuses TEXT
);
CREATE TABLE IF NOT EXISTS wh_outbox (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  webhook_id TEXT NOT NULL,
  to_addr TEXT NOT NULL,
  subject TEXT NOT NULL,
  body TEXT NOT NULL,
  created_at INTEGER NOT NULL
);
`;

type Row = Record<string, unknown>;

/** `created_at` for `createdAt`: the column of a row field. */
const snake = (field: string) => field.replace(/[A-Z]/g, (l) => `_${l.toLowerCase()}`);

/** The select list that reads each column of `fields` under its field's name. */
const columns = (fields: string) =>
  fields.split(" ").map((f) => f === snake(f) ? f : `${snake(f)} AS ${f}`).join(", ");

const WEBHOOK = columns(
  "seq id url events description status createdAt updatedAt bandSince lastAttemptAt breakerResetSeq",
);
const NOTIFICATION = columns(
  "seq id webhookId eventType resourceId data status createdAt updatedAt attempts lastSentTime nextAttemptAt series",
);
const ATTEMPT = columns(
  "seq notificationId webhookId sentTime duration responseCode failureReason error evaluated",
);
const JOB = columns("id webhookId status processed total pending createdAt kind statuses");

/** One of the notification sort keys (`NOTIFICATION_SORT_FIELDS` of the vocabulary). */
export type NotificationSortKey = (typeof NOTIFICATION_SORT_FIELDS)[number];

const SORT_COLUMNS: Record<NotificationSortKey, string> = {
  id: "id",
  createdAt: "created_at",
  updatedAt: "updated_at",
  status: "status",
  eventType: "event_type",
  resourceId: "resource_id",
};

/** Which notifications of an endpoint a listing wants, and in which order. */
export interface NotificationFilter {
  /** The endpoint. */
  webhookId: string;
  /** Created at or after (epoch ms). */
  startTime: number;
  /** Created at or before (epoch ms), when given. */
  endTime?: number;
  /** Only these statuses (all when absent or empty). */
  statuses?: readonly string[];
  /** Only these event types (all when absent or empty). */
  events?: readonly string[];
  /** Only this resource, when given. */
  resourceId?: string | null;
  /** Sort key; default `createdAt`. */
  sortBy?: NotificationSortKey;
  /** Sort direction; default `ASC`. */
  order?: "ASC" | "DESC";
}

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
 * What the routes and the console read (they change nothing but through the
 * engine): pages of endpoints and attempts, the notifications a filter
 * selects, the delivery log and the outbox.
 */
export type WebhookQueries = Pick<
  WebhookStore,
  | "webhookPage"
  | "notificationSeqs"
  | "notifications"
  | "attemptPage"
  | "attemptsOf"
  | "deliveryLog"
  | "outbox"
>;

/**
 * Typed access to the webhook tables of one database.
 *
 * @example
 * ```ts
 * import { DatabaseSync } from "node:sqlite";
 * const store = new WebhookStore(new DatabaseSync(":memory:"));
 * ```
 */
export class WebhookStore {
  /** The shared database. */
  readonly db: DatabaseSync;
  // deno-lint-ignore no-explicit-any
  #stmts = new Map<string, any>();
  #insertSql = new Map<string, string>();

  /** Creates the tables when missing. */
  constructor(db: DatabaseSync) {
    this.db = db;
    db.exec(SCHEMA);
    // state files made before resend-by-query jobs: add their two columns
    for (const column of ["kind TEXT NOT NULL DEFAULT 'failed'", "statuses TEXT"]) {
      try {
        db.exec(`ALTER TABLE wh_jobs ADD COLUMN ${column}`);
      } catch { /* already there */ }
    }
  }

  // deno-lint-ignore no-explicit-any
  #stmt(sql: string): any {
    let s = this.#stmts.get(sql);
    if (!s) {
      s = this.db.prepare(sql);
      this.#stmts.set(sql, s);
    }
    return s;
  }

  /**
   * Runs `fn` in one transaction. Nested calls, and calls made while the
   * connection's owner (the emulator's store) has a transaction open, join
   * the outer one.
   */
  tx<T>(fn: () => T): T {
    return withTransaction(this.db, fn);
  }

  /** A value that a state file of an earlier version kept in its own `wh_meta` table, if any. */
  legacyMeta(key: string): string | undefined {
    try {
      const sql = "SELECT value FROM wh_meta WHERE key = ?";
      return (this.db.prepare(sql).get(key) as Row | undefined)?.value as string | undefined;
    } catch {
      return undefined; // no such table: a state file made since
    }
  }

  // ---- webhooks

  /**
   * Inserts (`verb`) `row` into `table`, each field in the column of its name
   * in snake_case; returns its row id.
   */
  #insert(table: string, row: object, verb = "INSERT"): number {
    const cols = Object.keys(row);
    // the statement's text is built once per shape (this runs for every delivery attempt)
    const key = `${verb} ${table} ${cols}`;
    let sql = this.#insertSql.get(key);
    if (sql === undefined) {
      sql = `${verb} INTO ${table} (${cols.map(snake)}) VALUES (${cols.map(() => "?")})`;
      this.#insertSql.set(key, sql);
    }
    const r = this.#stmt(sql).run(...Object.values(row));
    return Number(r.lastInsertRowid);
  }

  /** Inserts an endpoint. */
  insertWebhook(
    w: Omit<WebhookRow, "seq" | "bandSince" | "lastAttemptAt" | "breakerResetSeq">,
  ): WebhookRow {
    const seq = this.#insert("wh_webhooks", { ...w, events: JSON.stringify(w.events) });
    return { ...w, seq, bandSince: null, lastAttemptAt: null, breakerResetSeq: 0 };
  }

  /** Every live endpoint. */
  allWebhooks(): WebhookRow[] {
    return this.#stmt(`SELECT ${WEBHOOK} FROM wh_webhooks WHERE deleted = 0 ORDER BY seq`).all()
      .map(webhookFrom);
  }

  /** A page of endpoints by creation order, after/before the one with `seq` `afterSeq`. */
  webhookPage(order: "ASC" | "DESC", afterSeq: number | null, limit: number): SeqPage<WebhookRow> {
    const cmp = order === "ASC" ? ">" : "<";
    const start = afterSeq ?? (order === "ASC" ? 0 : Number.MAX_SAFE_INTEGER);
    return pageOf(
      this.#stmt(
        `SELECT ${WEBHOOK} FROM wh_webhooks WHERE deleted = 0 AND seq ${cmp} ?
         ORDER BY seq ${order} LIMIT ?`,
      ).all(start, limit + 1).map(webhookFrom),
      limit,
    );
  }

  /** Updates the editable fields, status and breaker fields of an endpoint. */
  updateWebhook(w: WebhookRow): void {
    this.#stmt(
      `UPDATE wh_webhooks SET url = ?, events = ?, description = ?, status = ?, updated_at = ?,
       band_since = ?, last_attempt_at = ?, breaker_reset_seq = ? WHERE id = ?`,
    ).run(
      w.url,
      JSON.stringify(w.events),
      w.description,
      w.status,
      w.updatedAt,
      w.bandSince,
      w.lastAttemptAt,
      w.breakerResetSeq,
      w.id,
    );
  }

  /** Marks an endpoint deleted and drops its pending notifications' schedule. */
  deleteWebhook(id: string, now: number): void {
    this.#stmt("UPDATE wh_webhooks SET deleted = 1, updated_at = ? WHERE id = ?").run(now, id);
  }

  /** The highest attempt seq so far (0 when none). */
  maxAttemptSeq(): number {
    const r = this.#stmt("SELECT MAX(seq) AS m FROM wh_attempts").get() as Row;
    return (r.m as number | null) ?? 0;
  }

  /** Evaluated attempts of an endpoint after `afterSeq` with sentTime > `since`, oldest first. */
  windowAttempts(webhookId: string, afterSeq: number, since: number): AttemptRow[] {
    return this.#stmt(
      `SELECT ${ATTEMPT} FROM wh_attempts WHERE webhook_id = ? AND seq > ? AND evaluated = 1
       AND sent_time > ? ORDER BY seq`,
    ).all(webhookId, afterSeq, since);
  }

  /**
   * The time and breaker error of each attempt of an endpoint in the window
   * of `windowMs` that ends at its latest attempt: what
   * `lastActiveWindowErrors` (lib/webhooks) counts; the window itself is
   * decided there.
   */
  lastActiveAttempts(webhookId: string, windowMs: number): WindowAttempt[] {
    return this.#stmt(
      `SELECT sent_time, error FROM wh_attempts WHERE webhook_id = ?1
       AND sent_time > (SELECT MAX(sent_time) FROM wh_attempts WHERE webhook_id = ?1) - ?2`,
    ).all(webhookId, windowMs).map((r: Row) => ({
      time: r.sent_time as number,
      error: r.error === 1,
    }));
  }

  // ---- notifications

  /** Inserts a notification; returns its seq. */
  insertNotification(n: Omit<NotificationRow, "seq" | "series">): number {
    return this.#insert("wh_notifications", n);
  }

  /** A notification by seq. */
  notificationBySeq(seq: number): NotificationRow | undefined {
    return this.#stmt(`SELECT ${NOTIFICATION} FROM wh_notifications WHERE seq = ?`).get(seq);
  }

  /** The notifications of `seqs` that still exist, in that order. */
  notifications(seqs: readonly number[]): NotificationRow[] {
    return seqs.map((s) => this.notificationBySeq(s)).filter((n) => n !== undefined);
  }

  /** A notification of an endpoint by id. */
  getNotification(webhookId: string, id: string): NotificationRow | undefined {
    return this.#stmt(
      `SELECT ${NOTIFICATION} FROM wh_notifications WHERE id = ? AND webhook_id = ?`,
    ).get(id, webhookId);
  }

  /** Writes a notification's delivery fields. */
  updateNotificationProgress(n: NotificationRow): void {
    this.#stmt(
      `UPDATE wh_notifications SET status = ?, updated_at = ?, attempts = ?, last_sent_time = ?,
       next_attempt_at = ?, series = ? WHERE seq = ?`,
    ).run(n.status, n.updatedAt, n.attempts, n.lastSentTime, n.nextAttemptAt, n.series, n.seq);
  }

  /** Notifications waiting (IN_PROGRESS or ON_HOLD), optionally of one endpoint. */
  pendingNotifications(webhookId?: string): NotificationRow[] {
    return this.#stmt(
      `SELECT ${NOTIFICATION} FROM wh_notifications WHERE status IN ('IN_PROGRESS', 'ON_HOLD')
       AND (?1 IS NULL OR webhook_id = ?1) ORDER BY seq`,
    ).all(webhookId ?? null);
  }

  /** Inserts an attempt; returns its seq. */
  insertAttempt(a: Omit<AttemptRow, "seq">): number {
    return this.#insert("wh_attempts", a);
  }

  /** A page of a notification's attempts in the order they were made, after `afterSeq`. */
  attemptPage(notificationId: string, afterSeq: number, limit: number): SeqPage<AttemptRow> {
    return pageOf(
      this.#stmt(
        `SELECT ${ATTEMPT} FROM wh_attempts WHERE notification_id = ? AND seq > ? ORDER BY seq
         LIMIT ?`,
      ).all(notificationId, afterSeq, limit + 1),
      limit,
    );
  }

  /** ON_HOLD notifications of an endpoint become IN_PROGRESS, due now at the latest. */
  resumeHeld(webhookId: string, now: number): void {
    this.#stmt(
      `UPDATE wh_notifications SET status = 'IN_PROGRESS', updated_at = ?,
       next_attempt_at = MAX(COALESCE(next_attempt_at, ?), ?)
       WHERE webhook_id = ? AND status = 'ON_HOLD'`,
    ).run(now, now, now, webhookId);
  }

  /** IN_PROGRESS notifications of an endpoint become ON_HOLD. */
  holdInProgress(webhookId: string, now: number): void {
    this.#stmt(
      `UPDATE wh_notifications SET status = 'ON_HOLD', updated_at = ?
       WHERE webhook_id = ? AND status = 'IN_PROGRESS'`,
    ).run(now, webhookId);
  }

  /** Every attempt of a notification (all its series), in the order they were made. */
  attemptsOf(notificationId: string): AttemptRow[] {
    return this.#stmt(`SELECT ${ATTEMPT} FROM wh_attempts WHERE notification_id = ? ORDER BY seq`)
      .all(notificationId);
  }

  /**
   * The row ids (seqs) of an endpoint's notifications matching `filter`, in
   * the order asked (ties broken by creation order).
   */
  notificationSeqs(filter: NotificationFilter): number[] {
    const where = ["webhook_id = ?", "created_at >= ?"];
    const args: (string | number)[] = [filter.webhookId, filter.startTime];
    if (filter.endTime !== undefined) {
      where.push("created_at <= ?");
      args.push(filter.endTime);
    }
    if (filter.statuses?.length) {
      where.push(`status IN (${filter.statuses.map(() => "?").join(",")})`);
      args.push(...filter.statuses);
    }
    if (filter.events?.length) {
      where.push(`event_type IN (${filter.events.map(() => "?").join(",")})`);
      args.push(...filter.events);
    }
    if (filter.resourceId) {
      where.push("resource_id = ?");
      args.push(filter.resourceId);
    }
    const col = SORT_COLUMNS[filter.sortBy ?? "createdAt"];
    const order = filter.order === "DESC" ? "DESC" : "ASC";
    return this.db.prepare(
      `SELECT seq FROM wh_notifications WHERE ${where.join(" AND ")}
       ORDER BY ${col} ${order}, seq ${order}`,
    ).all(...args).map((r) => (r as { seq: number }).seq);
  }

  /** Records that endpoint `webhookId` was made ENABLED again at `time`, after attempt `afterAttemptSeq`. */
  insertEnable(webhookId: string, time: number, afterAttemptSeq: number): void {
    this.#stmt(
      "INSERT INTO wh_enables (webhook_id, time, after_attempt_seq) VALUES (?, ?, ?)",
    ).run(webhookId, time, afterAttemptSeq);
  }

  /**
   * The delivery log (of one endpoint, or of all) as `breaker simulate`
   * reads it: every attempt and every reactivation, ordered by time
   * (attempts by `sentTime`), ties in the order they were recorded, a
   * reactivation after the attempts recorded before it. So each endpoint's
   * lines are in time order even when attempts in flight together finished
   * out of order.
   */
  deliveryLog(webhookId?: string): DeliveryLogEntry[] {
    const where = webhookId ? "WHERE webhook_id = ?" : "";
    const sql = `SELECT * FROM (
        SELECT ${ATTEMPT}, seq AS ord, 0 AS kind FROM wh_attempts ${where}
        UNION ALL
        SELECT seq, NULL, webhook_id, time, NULL, NULL, NULL, NULL, NULL,
          after_attempt_seq AS ord, 1 AS kind FROM wh_enables ${where}
      ) ORDER BY sentTime, ord, kind, seq`;
    const rows =
      (webhookId ? this.#stmt(sql).all(webhookId, webhookId) : this.#stmt(sql).all()) as Row[];
    return rows.map(({ ord: _, kind, ...r }) =>
      kind === 1
        ? { kind: "enable", webhookId: r.webhookId as string, time: r.sentTime as number }
        : { kind: "attempt", attempt: r as unknown as AttemptRow }
    );
  }

  /** Every attempt (of one endpoint, or of all) in the order it was recorded. */
  attemptLog(webhookId?: string): AttemptRow[] {
    return webhookId
      ? this.#stmt(`SELECT ${ATTEMPT} FROM wh_attempts WHERE webhook_id = ? ORDER BY seq`).all(
        webhookId,
      )
      : this.#stmt(`SELECT ${ATTEMPT} FROM wh_attempts ORDER BY seq`).all();
  }

  // ---- jobs

  /** Inserts or replaces a job. */
  saveJob(j: JobRow): void {
    const json = { pending: JSON.stringify(j.pending), statuses: JSON.stringify(j.statuses) };
    this.#insert("wh_jobs", { ...j, ...json }, "INSERT OR REPLACE");
  }

  /** A job of one kind by id. */
  getJob(webhookId: string, id: string, kind: JobRow["kind"]): JobRow | undefined {
    const r = this.#stmt(`SELECT ${JOB} FROM wh_jobs WHERE id = ? AND webhook_id = ? AND kind = ?`)
      .get(id, webhookId, kind);
    return r ? jobFrom(r) : undefined;
  }

  /** Jobs not finished (to resume after a restart). */
  unfinishedJobs(): JobRow[] {
    return this.#stmt(`SELECT ${JOB} FROM wh_jobs WHERE status IN ('QUEUED', 'IN_PROGRESS')`).all()
      .map(jobFrom);
  }

  // ---- outbox

  /** Adds an e-mail to the outbox. */
  insertMail({ to, ...m }: OutboxMail): void {
    this.#insert("wh_outbox", { ...m, toAddr: to });
  }

  /** The outbox, oldest first. */
  outbox(): OutboxMail[] {
    return this.#stmt(
      `SELECT to_addr AS "to", ${
        columns("subject body webhookId createdAt")
      } FROM wh_outbox ORDER BY seq`,
    ).all();
  }
}
