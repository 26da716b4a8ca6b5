/**
 * What the platform API returns (`platform-api.md`): plain interfaces for the
 * public surface, and the zod schemas that check answers at the edge. Objects
 * are loose: fields we do not know are kept and printed as the platform sent
 * them.
 *
 * zod is loaded with this module, which only the commands that talk to the
 * platform import (lazily, from `lib/cli`; the bridge with its custody
 * signer, `lib/rpc/lazy_signer.ts`, at the first send or account list):
 * `--help`, `--version` and the bridge's start-up never load it
 * (`tests/platform/zod_loading_test.ts`). A bridge without a child and
 * without `--quiet` lists the accounts in its banner, and so loads it just
 * after printing its address.
 *
 * Every platform module imports zod as a namespace (`import * as z`), not
 * `import { z }`: the bundle (`scripts/bundle.ts`) then keeps what is used,
 * with zod's English messages only, where the `z` object holds all of zod
 * and its 40-odd locales (the bundle's zod chunk: 194 KB against 774 KB).
 *
 * @module
 */

import * as z from "zod";
import { RESEND_JOB_STATUSES, type ResendJobStatus } from "../core/mod.ts";

/**
 * A string or a number (a chain id, a metric's value), with a message that
 * says both, where zod's own for a union is only "Invalid input".
 */
export function stringOrNumber(): z.ZodUnion<[z.ZodString, z.ZodNumber]> {
  return z.union([z.string(), z.number()], {
    error: (issue) =>
      `expected string or number, received ${
        issue.input === null ? "null" : Array.isArray(issue.input) ? "array" : typeof issue.input
      }`,
  });
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
export const WebhookSchema: z.ZodType<Webhook> = z.looseObject({
  id: z.string(),
  url: z.string(),
  events: z.array(z.string()),
  status: z.string(),
  createdAt: z.number().optional(),
  updatedAt: z.number().optional(),
  description: z.string().nullish(),
});

/** Checks a `{data, next, total?}` page of items checked by `item`. */
export function pageSchema<T>(item: z.ZodType<T>): z.ZodType<Page<T>> {
  return z.looseObject({
    data: z.array(item),
    next: z.string().nullish(),
    total: z.number().optional(),
  });
}

/** Checks a Notification. */
export const NotificationSchema: z.ZodType<Notification> = z.looseObject({
  id: z.string(),
  createdAt: z.number(),
  updatedAt: z.number(),
  status: z.string(),
  eventType: z.string(),
  resourceId: z.string().nullish(),
});

/** Checks a NotificationAttempt. */
export const NotificationAttemptSchema: z.ZodType<NotificationAttempt> = z.looseObject({
  sentTime: z.number(),
  duration: z.number().optional(),
  responseCode: z.number().nullish(),
  failureReason: z.string().nullish(),
});

/** Checks the resend-failed answer `{total}`. */
export const ResendFailedSchema: z.ZodType<{ total: number }> = z.looseObject({
  total: z.number(),
});

/** Checks the answer of resend by query: `{total?}` (the SDK's `ResendByQueryResponse`). */
export const ResendByQuerySchema: z.ZodType<{ total?: number }> = z.looseObject({
  total: z.number().optional(),
});

/** Checks a ResendJob. */
export const ResendJobSchema: z.ZodType<ResendJob> = z.looseObject({
  jobId: z.string(),
  status: z.enum(RESEND_JOB_STATUSES),
  processed: z.number(),
  total: z.number(),
});

/** Checks a metric `{value: "55"}`. */
export const MetricValueSchema: z.ZodType<{ value: string | number }> = z.looseObject({
  value: stringOrNumber(),
});
