/**
 * zod schemas of what the platform API returns (`platform-api.md`). Objects
 * are loose: fields we do not know are kept and printed as the platform sent
 * them.
 *
 * @module
 */

import { z } from "zod";

/** Webhook status values. */
export const WEBHOOK_STATUSES = ["ENABLED", "DISABLED", "SUSPENDED"] as const;
/** Notification status values. */
export const NOTIFICATION_STATUSES = ["COMPLETED", "FAILED", "IN_PROGRESS", "ON_HOLD"] as const;
/** Sortable notification fields. */
export const NOTIFICATION_SORT_FIELDS = [
  "id",
  "createdAt",
  "updatedAt",
  "status",
  "eventType",
  "resourceId",
] as const;

/** A Webhooks V2 endpoint. */
export const Webhook = z.looseObject({
  id: z.string(),
  url: z.string(),
  events: z.array(z.string()),
  status: z.string(),
  createdAt: z.number().optional(),
  updatedAt: z.number().optional(),
  description: z.string().nullish(),
});
export type Webhook = z.infer<typeof Webhook>;

/** A cursor page `{data, next, total?}`. */
export function Page<T extends z.ZodType>(item: T) {
  return z.looseObject({
    data: z.array(item),
    next: z.string().nullish(),
    total: z.number().optional(),
  });
}

/** A notification. */
export const Notification = z.looseObject({
  id: z.string(),
  createdAt: z.number(),
  updatedAt: z.number(),
  status: z.string(),
  eventType: z.string(),
  resourceId: z.string().nullish(),
});
export type Notification = z.infer<typeof Notification>;

/** One delivery attempt of a notification. */
export const NotificationAttempt = z.looseObject({
  sentTime: z.number(),
  duration: z.number().optional(),
  responseCode: z.number().nullish(),
  failureReason: z.string().nullish(),
});
export type NotificationAttempt = z.infer<typeof NotificationAttempt>;

/** Resend-failed answer: `{total}` (200 with 0, or 202 with a job Location). */
export const ResendFailedResponse = z.looseObject({ total: z.number() });

/** A resend-failed job. */
export const ResendJob = z.looseObject({
  jobId: z.string(),
  status: z.enum(["QUEUED", "IN_PROGRESS", "COMPLETED", "FAILED"]),
  processed: z.number(),
  total: z.number(),
});
export type ResendJob = z.infer<typeof ResendJob>;

/** A metric value: `{value: "55"}`. */
export const MetricValue = z.looseObject({ value: z.union([z.string(), z.number()]) });
