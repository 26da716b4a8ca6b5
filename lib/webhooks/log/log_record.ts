/**
 * One line of a delivery log (`../shared/spec/breaker.md` §4): the
 * {@linkcode LogRecord} type, the one validator that every reader path goes
 * through ({@linkcode fieldsToRecord}: the byte scanner, the `JSON.parse`
 * fallback and CSV hand it the same JavaScript values, so they give the same
 * records and the same errors), and the `JSON.parse` fallback itself
 * ({@linkcode parseJsonLine}).
 *
 * @module
 */

import { FAILURE_REASONS } from "../retry_schedule.ts";
import { InvalidLineError } from "./delivery_log_error.ts";

/** One valid line of a delivery log. */
export interface LogRecord {
  /** 1-based line number in the input (the CSV header is line 1). */
  line: number;
  /** The endpoint. */
  webhookId: string;
  /** `sentTime` (or `time`) in epoch ms. */
  time: number;
  /** An attempt, or a control line re-enabling the endpoint. */
  kind: "attempt" | "enable";
  /** The HTTP status of an attempt, if it got one. */
  responseCode: number | undefined;
  /** `TIMED_OUT` or `NO_RESPONSE` for an attempt without status. */
  failureReason: "TIMED_OUT" | "NO_RESPONSE" | undefined;
  /** The notification, if given (and asked for: the reader's `notificationIds` option). */
  notificationId: string | undefined;
  /** The attempt's duration in ms, if given. Reported, not used. */
  duration: number | undefined;
  /**
   * The reader's dense index of `webhookId` (0, 1, 2, ... in first-seen
   * order; the same id always gets the same index within one read), or -1
   * or absent when unknown. A hint that spares the replay a string lookup.
   */
  webhookIndex?: number;
}

const ISO_RE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:?\d{2})$/;
const DIGITS_RE = /^\d+$/;
const MAX_TIME = 8.64e15;

/**
 * A value as an error message quotes it: JSON, cut to 60 characters.
 *
 * @example
 * ```ts
 * describeValue("slow"); // "\"slow\""
 * ```
 */
export function describeValue(v: unknown): string {
  const s = JSON.stringify(v);
  return s === undefined ? String(v) : s.length > 60 ? s.slice(0, 57) + "..." : s;
}

/** The fields of one line as found (a parsed object, a CSV row, the scanner's values, an API attempt). */
export interface LogFields {
  /** `webhookId`. */
  webhookId?: unknown;
  /** `sentTime`. */
  sentTime?: unknown;
  /** `time` (read when `sentTime` is absent). */
  time?: unknown;
  /** `responseCode`. */
  responseCode?: unknown;
  /** `failureReason`. */
  failureReason?: unknown;
  /** `notificationId`. */
  notificationId?: unknown;
  /** `action`. */
  action?: unknown;
  /** `duration`. */
  duration?: unknown;
}

/**
 * The fields a line may name, in this order (a CSV header's columns; the
 * byte scanner's keys, numbered from 1 in this order); others are ignored.
 */
export const LOG_FIELDS = [
  "webhookId",
  "sentTime",
  "time",
  "responseCode",
  "failureReason",
  "notificationId",
  "action",
  "duration",
] as const satisfies readonly (keyof LogFields)[];

/**
 * Checks the fields of one line and fills `out` (reused between lines for
 * speed). Returns `null`, or the {@linkcode InvalidLineError} to report.
 * The one validator behind the scanner, `JSON.parse`, CSV and platform paths.
 *
 * @example
 * ```ts
 * const rec = emptyRecord();
 * fieldsToRecord(rec, 1, { webhookId: "w1", sentTime: 1767225600000, responseCode: 200 }); // null
 * ```
 */
export function fieldsToRecord(
  out: LogRecord,
  line: number,
  fields: LogFields,
): InvalidLineError | null {
  let { webhookId, duration } = fields;
  const { sentTime, time, responseCode, failureReason, notificationId, action } = fields;
  if (typeof webhookId === "number" && Number.isFinite(webhookId)) webhookId = String(webhookId);
  if (typeof webhookId !== "string" || webhookId === "") {
    return new InvalidLineError(
      line,
      "webhookId",
      webhookId === undefined || webhookId === null || webhookId === ""
        ? "webhookId is missing: every line names its endpoint"
        : `webhookId ${describeValue(webhookId)} is not a text`,
    );
  }
  let t = sentTime ?? time;
  const tName = sentTime !== undefined && sentTime !== null ? "sentTime" : "time";
  if (t === undefined || t === null) {
    return new InvalidLineError(line, "sentTime", "sentTime (or time) is missing");
  }
  if (typeof t === "string") {
    if (DIGITS_RE.test(t)) t = Number(t);
    else if (ISO_RE.test(t)) t = Date.parse(t);
    else t = NaN;
  }
  if (typeof t === "number" && !Number.isNaN(t) && (!Number.isFinite(t) || t < 0 || t > MAX_TIME)) {
    // a number, but not a time a delivery can have: say which bound, never "null" for 1e400
    const shown = Number.isFinite(t) ? describeValue(sentTime ?? time) : "";
    return new InvalidLineError(
      line,
      tName,
      !Number.isFinite(t)
        ? `${tName} is a number too large to be a time (it overflows to ${t}): give epoch milliseconds or an ISO 8601 time such as 2026-01-01T00:00:00.000Z`
        : t < 0
        ? `${tName} ${shown} is before 1970-01-01T00:00:00Z: give epoch milliseconds (0 or more) or an ISO 8601 time such as 2026-01-01T00:00:00.000Z`
        : `${tName} ${shown} is after the last representable time (+275760-09-13): give epoch milliseconds or an ISO 8601 time such as 2026-01-01T00:00:00.000Z`,
    );
  }
  if (typeof t !== "number" || !Number.isFinite(t)) {
    return new InvalidLineError(
      line,
      tName,
      `${tName} ${
        describeValue(sentTime ?? time)
      } is not a time: give epoch milliseconds or an ISO 8601 time such as 2026-01-01T00:00:00.000Z`,
    );
  }
  let nid: string | undefined;
  if (typeof notificationId === "string") nid = notificationId;
  else if (typeof notificationId === "number" && Number.isFinite(notificationId)) {
    nid = String(notificationId);
  } else if (notificationId !== undefined && notificationId !== null) {
    return new InvalidLineError(
      line,
      "notificationId",
      `notificationId ${describeValue(notificationId)} is not a text`,
    );
  }
  if (typeof duration === "string" && duration !== "" && Number.isFinite(Number(duration))) {
    duration = Number(duration);
  }
  if (duration !== undefined && duration !== null && typeof duration !== "number") {
    return new InvalidLineError(
      line,
      "duration",
      `duration ${describeValue(duration)} is not a number of milliseconds`,
    );
  }
  out.line = line;
  out.webhookId = webhookId;
  out.time = t;
  out.notificationId = nid === "" ? undefined : nid;
  out.duration = (duration ?? undefined) as number | undefined;
  if (action !== undefined && action !== null) {
    if (action !== "enable") {
      return new InvalidLineError(
        line,
        "action",
        `action ${describeValue(action)} is not known: the only control line is "action": "enable"`,
      );
    }
    out.kind = "enable";
    out.responseCode = undefined;
    out.failureReason = undefined;
    return null;
  }
  out.kind = "attempt";
  const hasCode = responseCode !== undefined && responseCode !== null;
  const hasReason = failureReason !== undefined && failureReason !== null && failureReason !== "";
  if (!hasCode && !hasReason) {
    return new InvalidLineError(
      line,
      "responseCode",
      "responseCode or failureReason is missing: an attempt has an HTTP status or a failure reason (TIMED_OUT, NO_RESPONSE)",
    );
  }
  if (hasCode && hasReason) {
    return new InvalidLineError(
      line,
      "failureReason",
      `the attempt has both responseCode ${describeValue(responseCode)} and failureReason ${
        describeValue(failureReason)
      }: give one of them`,
    );
  }
  if (hasCode) {
    if (
      typeof responseCode !== "number" || !Number.isInteger(responseCode) || responseCode < 100 ||
      responseCode > 599
    ) {
      return new InvalidLineError(
        line,
        "responseCode",
        `responseCode ${describeValue(responseCode)} is not an HTTP status (100 to 599)`,
      );
    }
    out.responseCode = responseCode;
    out.failureReason = undefined;
    return null;
  }
  if (failureReason !== "TIMED_OUT" && failureReason !== "NO_RESPONSE") {
    return new InvalidLineError(
      line,
      "failureReason",
      `failureReason ${describeValue(failureReason)} is not known: expected ${
        FAILURE_REASONS.join(" or ")
      }`,
    );
  }
  out.responseCode = undefined;
  out.failureReason = failureReason;
  return null;
}

/**
 * A record to reuse with {@linkcode fieldsToRecord}.
 *
 * @example
 * ```ts
 * const rec = emptyRecord();
 * ```
 */
export function emptyRecord(): LogRecord {
  return {
    line: 0,
    webhookId: "",
    time: 0,
    kind: "attempt",
    responseCode: undefined,
    failureReason: undefined,
    notificationId: undefined,
    duration: undefined,
    webhookIndex: -1,
  };
}

/**
 * A copy of a record (the reader reuses its record object between lines).
 *
 * @example
 * ```ts
 * const kept = copyRecord(emptyRecord());
 * ```
 */
export function copyRecord(r: LogRecord): LogRecord {
  return { ...r };
}

/**
 * Reads one JSON line with `JSON.parse` and validates it into `out`: the
 * fallback for every line the byte scanner does not read itself. Returns
 * `null`, or the {@linkcode InvalidLineError} to report.
 *
 * @example
 * ```ts
 * const rec = emptyRecord();
 * parseJsonLine('{"webhookId":"w\\u0031","sentTime":1,"responseCode":200}', 1, rec); // null
 * rec.webhookId; // "w1"
 * ```
 */
export function parseJsonLine(
  text: string,
  line: number,
  out: LogRecord,
): InvalidLineError | null {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch (e) {
    const why = e instanceof Error ? e.message.replace(/\s+/g, " ") : String(e);
    return new InvalidLineError(line, "line", `not valid JSON (${why})`);
  }
  if (typeof v !== "object" || v === null || Array.isArray(v)) {
    return new InvalidLineError(line, "line", "not a JSON object: each line is one attempt object");
  }
  return fieldsToRecord(out, line, v as LogFields);
}
