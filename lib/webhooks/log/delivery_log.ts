/**
 * The delivery-log reader of `breaker simulate` (`../shared/spec/breaker.md`
 * §4): newline-delimited JSON or CSV with a header row, gzip or not, read
 * from any stream of byte chunks (the command opens the file or standard
 * input) so that memory never depends on the log's length. Pure: no file
 * access here.
 *
 * It composes the parts of this folder: `gzip.ts` (gunzip by the magic
 * bytes), `ndjson_scanner.ts` (the byte scanner, for the common line shape),
 * `log_record.ts` (the one validator, and `JSON.parse` for the rest of
 * NDJSON), `csv.ts` (CSV lines), `delivery_log_error.ts` (the errors).
 *
 * @module
 */

import { CsvReader, splitCsvLine } from "./csv.ts";
import { InvalidLineError } from "./delivery_log_error.ts";
import { decompressIfGzip } from "./gzip.ts";
import { emptyRecord, type LogRecord, parseJsonLine } from "./log_record.ts";
import { NdjsonScanner } from "./ndjson_scanner.ts";

const utf8 = new TextDecoder();

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
  /**
   * Read only the webhooks of one partition (`--jobs`): records whose
   * {@linkcode webhookPartition} is not `index` are not handed out, and an
   * invalid line is reported (thrown or counted) only by the partition that
   * {@linkcode lineClaim} names, so that N readers with indexes 0..N-1 see
   * every record and every invalid line exactly once between them.
   */
  partition?: { index: number; count: number };
}

/**
 * The partition (0..count-1) of a webhook: a hash of its UTF-16 code units.
 *
 * @example
 * ```ts
 * webhookPartition("wh-0001", 2); // 0 or 1, always the same
 * ```
 */
export function webhookPartition(webhookId: string, count: number): number {
  let h = 0;
  for (let i = 0; i < webhookId.length; i++) h = (Math.imul(h, 31) + webhookId.charCodeAt(i)) | 0;
  return (h >>> 0) % count;
}

const PREFIX = new TextEncoder().encode('{"webhookId":"');

/** 1 for the bytes of a plain ASCII string (no quote, backslash or control character). */
const PLAIN = new Uint8Array(256);
for (let b = 32; b < 128; b++) PLAIN[b] = b === 34 || b === 92 ? 0 : 1;

/**
 * Which partition answers for the line buf[s, e) if it is invalid: when it
 * starts with `{"webhookId":"` and a plain ASCII id, that id's partition
 * (the same as {@linkcode webhookPartition}), else 0. A function of the
 * bytes only, so that every reader agrees. Returns the partition and, in
 * `claimEnd`, where the id ends (-1: no such prefix).
 *
 * @example
 * ```ts
 * const b = new TextEncoder().encode('{"webhookId":"w1","sentTime":1}');
 * lineClaim(b, 0, b.length, 2) === webhookPartition("w1", 2); // true
 * ```
 */
export function lineClaim(buf: Uint8Array, s: number, e: number, count: number): number {
  claimEnd = -1;
  if (e - s <= PREFIX.length) return 0;
  for (let i = 0; i < PREFIX.length; i++) if (buf[s + i] !== PREFIX[i]) return 0;
  let p = s + PREFIX.length;
  let h = 0;
  while (p < e && PLAIN[buf[p]] === 1) h = (Math.imul(h, 31) + buf[p++]) | 0;
  if (p >= e || buf[p] !== 34 || p === s + PREFIX.length) return 0;
  claimEnd = p;
  return (h >>> 0) % count;
}

/** 1 for "\n", "k" and "\\": where skipping another partition's line stops. */
const SKIP_STOP = new Uint8Array(256);
SKIP_STOP[10] = 1;
SKIP_STOP[107] = 1;
SKIP_STOP[92] = 1;

/** Where the id of the last {@linkcode lineClaim} ended (-1: no prefix). */
let claimEnd = -1;

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

/**
 * Reads a whole delivery log from byte chunks (gunzipped first when they
 * start with the gzip magic bytes) and calls `onRecord` for each valid line,
 * in input order. The chunks may share one buffer (each valid until the next
 * is asked for). The record object is reused: copy it
 * (`copyRecord` of `log_record.ts`) to keep it. Throws {@linkcode InvalidLineError}
 * for the first invalid line unless `skipInvalid`, and
 * a `DeliveryLogError` `corrupt-gzip` for gzip data that does not
 * decompress; errors of the chunks' source and of `onRecord` propagate.
 *
 * @example
 * ```ts
 * const log = new TextEncoder().encode('{"webhookId":"w1","sentTime":1767225600000,"responseCode":503}\n');
 * const ids: string[] = [];
 * const stats = await readDeliveryLog(ReadableStream.from([log]), (r) => ids.push(r.webhookId));
 * stats.records; // 1
 * ```
 */
export async function readDeliveryLog(
  chunks: AsyncIterable<Uint8Array>,
  onRecord: (r: LogRecord) => void,
  options: ReadOptions = {},
): Promise<ReadStats> {
  const decodeNids = options.notificationIds ?? false;
  const scanner = new NdjsonScanner(decodeNids);
  const rec = emptyRecord();
  const stats: ReadStats = { lines: 0, records: 0, invalidLines: 0, format: "empty", scanned: 0 };
  let csv: CsvReader | null = null;
  let lineNo = 0;
  const progressEvery = options.progressEvery ?? 1_000_000;
  let nextProgress = progressEvery;
  let first = true;

  const part = options.partition ?? null;
  const partIndex = part?.index ?? 0;
  const partCount = part?.count ?? 1;
  // partition of each interned webhook id (-1: not computed yet)
  const partOf: number[] = [];
  /** Whether the record (valid) belongs to this reader's partition. */
  const mine = (r: LogRecord): boolean => {
    if (part === null) return true;
    const k = r.webhookIndex ?? -1;
    if (k < 0) return webhookPartition(r.webhookId, partCount) === partIndex;
    let q = partOf[k];
    if (q === undefined) partOf[k] = q = webhookPartition(r.webhookId, partCount);
    return q === partIndex;
  };

  const invalid = (err: InvalidLineError, buf: Uint8Array, s: number, e: number) => {
    if (part !== null && lineClaim(buf, s, e, partCount) !== partIndex) return; // another's
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
      rec.webhookIndex = -1;
    } else if (scanner.scan(buf, s, e)) {
      stats.scanned++;
      err = scanner.record(rec, lineNo);
      rec.webhookIndex = scanner.webhookIndex;
    } else {
      let p = s;
      while (p < e && (buf[p] === 32 || buf[p] === 9)) p++;
      if (p === e) return; // blank
      err = parseJsonLine(utf8.decode(buf.subarray(s, e)), lineNo, rec);
      rec.webhookIndex = -1;
    }
    if (err !== null) {
      invalid(err, buf, s, e);
      return;
    }
    if (!mine(rec)) return;
    if (!decodeNids) rec.notificationId = undefined;
    stats.records++;
    onRecord(rec);
  };

  let carry: Uint8Array | null = null;
  for await (const chunk of decompressIfGzip(chunks)) {
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
    // the fast path scans only up to the chunk's last newline: its loops stop
    // at that "\n" (a control character) and never read past the chunk
    const end = chunk.lastIndexOf(10) + 1;
    for (;;) {
      if (csv === null && !first && start < end) {
        if (part !== null && lineClaim(chunk, start, end, partCount) !== partIndex) {
          // another partition's webhook: skip to the newline, unless the line could
          // name a second webhookId (a "k", or a "\" that could spell one)
          if (claimEnd !== -1) {
            let q = claimEnd + 1;
            while (SKIP_STOP[chunk[q]] === 0) q++; // stops at the chunk's last "\n" at the latest
            if (chunk[q] === 10) {
              lineNo++;
              start = q + 1;
              continue;
            }
          }
        }
        // the hot path: the scanner reads the line and finds its end in one pass
        const nl = scanner.scanLine(chunk, start, end, true);
        if (nl !== -1) {
          lineNo++;
          stats.scanned++;
          const err = scanner.record(rec, lineNo);
          const s = start;
          start = nl + 1;
          if (err !== null) {
            invalid(err, chunk, s, nl);
            continue;
          }
          rec.webhookIndex = scanner.webhookIndex;
          if (!mine(rec)) continue;
          if (!decodeNids) rec.notificationId = undefined;
          stats.records++;
          onRecord(rec);
          continue;
        }
      }
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
