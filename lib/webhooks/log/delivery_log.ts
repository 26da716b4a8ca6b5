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

import { concatBytes, nextMacrotask } from "../../core/mod.ts";
import { CsvReader, splitCsvLine } from "./csv.ts";
import { DeliveryLogError, InvalidLineError } from "./delivery_log_error.ts";
import { decompressIfGzip } from "./gzip.ts";
import { emptyRecord, type LogRecord, parseJsonLine } from "./log_record.ts";
import { NdjsonScanner } from "./ndjson_scanner.ts";
const utf8 = new TextDecoder();

/**
 * The longest line read, in bytes (after decompression): 1 MiB. A delivery
 * line is a few hundred bytes; a longer one (a file with no newline,
 * `/dev/zero`, a gzip bomb) stops the read with a `line-too-long`
 * {@linkcode DeliveryLogError} naming the line, whatever `skipInvalid` says,
 * so memory stays bounded.
 */
export const MAX_LINE_BYTES = 1024 * 1024;

/** How many `"` are in `text` (odd: a quoted CSV field is still open). */
function quoteCount(text: string): number {
  let n = 0;
  for (let i = text.indexOf('"'); i !== -1; i = text.indexOf('"', i + 1)) n++;
  return n;
}

/** Lines between two calls of `onProgress`. */
const PROGRESS_EVERY = 1_000_000;

/** How often a long read lets timers and signals run (SIGINT/SIGTERM stop it), ms. */
const YIELD_EVERY_MS = 50;

/** Options of {@linkcode readDeliveryLog}. */
export interface ReadOptions {
  /** Count invalid lines instead of throwing {@linkcode InvalidLineError}. Default false. */
  skipInvalid?: boolean;
  /** Decode `notificationId` (costs time; only the per-notification report needs it). Default false: records carry no notificationId. */
  notificationIds?: boolean;
  /** Called for each invalid line when skipping (e.g. to warn about the first few). */
  onInvalid?: (error: InvalidLineError) => void;
  /** Called every 1,000,000 lines with the line count. */
  onProgress?: (lines: number) => void | Promise<void>;
}

/** What {@linkcode readDeliveryLog} counted. */
export interface ReadStats {
  /** Lines read, blank ones included. */
  lines: number;
  /** Valid records handed to the consumer. */
  records: number;
  /** Lines skipped as invalid (only with `skipInvalid`). */
  invalidLines: number;
  /** `ndjson` or `csv`, as detected from the first non-blank line (`platform`: read from the platform). */
  format: "ndjson" | "csv" | "empty" | "platform";
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
  let nextProgress = PROGRESS_EVERY;
  let first = true;
  const tooLong = (line: number) =>
    new DeliveryLogError(
      "line-too-long",
      `line ${line} is longer than ${MAX_LINE_BYTES} bytes, the limit of a delivery-log line (is this a delivery log?)`,
    );
  let nextYield = performance.now() + YIELD_EVERY_MS;

  const invalid = (err: InvalidLineError) => {
    if (!options.skipInvalid) throw err;
    stats.invalidLines++;
    options.onInvalid?.(err);
  };

  /** Hands on the record of the line read (its webhook's index `webhookIndex`), or reports `err`. */
  const take = (err: InvalidLineError | null, webhookIndex: number) => {
    if (err !== null) return invalid(err);
    rec.webhookIndex = webhookIndex;
    if (!decodeNids) rec.notificationId = undefined;
    stats.records++;
    onRecord(rec);
  };

  /** One line, buf[s, e) without "\n" (`view`: a DataView of `buf`). */
  const handle = (buf: Uint8Array, s: number, e: number, view: DataView) => {
    lineNo++;
    if (e - s > MAX_LINE_BYTES) throw tooLong(lineNo);
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
    if (csv !== null) {
      let text = utf8.decode(buf.subarray(s, e));
      let line = lineNo;
      if (csvOpen !== null) {
        // the rest of a quoted field that holds a newline
        text = csvOpen.text + "\n" + text;
        line = csvOpen.line;
        csvOpen = null;
      } else if (text.trim() === "") return;
      if (quoteCount(text) % 2 === 1) {
        if (text.length > MAX_LINE_BYTES) throw tooLong(line);
        csvOpen = { text, line };
        return;
      }
      take((csv as CsvReader).read(text, line, rec), -1);
    } else if (scanner.scanLine(buf, s, e, false, view) !== -1) {
      stats.scanned++;
      take(scanner.record(rec, lineNo), scanner.webhookIndex);
    } else {
      let p = s;
      while (p < e && (buf[p] === 32 || buf[p] === 9)) p++;
      if (p === e) return; // blank
      take(parseJsonLine(utf8.decode(buf.subarray(s, e)), lineNo, rec), -1);
    }
  };

  /** A CSV record whose quoted field is still open (it holds a newline), and its first line. */
  let csvOpen: { text: string; line: number } | null = null;
  let carry: Uint8Array | null = null;
  for await (const chunk of decompressIfGzip(chunks)) {
    if (performance.now() >= nextYield) {
      // a macrotask turn: signal listeners run (a read of a huge input is stoppable)
      await nextMacrotask();
      nextYield = performance.now() + YIELD_EVERY_MS;
    }
    let start = 0;
    if (carry !== null) {
      const nl = chunk.indexOf(10);
      const upTo = nl === -1 ? chunk.length : nl;
      if (carry.length + upTo > MAX_LINE_BYTES) throw tooLong(lineNo + 1);
      const joined = concatBytes([carry, chunk.subarray(0, upTo)]);
      if (nl === -1) {
        carry = joined;
        continue;
      }
      carry = null;
      handle(joined, 0, joined.length, new DataView(joined.buffer));
      start = nl + 1;
    }
    // the fast path scans only up to the chunk's last newline: its loops stop
    // at that "\n" (a control character) and never read past the chunk
    const end = chunk.lastIndexOf(10) + 1;
    const view = new DataView(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    for (;;) {
      if (csv === null && !first && start < end) {
        // the hot path: the scanner reads the line and finds its end in one pass
        const nl = scanner.scanLine(chunk, start, end, true, view);
        if (nl !== -1) {
          lineNo++;
          stats.scanned++;
          take(scanner.record(rec, lineNo), scanner.webhookIndex);
          start = nl + 1;
          continue;
        }
      }
      const nl = chunk.indexOf(10, start);
      if (nl === -1) break;
      handle(chunk, start, nl, view);
      start = nl + 1;
    }
    if (start < chunk.length) {
      if (chunk.length - start > MAX_LINE_BYTES) throw tooLong(lineNo + 1);
      carry = chunk.slice(start);
    }
    if (lineNo >= nextProgress && options.onProgress) {
      nextProgress = lineNo + PROGRESS_EVERY;
      await options.onProgress(lineNo);
    }
  }
  if (carry !== null && carry.length > 0) {
    handle(carry, 0, carry.length, new DataView(carry.buffer));
  }
  if (csvOpen !== null) {
    const open = csvOpen as { text: string; line: number };
    invalid(new InvalidLineError(open.line, "line", "bad CSV quoting (a quote is never closed)"));
  }
  stats.lines = lineNo;
  return stats;
}
