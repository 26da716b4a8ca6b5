/**
 * The delivery-log reader of `breaker simulate` (`../shared/spec/breaker.md`
 * §4): newline-delimited JSON or CSV with a header row, gzip or not, read as
 * a stream of byte chunks so that memory never depends on the log's length.
 *
 * Speed: a byte-level scanner reads the common line shape — one flat JSON
 * object whose values are numbers, `null`, booleans or strings without
 * escapes, keys in any order — straight from the bytes, without decoding the
 * line or building an object. Anything else (escapes, nested values, invalid
 * JSON) falls back to `JSON.parse`. Both paths hand the same JavaScript
 * values to one validator ({@linkcode fieldsToRecord}), so they give the
 * same records and the same errors.
 *
 * @module
 */

import { FAILURE_REASONS } from "./retry_schedule.ts";

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
  /** The notification, if given (and asked for: see {@linkcode ReadOptions.notificationIds}). */
  notificationId: string | undefined;
  /** The attempt's duration in ms, if given. Reported, not used. */
  duration: number | undefined;
}

/** A line that cannot be used: names the line and the field. */
export class InvalidLineError extends Error {
  /** 1-based line number. */
  readonly line: number;
  /** The field at fault, or `"line"` when the line as a whole is bad. */
  readonly field: string;
  /** An error for `line`, blaming `field`. */
  constructor(line: number, field: string, message: string) {
    super(`line ${line}: ${message}`);
    this.name = "InvalidLineError";
    this.line = line;
    this.field = field;
  }
}

/** Options of {@linkcode readDeliveryLog}. */
export interface ReadOptions {
  /** Count invalid lines instead of throwing {@linkcode InvalidLineError}. Default false. */
  skipInvalid?: boolean;
  /** Decode `notificationId` (costs time; only the per-notification report needs it). Default false: records carry no notificationId. */
  notificationIds?: boolean;
  /** Called for each invalid line when skipping (e.g. to warn about the first few). */
  onInvalid?: (error: InvalidLineError) => void;
  /** Called every `progressEvery` lines with the line count. */
  onProgress?: (lines: number) => void | Promise<void>;
  /** Default 1,000,000. */
  progressEvery?: number;
}

/** What {@linkcode readDeliveryLog} counted. */
export interface ReadStats {
  /** Lines read, blank ones included. */
  lines: number;
  /** Valid records handed to the consumer. */
  records: number;
  /** Lines skipped as invalid (only with `skipInvalid`). */
  invalidLines: number;
  /** `ndjson` or `csv`, as detected from the first non-blank line. */
  format: "ndjson" | "csv" | "empty";
  /** How many lines the byte scanner read (the rest went through `JSON.parse`). */
  scanned: number;
}

const ISO_RE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:?\d{2})$/;
const DIGITS_RE = /^\d+$/;
const MAX_TIME = 8.64e15;

function describe(v: unknown): string {
  const s = JSON.stringify(v);
  return s === undefined ? String(v) : s.length > 60 ? s.slice(0, 57) + "..." : s;
}

/**
 * Checks the fields of one line and fills `out` (reused between lines for
 * speed). Returns `null`, or the {@linkcode InvalidLineError} to report.
 * The one validator behind the scanner, `JSON.parse` and CSV paths.
 *
 * @example
 * ```ts
 * const rec = emptyRecord();
 * fieldsToRecord(rec, 1, "w1", 1767225600000, undefined, 200, undefined, undefined, undefined, undefined); // null
 * ```
 */
export function fieldsToRecord(
  out: LogRecord,
  line: number,
  webhookId: unknown,
  sentTime: unknown,
  time: unknown,
  responseCode: unknown,
  failureReason: unknown,
  notificationId: unknown,
  action: unknown,
  duration: unknown,
): InvalidLineError | null {
  if (typeof webhookId === "number" && Number.isFinite(webhookId)) webhookId = String(webhookId);
  if (typeof webhookId !== "string" || webhookId === "") {
    return new InvalidLineError(
      line,
      "webhookId",
      webhookId === undefined || webhookId === null || webhookId === ""
        ? "webhookId is missing: every line names its endpoint"
        : `webhookId ${describe(webhookId)} is not a text`,
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
  if (typeof t !== "number" || !Number.isFinite(t) || Math.abs(t) > MAX_TIME) {
    return new InvalidLineError(
      line,
      tName,
      `${tName} ${
        describe(sentTime ?? time)
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
      `notificationId ${describe(notificationId)} is not a text`,
    );
  }
  if (typeof duration === "string" && duration !== "" && Number.isFinite(Number(duration))) {
    duration = Number(duration);
  }
  if (duration !== undefined && duration !== null && typeof duration !== "number") {
    return new InvalidLineError(
      line,
      "duration",
      `duration ${describe(duration)} is not a number of milliseconds`,
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
        `action ${describe(action)} is not known: the only control line is "action": "enable"`,
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
      `the attempt has both responseCode ${describe(responseCode)} and failureReason ${
        describe(failureReason)
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
        `responseCode ${describe(responseCode)} is not an HTTP status (100 to 599)`,
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
      `failureReason ${describe(failureReason)} is not known: expected ${
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

/** Reads one JSON line with `JSON.parse` and validates it. */
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
  const o = v as Record<string, unknown>;
  return fieldsToRecord(
    out,
    line,
    o.webhookId,
    o.sentTime,
    o.time,
    o.responseCode,
    o.failureReason,
    o.notificationId,
    o.action,
    o.duration,
  );
}

// ---- the byte scanner ----------------------------------------------------

const enc = new TextEncoder();
const utf8 = new TextDecoder();

/** A placeholder for a notificationId that was not decoded (only its presence counts). */
const UNDECODED = "\u0000";

const B_WEBHOOK = enc.encode("webhookId");
const B_SENT = enc.encode("sentTime");
const B_TIME = enc.encode("time");
const B_CODE = enc.encode("responseCode");
const B_REASON = enc.encode("failureReason");
const B_NOTIFICATION = enc.encode("notificationId");
const B_ACTION = enc.encode("action");
const B_DURATION = enc.encode("duration");

const K_OTHER = 0;
const K_WEBHOOK = 1;
const K_SENT = 2;
const K_TIME = 3;
const K_CODE = 4;
const K_REASON = 5;
const K_NOTIFICATION = 6;
const K_ACTION = 7;
const K_DURATION = 8;

/** buf[p, p + word.length) equals word (the caller knows the length fits). */
function same(buf: Uint8Array, p: number, word: Uint8Array): boolean {
  for (let i = 0; i < word.length; i++) if (buf[p + i] !== word[i]) return false;
  return true;
}

/** The key in buf[s, e) (without quotes) as one of the K_ constants. */
function keyOf(buf: Uint8Array, s: number, e: number): number {
  const c = buf[s];
  switch (e - s) {
    case 9:
      return c === 119 && same(buf, s, B_WEBHOOK) ? K_WEBHOOK : K_OTHER;
    case 8:
      if (c === 115) return same(buf, s, B_SENT) ? K_SENT : K_OTHER;
      return c === 100 && same(buf, s, B_DURATION) ? K_DURATION : K_OTHER;
    case 12:
      return c === 114 && same(buf, s, B_CODE) ? K_CODE : K_OTHER;
    case 13:
      return c === 102 && same(buf, s, B_REASON) ? K_REASON : K_OTHER;
    case 14:
      return c === 110 && same(buf, s, B_NOTIFICATION) ? K_NOTIFICATION : K_OTHER;
    case 4:
      return c === 116 && same(buf, s, B_TIME) ? K_TIME : K_OTHER;
    case 6:
      return c === 97 && same(buf, s, B_ACTION) ? K_ACTION : K_OTHER;
    default:
      return K_OTHER;
  }
}

/**
 * Strings seen as webhook ids, by content, so repeated ids cost no
 * allocation: an open-addressing table keyed by a hash of the bytes (a
 * `Map` keyed by numbers was a tenth of the whole run's time).
 */
class Interner {
  #mask = 1023;
  #slots = new Int32Array(1024).fill(-1);
  #hashes: number[] = [];
  #keys: Uint8Array[] = [];
  #strings: string[] = [];
  get(buf: Uint8Array, s: number, e: number, ascii: boolean): string {
    let h = e - s;
    for (let i = s; i < e; i++) h = (Math.imul(h, 31) + buf[i]) | 0;
    const slots = this.#slots;
    const mask = this.#mask;
    let i = h & mask;
    for (;;) {
      const k = slots[i];
      if (k === -1) break;
      if (this.#hashes[k] === h) {
        const key = this.#keys[k];
        if (key.length === e - s && same(buf, s, key)) return this.#strings[k];
      }
      i = (i + 1) & mask;
    }
    const str = decode(buf, s, e, ascii);
    if (this.#strings.length < 100_000) {
      slots[i] = this.#strings.length;
      this.#hashes.push(h);
      this.#keys.push(buf.slice(s, e));
      this.#strings.push(str);
      if (this.#strings.length * 2 > mask) this.#grow();
    }
    return str;
  }
  #grow(): void {
    const size = (this.#mask + 1) * 2;
    const slots = new Int32Array(size).fill(-1);
    const mask = size - 1;
    for (let k = 0; k < this.#hashes.length; k++) {
      let i = this.#hashes[k] & mask;
      while (slots[i] !== -1) i = (i + 1) & mask;
      slots[i] = k;
    }
    this.#slots = slots;
    this.#mask = mask;
  }
}

function decode(buf: Uint8Array, s: number, e: number, ascii: boolean): string {
  if (ascii && e - s < 32) {
    let str = "";
    for (let i = s; i < e; i++) str += String.fromCharCode(buf[i]);
    return str;
  }
  return utf8.decode(buf.subarray(s, e));
}

const W_TIMED_OUT = enc.encode("TIMED_OUT");
const W_NO_RESPONSE = enc.encode("NO_RESPONSE");
const W_ENABLE = enc.encode("enable");

/** The failure reasons and actions as constant strings (no allocation); anything else decoded. */
function knownWord(buf: Uint8Array, s: number, e: number, ascii: boolean): string {
  const n = e - s;
  if (n === 9 && same(buf, s, W_TIMED_OUT)) return "TIMED_OUT";
  if (n === 11 && same(buf, s, W_NO_RESPONSE)) return "NO_RESPONSE";
  if (n === 6 && same(buf, s, W_ENABLE)) return "enable";
  return decode(buf, s, e, ascii);
}

/** The values the scanner found on its last line (undefined when absent). */
interface Scanned {
  webhookId: unknown;
  sentTime: unknown;
  time: unknown;
  responseCode: unknown;
  failureReason: unknown;
  notificationId: unknown;
  action: unknown;
  duration: unknown;
}

/**
 * Scans lines of the common shape straight from bytes: a flat JSON object
 * whose values are numbers, strings without escapes, `null`, `true` or
 * `false`, keys in any order. Returns false for anything else (the caller
 * then uses `JSON.parse`, which also decides whether the line is valid
 * JSON). Whatever it accepts, `JSON.parse` would read as the same values:
 * it checks the JSON grammar of every byte it passes (no control characters
 * or backslashes in strings, no leading zeros, nothing after the object).
 */
class LineScanner {
  readonly interner = new Interner();
  readonly decodeNotificationIds: boolean;
  readonly out: Scanned = {
    webhookId: undefined,
    sentTime: undefined,
    time: undefined,
    responseCode: undefined,
    failureReason: undefined,
    notificationId: undefined,
    action: undefined,
    duration: undefined,
  };
  constructor(decodeNotificationIds: boolean) {
    this.decodeNotificationIds = decodeNotificationIds;
  }

  scan(buf: Uint8Array, s: number, e: number): boolean {
    const out = this.out;
    let webhookId: unknown = undefined;
    let sentTime: unknown = undefined;
    let time: unknown = undefined;
    let responseCode: unknown = undefined;
    let failureReason: unknown = undefined;
    let notificationId: unknown = undefined;
    let action: unknown = undefined;
    let duration: unknown = undefined;
    let p = s;
    let c = 0;
    while (p < e && ((c = buf[p]) === 32 || c === 9)) p++;
    if (p >= e || buf[p] !== 123 /* { */) return false;
    p++;
    while (p < e && ((c = buf[p]) === 32 || c === 9)) p++;
    if (p < e && buf[p] === 125 /* } */) {
      p++;
    } else {
      for (;;) {
        // "key"
        if (p >= e || buf[p] !== 34) return false;
        const ks = ++p;
        // STOP is 1 for '"', '\\' and control characters; past the end of the
        // array the lookup is undefined, which stops too
        while (STOP[buf[p]] === 0) p++;
        if (p >= e || buf[p] !== 34) return false;
        const key = keyOf(buf, ks, p);
        p++;
        while (p < e && ((c = buf[p]) === 32 || c === 9)) p++;
        if (p >= e || buf[p] !== 58 /* : */) return false;
        p++;
        while (p < e && ((c = buf[p]) === 32 || c === 9)) p++;
        if (p >= e) return false;
        c = buf[p];
        let value: unknown;
        if (c === 34) {
          // "string" without escapes
          const vs = ++p;
          let ascii = true;
          while ((c = STOP[buf[p]]) === 0 || c === 2) {
            if (c === 2) ascii = false;
            p++;
          }
          if (p >= e || buf[p] !== 34) return false;
          if (key === K_WEBHOOK) value = this.interner.get(buf, vs, p, ascii);
          else if (key === K_REASON || key === K_ACTION) value = knownWord(buf, vs, p, ascii);
          else if (key === K_OTHER) value = undefined; // not needed
          else if (key === K_NOTIFICATION && !this.decodeNotificationIds) {
            value = p === vs ? "" : UNDECODED;
          } else value = decode(buf, vs, p, ascii);
          p++;
        } else if (c === 45 || (c >= 48 && c <= 57)) {
          // number, JSON grammar: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?
          const ns = p;
          if (c === 45) {
            p++;
            if (p >= e) return false;
            c = buf[p];
          }
          const ds = p;
          let v = 0;
          if (c === 48) {
            p++;
            if (p < e && (c = buf[p]) >= 48 && c <= 57) return false;
          } else if (c >= 49 && c <= 57) {
            while (p < e && (c = buf[p]) >= 48 && c <= 57) {
              v = v * 10 + (c - 48);
              p++;
            }
          } else return false;
          let simple = p - ds <= 15;
          if (p < e && buf[p] === 46 /* . */) {
            simple = false;
            p++;
            const fs = p;
            while (p < e && (c = buf[p]) >= 48 && c <= 57) p++;
            if (p === fs) return false;
          }
          if (p < e && ((c = buf[p]) === 101 || c === 69)) {
            simple = false;
            p++;
            if (p < e && ((c = buf[p]) === 43 || c === 45)) p++;
            const xs = p;
            while (p < e && (c = buf[p]) >= 48 && c <= 57) p++;
            if (p === xs) return false;
          }
          if (simple) value = buf[ns] === 45 ? -v : v;
          else value = Number(decode(buf, ns, p, true));
        } else if (c === 110 && p + 4 <= e && same(buf, p, NULL)) {
          value = null;
          p += 4;
        } else if (c === 116 && p + 4 <= e && same(buf, p, TRUE)) {
          value = true;
          p += 4;
        } else if (c === 102 && p + 5 <= e && same(buf, p, FALSE)) {
          value = false;
          p += 5;
        } else {
          return false; // objects, arrays, anything else: JSON.parse decides
        }
        switch (key) {
          case K_WEBHOOK:
            webhookId = value;
            break;
          case K_SENT:
            sentTime = value;
            break;
          case K_TIME:
            time = value;
            break;
          case K_CODE:
            responseCode = value;
            break;
          case K_REASON:
            failureReason = value;
            break;
          case K_NOTIFICATION:
            notificationId = value;
            break;
          case K_ACTION:
            action = value;
            break;
          case K_DURATION:
            duration = value;
            break;
        }
        while (p < e && ((c = buf[p]) === 32 || c === 9)) p++;
        if (p >= e) return false;
        c = buf[p];
        if (c === 44 /* , */) {
          p++;
          while (p < e && ((c = buf[p]) === 32 || c === 9)) p++;
          continue;
        }
        if (c === 125) {
          p++;
          break;
        }
        return false;
      }
    }
    while (p < e && ((c = buf[p]) === 32 || c === 9)) p++;
    if (p !== e) return false;
    out.webhookId = webhookId;
    out.sentTime = sentTime;
    out.time = time;
    out.responseCode = responseCode;
    out.failureReason = failureReason;
    out.notificationId = notificationId;
    out.action = action;
    out.duration = duration;
    return true;
  }

  /** Validates what {@linkcode scan} found into `rec`. */
  record(rec: LogRecord, line: number): InvalidLineError | null {
    const o = this.out;
    return fieldsToRecord(
      rec,
      line,
      o.webhookId,
      o.sentTime,
      o.time,
      o.responseCode,
      o.failureReason,
      o.notificationId,
      o.action,
      o.duration,
    );
  }
}

/** 0: a plain string byte; 1: ends a string scan ('"', '\\', control); 2: a non-ASCII byte. */
const STOP = new Uint8Array(256);
for (let b = 0; b < 256; b++) STOP[b] = b === 34 || b === 92 || b < 32 ? 1 : b >= 128 ? 2 : 0;

const NULL = enc.encode("null");
const TRUE = enc.encode("true");
const FALSE = enc.encode("false");

/**
 * Reads one NDJSON line from bytes with the scanner, falling back to
 * `JSON.parse` (or with `JSON.parse` only). Exposed so that tests can check
 * that both paths agree.
 *
 * @example
 * ```ts
 * const r = parseNdjsonLine(new TextEncoder().encode('{"webhookId":"w","sentTime":1,"responseCode":200}'), 1);
 * ```
 */
export function parseNdjsonLine(
  bytes: Uint8Array,
  line: number,
  options: { notificationIds?: boolean; jsonParseOnly?: boolean } = {},
): { record: LogRecord | null; error: InvalidLineError | null; scanned: boolean } {
  const sc = new LineScanner(options.notificationIds ?? true);
  const rec = emptyRecord();
  if (!options.jsonParseOnly && sc.scan(bytes, 0, bytes.length)) {
    const err = sc.record(rec, line);
    return { record: err ? null : rec, error: err, scanned: true };
  }
  const err = parseJsonLine(utf8.decode(bytes), line, rec);
  return { record: err ? null : rec, error: err, scanned: false };
}

// ---- CSV -------------------------------------------------------------------

/** Splits one CSV line (RFC 4180 quoting; no newlines inside a field). Null: bad quoting. */
export function splitCsvLine(text: string): string[] | null {
  const out: string[] = [];
  let i = 0;
  for (;;) {
    if (text[i] === '"') {
      let v = "";
      i++;
      for (;;) {
        const q = text.indexOf('"', i);
        if (q === -1) return null;
        v += text.slice(i, q);
        if (text[q + 1] === '"') {
          v += '"';
          i = q + 2;
          continue;
        }
        i = q + 1;
        break;
      }
      out.push(v);
      while (text[i] === " " || text[i] === "\t") i++;
      if (i >= text.length) return out;
      if (text[i] !== ",") return null;
      i++;
    } else {
      const c = text.indexOf(",", i);
      if (c === -1) {
        out.push(text.slice(i).trim());
        return out;
      }
      out.push(text.slice(i, c).trim());
      i = c + 1;
    }
  }
}

const CSV_FIELDS = [
  "webhookId",
  "sentTime",
  "time",
  "responseCode",
  "failureReason",
  "notificationId",
  "action",
  "duration",
] as const;
const NUMBER_RE = /^-?\d+(\.\d+)?$/;

class CsvReader {
  readonly index: Record<(typeof CSV_FIELDS)[number], number>;
  constructor(header: string[], line: number) {
    const idx = {} as Record<(typeof CSV_FIELDS)[number], number>;
    for (const f of CSV_FIELDS) idx[f] = header.indexOf(f);
    if (idx.webhookId === -1 || (idx.sentTime === -1 && idx.time === -1)) {
      throw new InvalidLineError(
        line,
        idx.webhookId === -1 ? "webhookId" : "sentTime",
        `not a JSON object, and not a CSV header naming webhookId and sentTime (got ${
          describe(header.join(","))
        })`,
      );
    }
    this.index = idx;
  }
  read(text: string, line: number, out: LogRecord): InvalidLineError | null {
    const cells = splitCsvLine(text);
    if (cells === null) return new InvalidLineError(line, "line", "bad CSV quoting");
    const get = (f: (typeof CSV_FIELDS)[number], numeric: boolean): unknown => {
      const i = this.index[f];
      if (i === -1 || i >= cells.length) return undefined;
      const v = cells[i];
      if (v === "") return undefined;
      return numeric && NUMBER_RE.test(v) ? Number(v) : v;
    };
    return fieldsToRecord(
      out,
      line,
      get("webhookId", false),
      get("sentTime", true),
      get("time", true),
      get("responseCode", true),
      get("failureReason", false),
      get("notificationId", false),
      get("action", false),
      get("duration", true),
    );
  }
}

// ---- the stream ----------------------------------------------------------

/**
 * Reads a whole delivery log from byte chunks (already decompressed) and
 * calls `onRecord` for each valid line, in input order. The record object
 * is reused: copy it ({@linkcode copyRecord}) to keep it. Throws
 * {@linkcode InvalidLineError} for the first invalid line unless
 * `skipInvalid`; errors thrown by `onRecord` propagate.
 *
 * @example
 * ```ts
 * const file = await Deno.open("log.ndjson");
 * const stats = await readDeliveryLog(file.readable, (r) => console.log(r.webhookId));
 * ```
 */
export async function readDeliveryLog(
  chunks: AsyncIterable<Uint8Array>,
  onRecord: (r: LogRecord) => void,
  options: ReadOptions = {},
): Promise<ReadStats> {
  const decodeNids = options.notificationIds ?? false;
  const scanner = new LineScanner(decodeNids);
  const rec = emptyRecord();
  const stats: ReadStats = { lines: 0, records: 0, invalidLines: 0, format: "empty", scanned: 0 };
  let csv: CsvReader | null = null;
  let lineNo = 0;
  const progressEvery = options.progressEvery ?? 1_000_000;
  let nextProgress = progressEvery;
  let first = true;

  const invalid = (err: InvalidLineError) => {
    if (!options.skipInvalid) throw err;
    stats.invalidLines++;
    options.onInvalid?.(err);
  };

  /** One line, buf[s, e) without "\n". */
  const handle = (buf: Uint8Array, s: number, e: number) => {
    lineNo++;
    if (e > s && buf[e - 1] === 13) e--; // CRLF
    if (first) {
      if (e - s >= 3 && buf[s] === 0xef && buf[s + 1] === 0xbb && buf[s + 2] === 0xbf) s += 3;
      let p = s;
      while (p < e && (buf[p] === 32 || buf[p] === 9)) p++;
      if (p === e) return; // blank
      first = false;
      if (buf[p] !== 123) {
        stats.format = "csv";
        const header = splitCsvLine(utf8.decode(buf.subarray(s, e)));
        if (header === null) throw new InvalidLineError(lineNo, "line", "bad CSV quoting");
        csv = new CsvReader(header, lineNo);
        return;
      }
      stats.format = "ndjson";
    }
    let err: InvalidLineError | null;
    if (csv !== null) {
      const text = utf8.decode(buf.subarray(s, e));
      if (text.trim() === "") return;
      err = (csv as CsvReader).read(text, lineNo, rec);
    } else if (scanner.scan(buf, s, e)) {
      stats.scanned++;
      err = scanner.record(rec, lineNo);
    } else {
      let p = s;
      while (p < e && (buf[p] === 32 || buf[p] === 9)) p++;
      if (p === e) return; // blank
      err = parseJsonLine(utf8.decode(buf.subarray(s, e)), lineNo, rec);
    }
    if (err !== null) {
      invalid(err);
      return;
    }
    if (!decodeNids) rec.notificationId = undefined;
    stats.records++;
    onRecord(rec);
  };

  let carry: Uint8Array | null = null;
  for await (const chunk of chunks) {
    let start = 0;
    if (carry !== null) {
      const nl = chunk.indexOf(10);
      if (nl === -1) {
        const joined: Uint8Array = new Uint8Array(carry.length + chunk.length);
        joined.set(carry);
        joined.set(chunk, carry.length);
        carry = joined;
        continue;
      }
      const joined = new Uint8Array(carry.length + nl);
      joined.set(carry);
      joined.set(chunk.subarray(0, nl), carry.length);
      carry = null;
      handle(joined, 0, joined.length);
      start = nl + 1;
    }
    for (;;) {
      const nl = chunk.indexOf(10, start);
      if (nl === -1) break;
      handle(chunk, start, nl);
      start = nl + 1;
    }
    if (start < chunk.length) carry = chunk.slice(start);
    if (lineNo >= nextProgress && options.onProgress) {
      nextProgress = lineNo + progressEvery;
      await options.onProgress(lineNo);
    }
  }
  if (carry !== null && carry.length > 0) handle(carry, 0, carry.length);
  stats.lines = lineNo;
  return stats;
}

/**
 * The byte chunks of a file or standard input, gunzipped when the data
 * starts with the gzip magic bytes (whatever the file is called).
 *
 * @example
 * ```ts
 * for await (const chunk of decompressIfGzip(Deno.stdin.readable)) { }
 * ```
 */
export async function* decompressIfGzip(
  source: ReadableStream<Uint8Array> | AsyncIterable<Uint8Array>,
): AsyncGenerator<Uint8Array> {
  const it = (source as AsyncIterable<Uint8Array>)[Symbol.asyncIterator]();
  let head = await it.next();
  while (!head.done && head.value.length === 0) head = await it.next();
  if (head.done) return;
  const firstChunk = head.value;
  if (firstChunk.length >= 2 && firstChunk[0] === 0x1f && firstChunk[1] === 0x8b) {
    const rest = new ReadableStream<Uint8Array>({
      start(c) {
        c.enqueue(firstChunk);
      },
      async pull(c) {
        const n = await it.next();
        if (n.done) c.close();
        else c.enqueue(n.value);
      },
      async cancel() {
        await it.return?.();
      },
    });
    yield* rest.pipeThrough(
      new DecompressionStream("gzip") as unknown as TransformStream<Uint8Array, Uint8Array>,
    );
    return;
  }
  yield firstChunk;
  for (;;) {
    const n = await it.next();
    if (n.done) return;
    yield n.value;
  }
}

/**
 * The chunks of a file, read with a large buffer (faster than its
 * `readable`, which hands out small chunks). With `reuse`, one buffer is
 * read into again and again (no fresh pages, no garbage): each chunk is
 * then valid only until the next one is asked for — fine for
 * {@linkcode readDeliveryLog}, which copies what it keeps.
 *
 * @example
 * ```ts
 * for await (const chunk of readFileChunks("log.ndjson")) { }
 * ```
 */
export async function* readFileChunks(
  path: string,
  options: { bufferSize?: number; reuse?: boolean } = {},
): AsyncGenerator<Uint8Array> {
  const size = options.bufferSize ?? 1 << 20;
  const file = await Deno.open(path, { read: true });
  try {
    let buf = new Uint8Array(size);
    for (;;) {
      if (!options.reuse) buf = new Uint8Array(size);
      // fill the buffer (a read may return less than asked)
      let n = 0;
      while (n < size) {
        const r = await file.read(buf.subarray(n));
        if (r === null) break;
        n += r;
      }
      if (n === 0) return;
      yield n === size ? buf : buf.subarray(0, n);
      if (n < size) return;
    }
  } finally {
    file.close();
  }
}

/**
 * The decompressed chunks of a delivery log file: gunzipped when it starts
 * with the gzip magic bytes (whatever its name), else read with one reused
 * buffer (see {@linkcode readFileChunks}).
 *
 * @example
 * ```ts
 * await readDeliveryLog(openLogFile("deliveries.ndjson.gz"), (r) => {});
 * ```
 */
export async function* openLogFile(path: string): AsyncGenerator<Uint8Array> {
  const head = new Uint8Array(2);
  const file = await Deno.open(path, { read: true });
  let n = 0;
  try {
    while (n < 2) {
      const r = await file.read(head.subarray(n));
      if (r === null) break;
      n += r;
    }
  } finally {
    file.close();
  }
  if (n === 2 && head[0] === 0x1f && head[1] === 0x8b) {
    yield* decompressIfGzip(readFileChunks(path));
  } else {
    yield* readFileChunks(path, { reuse: true });
  }
}
