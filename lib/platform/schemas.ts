/**
 * What the platform API returns (`platform-api.md`): plain interfaces for the
 * public surface, and the schemas (`shape.ts`) that check answers at the
 * edge. Objects are loose: fields we do not know are kept and printed as the
 * platform sent them.
 *
 * @module
 */

import * as s from "./shape.ts";
import { RESEND_JOB_STATUSES, type ResendJobStatus } from "../core/mod.ts";

/**
 * Anything that validates an unknown value into a `T` (a `shape.ts` check
 * fits). Kept minimal so the public API does not expose how checks are made.
 */
export interface Schema<T> {
  /** Returns the parsed value, or the issues found. */
  safeParse(value: unknown):
    | { success: true; data: T }
    | {
      success: false;
      error: { issues: ReadonlyArray<{ path: ReadonlyArray<PropertyKey>; message: string }> };
    };
}

/** A Webhooks V2 endpoint. */
export interface Webhook {
  /** The endpoint's id (UUID). */
  id: string;
  /** Where notifications are delivered. */
  url: string;
  /** Subscribed event types. */
  events: string[];
  /** `ENABLED`, `DISABLED` or `SUSPENDED`. */
  status: string;
  /** Epoch ms. */
  createdAt?: number;
  /** Epoch ms. */
  updatedAt?: number;
  /** Free text. */
  description?: string | null;
  /** Fields the platform adds. */
  [extra: string]: unknown;
}

/** A cursor page. */
export interface Page<T> {
  /** The items of this page. */
  data: T[];
  /** Cursor of the next page; null or absent on the last. */
  next?: string | null;
  /** Total count (first page only). */
  total?: number;
  /** Fields the platform adds. */
  [extra: string]: unknown;
}

/** A notification. */
export interface Notification {
  /** The notification's id. */
  id: string;
  /** Epoch ms. */
  createdAt: number;
  /** Epoch ms. */
  updatedAt: number;
  /** `COMPLETED`, `FAILED`, `IN_PROGRESS` or `ON_HOLD`. */
  status: string;
  /** e.g. `transaction.created`. */
  eventType: string;
  /** The resource the notification concerns. */
  resourceId?: string | null;
  /** Fields the platform adds (e.g. `data` with includeData). */
  [extra: string]: unknown;
}

/** One delivery attempt of a notification. */
export interface NotificationAttempt {
  /** Epoch ms. */
  sentTime: number;
  /** Milliseconds. */
  duration?: number;
  /** HTTP status, when there was an answer. */
  responseCode?: number | null;
  /** `TIMED_OUT` or `NO_RESPONSE`, when there was none. */
  failureReason?: string | null;
  /** Fields the platform adds. */
  [extra: string]: unknown;
}

/** A resend-failed job. */
export interface ResendJob {
  /** The job's id. */
  jobId: string;
  /** Where the job is. */
  status: ResendJobStatus;
  /** Notifications processed so far. */
  processed: number;
  /** Notifications to process. */
  total: number;
  /** Fields the platform adds. */
  [extra: string]: unknown;
}

/** Checks a Webhook. */
export const WebhookSchema: Schema<Webhook> = s.looseObject({
  id: s.string(),
  url: s.string(),
  events: s.array(s.string()),
  status: s.string(),
  createdAt: s.number().optional(),
  updatedAt: s.number().optional(),
  description: s.string().nullish(),
});

/** Checks a `{data, next, total?}` page of items checked by `item`. */
export function pageSchema<T>(item: Schema<T>): Schema<Page<T>> {
  return s.looseObject({
    data: s.array(s.fromSchema(item)),
    next: s.string().nullish(),
    total: s.number().optional(),
  }) as unknown as Schema<Page<T>>;
}

/** Checks a Notification. */
export const NotificationSchema: Schema<Notification> = s.looseObject({
  id: s.string(),
  createdAt: s.number(),
  updatedAt: s.number(),
  status: s.string(),
  eventType: s.string(),
  resourceId: s.string().nullish(),
});

/** Checks a NotificationAttempt. */
export const NotificationAttemptSchema: Schema<NotificationAttempt> = s.looseObject({
  sentTime: s.number(),
  duration: s.number().optional(),
  responseCode: s.number().nullish(),
  failureReason: s.string().nullish(),
});

/** Checks the resend-failed answer `{total}`. */
export const ResendFailedSchema: Schema<{ total: number }> = s.looseObject({ total: s.number() });

/** Checks the answer of resend by query: `{total?}` (the SDK's `ResendByQueryResponse`). */
export const ResendByQuerySchema: Schema<{ total?: number }> = s.looseObject({
  total: s.number().optional(),
});

/** Checks a ResendJob. */
export const ResendJobSchema: Schema<ResendJob> = s.looseObject({
  jobId: s.string(),
  status: s.enumOf(RESEND_JOB_STATUSES),
  processed: s.number(),
  total: s.number(),
});

/** Checks a metric `{value: "55"}`. */
export const MetricValueSchema: Schema<{ value: string | number }> = s.looseObject({
  value: s.union([s.string(), s.number()]),
});
