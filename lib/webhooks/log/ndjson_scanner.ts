/**
 * The byte scanner of the delivery-log reader, its hot path: it reads the
 * common NDJSON line shape — one flat JSON object whose values are numbers,
 * `null`, booleans or strings without escapes, keys in any order — straight
 * from the bytes, without decoding the line or building an object. Anything
 * else (escapes, nested values, invalid JSON) is left to `JSON.parse`
 * (`parseJsonLine` of `log_record.ts`); both hand the same values to
 * {@linkcode fieldsToRecord}, so they give the same records and errors.
 *
 * @module
 */

import type { InvalidLineError } from "./delivery_log_error.ts";
import { fieldsToRecord, LOG_FIELDS, type LogFields, type LogRecord } from "./log_record.ts";

const enc = new TextEncoder();
const utf8 = new TextDecoder();

/** A placeholder for a notificationId that was not decoded (only its presence counts). */
const UNDECODED = "\u0000";
/** `out.sentTime` of a number kept in `sentNum` (a number beyond 2^31 in `out` is a new heap object a line). */
const IN_SENT_NUM = Symbol("sentNum");

/** The key being read: any other key, or 1 + its index in LOG_FIELDS. */
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

/** The known keys with their closing quote, by K_ constant. */
const KEY_WORDS: Uint8Array[] = [new Uint8Array(0), ...LOG_FIELDS.map((k) => enc.encode(`${k}"`))];

/** The first letters of the known keys (all different), by byte: the K_ constant, else K_OTHER. */
const KEY_BY_FIRST = new Uint8Array(256);
for (let k = 1; k < KEY_WORDS.length; k++) KEY_BY_FIRST[KEY_WORDS[k][0]] = k;
/** The known keys (with their closing quote, 5 bytes or more) as little-endian 32-bit words at 0, 4, ..., the last at length - 4. */
const KEY_INTS: Int32Array[] = KEY_WORDS.map((w) => {
  const view = new DataView(w.buffer, w.byteOffset, w.byteLength);
  return Int32Array.from(
    { length: (w.length + 3) >> 2 },
    (_, i) => view.getInt32(Math.min(4 * i, w.length - 4), true),
  );
});

/**
 * Strings seen as webhook ids, by content, so repeated ids cost no
 * allocation: an open-addressing table keyed by a hash of the bytes (a
 * `Map` keyed by numbers was a tenth of the whole run's time). Each id gets
 * a dense index (0, 1, 2, ... in first-seen order) that the replay uses to
 * find its endpoint without hashing the string again.
 */
export class Interner {
  #mask = 1023;
  #slots = new Int32Array(1024).fill(-1);
  // by index: hash, and where its bytes are in #pool
  #hashes = new Int32Array(1024);
  #starts = new Int32Array(1024);
  #lengths = new Int32Array(1024);
  #pool = new Uint8Array(16_384);
  #used = 0;
  /** The strings by index. */
  readonly strings: string[] = [];
  /**
   * The index of the string buf[s, e), whose hash is `h` (h = h * 31 + byte
   * over its bytes, in 32 bits, as the scanner computes it while reading),
   * adding it when new; -1 once the table is full (100,000 strings).
   */
  index(buf: Uint8Array, s: number, e: number, h: number, ascii: boolean): number {
    const slots = this.#slots;
    const mask = this.#mask;
    const hashes = this.#hashes;
    const n = e - s;
    let i = mix(h) & mask;
    for (;;) {
      const k = slots[i];
      if (k === -1) break;
      if (hashes[k] === h && this.#lengths[k] === n) {
        const pool = this.#pool;
        const at = this.#starts[k] - s;
        let j = s;
        while (j < e && buf[j] === pool[at + j]) j++;
        if (j === e) return k;
      }
      i = (i + 1) & mask;
    }
    return this.#add(buf, s, e, h, ascii, i);
  }
  #add(buf: Uint8Array, s: number, e: number, h: number, ascii: boolean, slot: number): number {
    const k = this.strings.length;
    if (k >= 100_000) return -1;
    const n = e - s;
    if (k === this.#hashes.length) {
      this.#hashes = grown(this.#hashes, k * 2);
      this.#starts = grown(this.#starts, k * 2);
      this.#lengths = grown(this.#lengths, k * 2);
    }
    if (this.#used + n > this.#pool.length) {
      const pool = new Uint8Array(Math.max(this.#pool.length * 2, this.#used + n));
      pool.set(this.#pool);
      this.#pool = pool;
    }
    this.#pool.set(buf.subarray(s, e), this.#used);
    this.#starts[k] = this.#used;
    this.#lengths[k] = n;
    this.#used += n;
    this.#hashes[k] = h;
    this.#slots[slot] = k;
    this.strings.push(decode(buf, s, e, ascii));
    if (this.strings.length * 2 > this.#mask) this.#grow();
    return k;
  }
  #grow(): void {
    const size = (this.#mask + 1) * 2;
    const slots = new Int32Array(size).fill(-1);
    const mask = size - 1;
    for (let k = 0; k < this.strings.length; k++) {
      let i = mix(this.#hashes[k]) & mask;
      while (slots[i] !== -1) i = (i + 1) & mask;
      slots[i] = k;
    }
    this.#slots = slots;
    this.#mask = mask;
  }
}

/**
 * The table slot of a hash: its bits mixed first (ids such as "wh-0001",
 * "wh-0002" differ in their last bytes only, which cluster in the low bits
 * of the polynomial hash: 5.8 probes a lookup for 1,000 such ids, 1.4 mixed).
 */
function mix(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x45d9f3b);
  return h ^ (h >>> 16);
}

function grown(a: Int32Array, n: number): Int32Array<ArrayBuffer> {
  const b = new Int32Array(n);
  b.set(a);
  return b;
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

/**
 * Scans lines of the common shape straight from bytes: a flat JSON object
 * whose values are numbers, strings without escapes, `null`, `true` or
 * `false`, keys in any order. Gives -1 for anything else (the caller
 * then uses `JSON.parse`, which also decides whether the line is valid
 * JSON). Whatever it accepts, `JSON.parse` would read as the same values:
 * it checks the JSON grammar of every byte it passes (no control characters
 * or backslashes in strings, no leading zeros, nothing after the object).
 *
 * One scanner reads a whole log: it keeps the webhook ids it has seen, so
 * that a repeated id costs no allocation.
 *
 * @example
 * ```ts
 * import { emptyRecord } from "./log_record.ts";
 * const scanner = new NdjsonScanner(false);
 * const line = new TextEncoder().encode('{"webhookId":"w1","sentTime":1,"responseCode":200}');
 * const view = new DataView(line.buffer);
 * const rec = emptyRecord();
 * if (scanner.scanLine(line, 0, line.length, false, view) !== -1) scanner.record(rec, 1); // null: rec is filled
 * ```
 */
export class NdjsonScanner {
  /** The webhook ids seen so far, by their bytes. */
  readonly interner: Interner = new Interner();
  /** Whether notificationIds are decoded (else only their presence is noted). */
  readonly decodeNotificationIds: boolean;
  /**
   * The values found on the last line {@linkcode NdjsonScanner.scanLine} accepted
   * (undefined when absent; `notificationId` a placeholder when not decoded).
   */
  readonly out: Required<LogFields> = {
    webhookId: undefined,
    sentTime: undefined,
    time: undefined,
    responseCode: undefined,
    failureReason: undefined,
    notificationId: undefined,
    action: undefined,
    duration: undefined,
  };
  /** The {@linkcode Interner} index of the last line's webhookId (-1: none, or not a string). */
  webhookIndex = -1;
  /** The last line's sentTime when `out.sentTime` is IN_SENT_NUM. */
  sentNum = 0.5;
  /** A scanner; `decodeNotificationIds` false only notes whether a notificationId is given. */
  constructor(decodeNotificationIds: boolean) {
    this.decodeNotificationIds = decodeNotificationIds;
  }

  /**
   * Reads the line starting at `s` into {@linkcode NdjsonScanner.out}, and
   * finds where it ends, so that the reader need not look for newlines
   * first: with `toNewline`, the object (and spaces or tabs) must be
   * followed by "\n" before `e`, and the index of that "\n" is returned;
   * without, the line must end at `e`, which is returned. -1: not the common
   * shape, or no "\n" before `e` (nothing is known about the line: find its
   * end and use `JSON.parse`). `view` is a DataView of `buf` (made once per
   * buffer by the caller: keys are compared four bytes at a time).
   */
  scanLine(buf: Uint8Array, s: number, e: number, toNewline: boolean, view: DataView): number {
    const out = this.out;
    let webhookIndex = -1;
    let webhookId: unknown = undefined;
    let sentTime: unknown = undefined;
    let sentNum = 0;
    let time: unknown = undefined;
    let responseCode: unknown = undefined;
    let failureReason: unknown = undefined;
    let notificationId: unknown = undefined;
    let action: unknown = undefined;
    let duration: unknown = undefined;
    let p = s;
    let c = 0;
    while (p < e && ((c = buf[p]) === 32 || c === 9)) p++;
    if (p >= e || buf[p] !== 123 /* { */) return -1;
    p++;
    while (p < e && ((c = buf[p]) === 32 || c === 9)) p++;
    if (p < e && buf[p] === 125 /* } */) {
      p++;
    } else {
      for (;;) {
        // "key"
        if (p >= e || buf[p] !== 34) return -1;
        const ks = ++p;
        // a known key is told by its first byte and a few word comparisons; any other key
        // (K_OTHER) is only checked as a string
        let key = ks < e ? KEY_BY_FIRST[buf[ks]] : K_OTHER;
        if (key !== K_OTHER) {
          const word = KEY_WORDS[key];
          const n = word.length;
          if (ks + n > e) key = K_OTHER;
          else {
            // four bytes at a time, the last four overlapping (no byte loop)
            const ints = KEY_INTS[key];
            let i = 0;
            while (
              i < ints.length && view.getInt32(ks + Math.min(4 * i, n - 4), true) === ints[i]
            ) i++;
            if (i < ints.length) key = K_OTHER;
          }
          if (key !== K_OTHER) p = ks + n; // past the closing quote
        }
        if (key === K_OTHER) {
          // STOP is 1 for '"', '\\' and control characters; past the end of the
          // array the lookup is undefined, which stops too
          while (STOP[buf[p]] === 0) p++;
          if (p >= e || buf[p] !== 34) return -1;
          p++;
        }
        while (p < e && ((c = buf[p]) === 32 || c === 9)) p++;
        if (p >= e || buf[p] !== 58 /* : */) return -1;
        p++;
        while (p < e && ((c = buf[p]) === 32 || c === 9)) p++;
        if (p >= e) return -1;
        c = buf[p];
        let value: unknown;
        if (c === 34) {
          // "string" without escapes
          const vs = ++p;
          let ascii = true;
          if (key === K_WEBHOOK) {
            let h = 0;
            for (;;) {
              const b = buf[p];
              c = STOP[b];
              if (c === 0) h = (Math.imul(h, 31) + b) | 0;
              else if (c === 2) {
                ascii = false;
                h = (Math.imul(h, 31) + b) | 0;
              } else break;
              p++;
            }
            if (p >= e || buf[p] !== 34) return -1;
            webhookIndex = this.interner.index(buf, vs, p, h, ascii);
            value = webhookIndex >= 0
              ? this.interner.strings[webhookIndex]
              : decode(buf, vs, p, ascii);
            p++;
          } else {
            while ((c = STOP[buf[p]]) === 0 || c === 2) {
              if (c === 2) ascii = false;
              p++;
            }
            if (p >= e || buf[p] !== 34) return -1;
            if (key === K_REASON || key === K_ACTION) value = knownWord(buf, vs, p, ascii);
            else if (key === K_OTHER) value = undefined; // not needed
            else if (key === K_NOTIFICATION && !this.decodeNotificationIds) {
              value = p === vs ? "" : UNDECODED;
            } else value = decode(buf, vs, p, ascii);
            p++;
          }
        } else if (c === 45 || (c >= 48 && c <= 57)) {
          // number, JSON grammar: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?
          const ns = p;
          if (c === 45) {
            p++;
            if (p >= e) return -1;
            c = buf[p];
          }
          const ds = p;
          if (c < 48 || c > 57) return -1;
          // the first 8 digits in a small integer (a double per digit cost a quarter of
          // the scan), the rest (up to 15 in all, else `simple` is false) in a double
          let small = 0;
          while (p < e && (c = buf[p]) >= 48 && c <= 57 && p - ds < 8) {
            small = small * 10 + (c - 48);
            p++;
          }
          let v = small;
          while (p < e && (c = buf[p]) >= 48 && c <= 57) {
            v = v * 10 + (c - 48);
            p++;
          }
          if (p - ds > 1 && buf[ds] === 48) return -1; // a leading zero
          let simple = p - ds <= 15;
          if (p < e && buf[p] === 46 /* . */) {
            simple = false;
            p++;
            const fs = p;
            while (p < e && (c = buf[p]) >= 48 && c <= 57) p++;
            if (p === fs) return -1;
          }
          if (p < e && ((c = buf[p]) === 101 || c === 69)) {
            simple = false;
            p++;
            if (p < e && ((c = buf[p]) === 43 || c === 45)) p++;
            const xs = p;
            while (p < e && (c = buf[p]) >= 48 && c <= 57) p++;
            if (p === xs) return -1;
          }
          if (!simple) value = Number(decode(buf, ns, p, true));
          else if (key === K_SENT) {
            sentNum = buf[ns] === 45 ? -v : v;
            value = IN_SENT_NUM;
          } else value = buf[ns] === 45 ? -v : v;
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
          return -1; // objects, arrays, anything else: JSON.parse decides
        }
        switch (key) {
          case K_WEBHOOK:
            webhookId = value;
            if (typeof value !== "string") webhookIndex = -1; // a repeated key: the last counts
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
        if (p >= e) return -1;
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
        return -1;
      }
    }
    while (p < e && ((c = buf[p]) === 32 || c === 9)) p++;
    if (toNewline) {
      if (p >= e || buf[p] !== 10) return -1;
    } else if (p !== e) return -1;
    this.webhookIndex = webhookIndex;
    out.webhookId = webhookId;
    out.sentTime = sentTime;
    this.sentNum = sentNum;
    out.time = time;
    out.responseCode = responseCode;
    out.failureReason = failureReason;
    out.notificationId = notificationId;
    out.action = action;
    out.duration = duration;
    return p;
  }

  /** Validates what {@linkcode NdjsonScanner.scanLine} found into `rec`. */
  record(rec: LogRecord, line: number): InvalidLineError | null {
    const o = this.out;
    const t = this.sentNum;
    const code = o.responseCode;
    const nid = o.notificationId;
    const dur = o.duration;
    if (
      // the common attempt, checked here as fieldsToRecord would (same result, less work)
      typeof o.webhookId === "string" && o.webhookId !== "" && o.sentTime === IN_SENT_NUM &&
      t >= 0 && t <= 8.64e15 &&
      typeof code === "number" && code >= 100 && code <= 599 && Number.isInteger(code) &&
      o.failureReason === undefined && o.action === undefined &&
      (dur === undefined || typeof dur === "number") &&
      (nid === undefined || typeof nid === "string")
    ) {
      rec.line = line;
      rec.webhookId = o.webhookId as string;
      rec.time = t;
      rec.kind = "attempt";
      rec.responseCode = code;
      rec.failureReason = undefined;
      rec.notificationId = nid === "" ? undefined : nid as string | undefined;
      rec.duration = dur as number | undefined;
      return null;
    }
    if (o.sentTime === IN_SENT_NUM) o.sentTime = t;
    return fieldsToRecord(rec, line, o);
  }
}

/** 0: a plain string byte; 1: ends a string scan ('"', '\\', control); 2: a non-ASCII byte. */
const STOP = new Uint8Array(256);
for (let b = 0; b < 256; b++) STOP[b] = b === 34 || b === 92 || b < 32 ? 1 : b >= 128 ? 2 : 0;

const NULL = enc.encode("null");
const TRUE = enc.encode("true");
const FALSE = enc.encode("false");
