/**
 * CSV delivery logs (`../shared/spec/breaker.md` §4): a header row naming
 * the fields (those of `LOG_FIELDS`; others are ignored), then one attempt
 * a line, RFC 4180 quoting (a quoted field may hold newlines: the reader
 * joins its lines first; a row with more cells than the header is
 * refused). Cells become the same JavaScript values a JSON line would give,
 * checked by the one validator ({@linkcode fieldsToRecord}).
 *
 * @module
 */

import { InvalidLineError } from "./delivery_log_error.ts";
import {
  describeValue,
  fieldsToRecord,
  LOG_FIELDS,
  type LogFields,
  type LogRecord,
} from "./log_record.ts";

/**
 * Splits one CSV record (RFC 4180 quoting; newlines inside a quoted field are kept). Null: bad quoting.
 *
 * @example
 * ```ts
 * splitCsvLine('a,"b,c","d""e",'); // ["a", "b,c", 'd"e', ""]
 * ```
 */
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

const NUMBER_RE = /^-?\d+(\.\d+)?$/;
/** The fields whose cells are numbers when they look like one (the others stay text). */
const NUMERIC = new Set<string>(["sentTime", "time", "responseCode", "duration"]);

/**
 * Reads the lines of a CSV log after its header row.
 *
 * @example
 * ```ts
 * import { emptyRecord } from "./log_record.ts";
 * const csv = new CsvReader(["webhookId", "sentTime", "responseCode"], 1);
 * const rec = emptyRecord();
 * csv.read("w1,1767225600000,200", 2, rec); // null: rec is filled
 * ```
 */
export class CsvReader {
  /** The column of each field, -1 when the header does not name it. */
  readonly index: Record<keyof LogFields, number>;
  /** How many cells the header has (a row may not have more). */
  readonly columns: number;
  /**
   * A reader for the columns of `header` (the cells of line `line`); throws
   * {@linkcode InvalidLineError} when it names no webhookId or no time.
   */
  constructor(header: string[], line: number) {
    const idx = {} as Record<keyof LogFields, number>;
    for (const f of LOG_FIELDS) idx[f] = header.indexOf(f);
    if (idx.webhookId === -1 || (idx.sentTime === -1 && idx.time === -1)) {
      throw new InvalidLineError(
        line,
        idx.webhookId === -1 ? "webhookId" : "sentTime",
        `not a JSON object, and not a CSV header naming webhookId and sentTime (got ${
          describeValue(header.join(","))
        })`,
      );
    }
    this.index = idx;
    this.columns = header.length;
  }

  /** Validates one line into `out`: `null`, or the {@linkcode InvalidLineError} to report. */
  read(text: string, line: number, out: LogRecord): InvalidLineError | null {
    const cells = splitCsvLine(text);
    if (cells === null) return new InvalidLineError(line, "line", "bad CSV quoting");
    if (cells.length > this.columns) {
      return new InvalidLineError(
        line,
        "line",
        `${cells.length} cells, but the header names ${this.columns} columns`,
      );
    }
    const fields: LogFields = {}; // an empty or missing cell: no value
    for (const f of LOG_FIELDS) {
      const v = cells[this.index[f]] ?? "";
      if (v !== "") fields[f] = NUMERIC.has(f) && NUMBER_RE.test(v) ? Number(v) : v;
    }
    return fieldsToRecord(out, line, fields);
  }
}
