/**
 * Property tests of the delivery-log reader's byte scanner: on generated odd
 * lines (escapes, unicode, whitespace, repeated and unknown keys, numbers in
 * every JSON form and some that are not JSON, nested values) and on random
 * one-byte mutations of them, the reader gives exactly what `JSON.parse` of
 * the line gives: the same record, or the same error (message and field),
 * line by line. Deterministic: a seeded generator, the same lines each run.
 */

import assert from "node:assert/strict";
import {
  copyRecord,
  emptyRecord,
  LOG_FIELDS,
  type LogRecord,
  parseJsonLine,
} from "../../lib/webhooks/log/log_record.ts";
import { NdjsonScanner } from "../../lib/webhooks/log/ndjson_scanner.ts";
import { readDeliveryLog } from "../../lib/webhooks/log/delivery_log.ts";
import type { InvalidLineError } from "../../lib/webhooks/log/delivery_log_error.ts";
import { seededRandom } from "../support/seeded_random.ts";

const enc = new TextEncoder();
const utf8 = new TextDecoder();

const KEYS = [
  ...LOG_FIELDS,
  // keys one byte off a known key, and others
  "webhookI",
  "webhookIdx",
  "sentTimE",
  "responseCodf",
  "x",
  "",
  "wébhookId",
  "webhook\\u0049d", // "webhookId" written with an escape: JSON.parse reads it as the known key
];

/** JSON texts of values (and a few that are not JSON). */
const VALUES = [
  // strings
  '"w1"',
  '"wh-0042"',
  '""',
  '"é"',
  '"日本"',
  '"😀"',
  '"w\\u0031"',
  '"w\\"1"',
  '"w\\\\1"',
  '"w\\/1"',
  '"a\\nb"',
  '"\\ud83d\\ude00"',
  '"\\ud800"',
  '"TIMED_OUT"',
  '"NO_RESPONSE"',
  '"TIMED_OUT "',
  '"enable"',
  '"disable"',
  '"1767225600000"',
  '"2026-01-01T00:00:00.000Z"',
  '"2026-01-01T02:00:00+02:00"',
  '"yesterday"',
  '"200"',
  '"35"',
  '"w\t1"', // a raw tab: not JSON
  '"w\x011"', // a raw control character: not JSON
  '"\x7f"',
  // numbers
  "0",
  "-0",
  "200",
  "503",
  "99",
  "600",
  "200.0",
  "200.5",
  "2e2",
  "2E+2",
  "2000e-1",
  "1767225600000",
  "1767225600000.5",
  "1.7672256e12",
  "1.7672256E+12",
  "-1767225600000",
  "8640000000000000",
  "8640000000000001",
  "12345678901234567890",
  "9007199254740993",
  "1e400",
  "-1e400",
  "1e-400",
  "123456789012345",
  "1234567890123456",
  "01",
  "-",
  "1.",
  ".5",
  "1e",
  "1e+",
  "+1",
  "0x10",
  "NaN",
  "Infinity",
  // others
  "true",
  "false",
  "null",
  "nul",
  "tru",
  "[]",
  "[1,2]",
  "{}",
  '{"a":1}',
  '{"webhookId":"w1"}',
  "undefined",
];

const SPACES = ["", "", "", "", " ", "\t", "  ", " \t "];

/** One generated line: mostly a plausible attempt, with odd parts. */
function oddLine(r: () => number): string {
  const pick = <T>(a: readonly T[]): T => a[Math.floor(r() * a.length)];
  const ws = () => (r() < 0.8 ? "" : pick(SPACES));
  const fields: [string, string][] = [];
  // a plausible core, so that many lines are valid records
  if (r() < 0.9) {
    fields.push(["webhookId", r() < 0.8 ? `"wh-${Math.floor(r() * 50)}"` : pick(VALUES)]);
  }
  if (r() < 0.9) {
    fields.push([
      r() < 0.9 ? "sentTime" : "time",
      r() < 0.7 ? `${1767225600000 + Math.floor(r() * 1e9)}` : pick(VALUES),
    ]);
  }
  if (r() < 0.6) {
    fields.push(["responseCode", r() < 0.6 ? pick(["200", "404", "503", "429"]) : pick(VALUES)]);
  }
  if (r() < 0.3) {
    fields.push([
      "failureReason",
      r() < 0.6 ? pick(['"TIMED_OUT"', '"NO_RESPONSE"']) : pick(VALUES),
    ]);
  }
  if (r() < 0.5) {
    fields.push(["notificationId", r() < 0.6 ? `"n-${Math.floor(r() * 1e6)}"` : pick(VALUES)]);
  }
  if (r() < 0.4) fields.push(["duration", r() < 0.6 ? `${Math.floor(r() * 900)}` : pick(VALUES)]);
  if (r() < 0.05) fields.push(["action", r() < 0.7 ? '"enable"' : pick(VALUES)]);
  // odd extras: unknown, near-miss and repeated keys
  const extras = Math.floor(r() * 3);
  for (let i = 0; i < extras; i++) fields.push([pick(KEYS), pick(VALUES)]);
  // any order
  for (let i = fields.length - 1; i > 0; i--) {
    const j = Math.floor(r() * (i + 1));
    [fields[i], fields[j]] = [fields[j], fields[i]];
  }
  const body = fields.map(([k, v]) => `${ws()}"${k}"${ws()}:${ws()}${v}${ws()}`).join(",");
  let line = `${ws()}{${body}}${ws()}`;
  if (r() < 0.03) line += pick([",", " x", "}", "{}"]); // trailing garbage
  if (r() < 0.02) line = line.slice(0, Math.floor(r() * line.length)); // cut short
  return line;
}

/** `bytes` with one byte replaced, inserted or deleted (never a newline or a CR). */
function mutate(bytes: Uint8Array, r: () => number): Uint8Array {
  const INTERESTING = [
    0x22,
    0x5c,
    0x3a,
    0x2c,
    0x7b,
    0x7d,
    0x20,
    0x09,
    0x30,
    0x31,
    0x2d,
    0x2e,
    0x65,
    0x00,
    0x1f,
    0x7f,
    0x80,
    0xc3,
    0xff,
  ];
  const b = (): number => {
    const v = r() < 0.6 ? INTERESTING[Math.floor(r() * INTERESTING.length)] : Math.floor(r() * 256);
    return v === 10 || v === 13 ? 0x20 : v;
  };
  const at = Math.floor(r() * (bytes.length + 1));
  const kind = r();
  if (kind < 0.4 && at < bytes.length) {
    const out = bytes.slice();
    out[at] = b();
    return out;
  }
  if (kind < 0.7) {
    const out = new Uint8Array(bytes.length + 1);
    out.set(bytes.subarray(0, at));
    out[at] = b();
    out.set(bytes.subarray(at), at + 1);
    return out;
  }
  const cut = Math.min(at, bytes.length - 1);
  if (cut < 0) return bytes;
  const out = new Uint8Array(bytes.length - 1);
  out.set(bytes.subarray(0, cut));
  out.set(bytes.subarray(cut + 1), cut);
  return out;
}

/** What JSON.parse of the line gives: the record, or the error's line, field and message. */
function reference(bytes: Uint8Array, line: number): LogRecord | string {
  const rec = emptyRecord();
  const err = parseJsonLine(utf8.decode(bytes), line, rec);
  return err === null ? rec : `${err.line} ${err.field} ${err.message}`;
}

/** What the scanner (falling back to JSON.parse) gives for the line alone. */
function scanned(bytes: Uint8Array, line: number): { got: LogRecord | string; byScanner: boolean } {
  const scanner = new NdjsonScanner(true);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const rec = emptyRecord();
  const byScanner = scanner.scanLine(bytes, 0, bytes.length, false, view) !== -1;
  const err = byScanner ? scanner.record(rec, line) : parseJsonLine(utf8.decode(bytes), line, rec);
  if (byScanner) rec.webhookIndex = -1;
  return { got: err === null ? rec : `${err.line} ${err.field} ${err.message}`, byScanner };
}

function generated(seed: number, n: number): Uint8Array[] {
  const r = seededRandom(seed);
  const lines: Uint8Array[] = [];
  for (let i = 0; i < n; i++) {
    const line = enc.encode(oddLine(r));
    lines.push(line);
    // one to three mutations of it
    let m: Uint8Array = line;
    for (let k = 0, times = 1 + Math.floor(r() * 3); k < times; k++) {
      m = mutate(m, r);
      lines.push(m);
    }
  }
  return lines;
}

Deno.test("scanner and JSON.parse agree on every generated odd line and its mutations", () => {
  const lines = generated(31, 4000);
  let byScanner = 0;
  let valid = 0;
  for (const [i, bytes] of lines.entries()) {
    const want = reference(bytes, i + 1);
    const { got, byScanner: fast } = scanned(bytes, i + 1);
    if (fast) byScanner++;
    if (typeof want !== "string") {
      valid++;
      want.webhookIndex = -1;
    }
    assert.deepEqual(got, want, `line ${i + 1}: ${JSON.stringify(utf8.decode(bytes))}`);
  }
  // the generator reaches both paths and both outcomes, or this test proves little
  assert.ok(byScanner > lines.length / 8, `only ${byScanner} of ${lines.length} lines scanned`);
  assert.ok(byScanner < lines.length * 0.9, `${byScanner} of ${lines.length} lines scanned`);
  assert.ok(valid > lines.length / 30, `only ${valid} of ${lines.length} lines valid`);
  assert.ok(valid < lines.length * 0.9, `${valid} of ${lines.length} lines valid`);
});

Deno.test("the reader agrees with JSON.parse line by line on a generated log, in any chunk sizes", async () => {
  const lines = generated(7, 2500);
  // the first line decides NDJSON or CSV: a plain object
  lines.unshift(enc.encode('{"webhookId":"w0","sentTime":1767225600000,"responseCode":200}'));
  const text = new Uint8Array(lines.reduce((n, l) => n + l.length + 1, 0));
  let o = 0;
  for (const l of lines) {
    text.set(l, o);
    text[l.length + o] = 10;
    o += l.length + 1;
  }
  const want: (LogRecord | string)[] = [];
  for (const [i, bytes] of lines.entries()) {
    let p = 0;
    while (p < bytes.length && (bytes[p] === 32 || bytes[p] === 9)) p++;
    if (p === bytes.length) continue; // a blank line: skipped
    const w = reference(bytes, i + 1);
    if (typeof w !== "string") w.webhookIndex = -1;
    want.push(w);
  }
  for (const size of [1 << 20, 4096, 97]) {
    const got: (LogRecord | string)[] = [];
    const chunks = (async function* () {
      for (let at = 0; at < text.length; at += size) yield text.slice(at, at + size);
    })();
    await readDeliveryLog(chunks, (r) => got.push({ ...copyRecord(r), webhookIndex: -1 }), {
      notificationIds: true,
      skipInvalid: true,
      onInvalid: (e: InvalidLineError) => got.push(`${e.line} ${e.field} ${e.message}`),
    });
    assert.equal(got.length, want.length, `chunks of ${size}`);
    for (let i = 0; i < want.length; i++) {
      assert.deepEqual(got[i], want[i], `chunks of ${size}, item ${i}`);
    }
  }
});
