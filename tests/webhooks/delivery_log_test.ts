import assert from "node:assert/strict";
import {
  copyRecord,
  emptyRecord,
  type LogRecord,
  parseJsonLine,
} from "../../lib/webhooks/log/log_record.ts";
import { NdjsonScanner } from "../../lib/webhooks/log/ndjson_scanner.ts";
import { splitCsvLine } from "../../lib/webhooks/log/csv.ts";
import { decompressIfGzip } from "../../lib/webhooks/log/gzip.ts";
import { readDeliveryLog } from "../../lib/webhooks/log/delivery_log.ts";
import { DeliveryLogError } from "../../lib/webhooks/log/delivery_log_error.ts";
import { concatBytes } from "../../lib/core/mod.ts";

const enc = new TextEncoder();

/**
 * One NDJSON line read as the reader reads it (the byte scanner, falling
 * back to `JSON.parse`), or with `JSON.parse` only: to check that both agree.
 */
function parseNdjsonLine(bytes: Uint8Array, line: number, options = { jsonParseOnly: false }) {
  const scanner = new NdjsonScanner(true);
  const record = emptyRecord();
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const scanned = !options.jsonParseOnly &&
    scanner.scanLine(bytes, 0, bytes.length, false, view) !== -1;
  const error = scanned
    ? scanner.record(record, line)
    : parseJsonLine(new TextDecoder().decode(bytes), line, record);
  return { record: error ? null : record, error, scanned };
}

/** Lines the byte scanner must read itself (and agree with JSON.parse on). */
const SCANNED = [
  '{"webhookId":"w1","sentTime":1767225600000,"responseCode":200}',
  '{"sentTime":1767225600000,"responseCode":503,"webhookId":"w1","notificationId":"n-1","duration":35}',
  '{"webhookId":"wh-0042","notificationId":"n-7","sentTime":1767225600000,"duration":12,"failureReason":"TIMED_OUT"}',
  '{ "webhookId" : "w1" , "time" : "2026-01-01T00:00:00.000Z" , "failureReason" : "NO_RESPONSE" }',
  '\t{"webhookId":"w1","sentTime":"2026-01-01T02:00:00+02:00","responseCode":null,"failureReason":"NO_RESPONSE"}  ',
  '{"webhookId":"w1","sentTime":1767225600000,"responseCode":404,"extra":{"nested":1}}', // nested: falls back
  '{"webhookId":"w1","sentTime":1767225600000,"action":"enable"}',
  '{"webhookId":"w1","sentTime":1767225600000,"responseCode":200,"unknown":"x","flag":true,"n":null,"f":false}',
  '{"webhookId":"w1","sentTime":1.7672256e12,"responseCode":200}',
  '{"webhookId":"w1","sentTime":1767225600000.5,"responseCode":200,"duration":-0}',
  '{"webhookId":"wé","sentTime":1767225600000,"responseCode":200,"notificationId":"ñ"}',
  '{"webhookId":123,"sentTime":1767225600000,"responseCode":200,"notificationId":456}',
  '{"webhookId":"w1","sentTime":"1767225600000","responseCode":200}',
  '{"webhookId":"w1","sentTime":1767225600000,"responseCode":200,"webhookId":"w2"}', // last wins
  '{"webhookId":"w1","sentTime":12345678901234567890,"responseCode":200}',
  // keys one byte off a known key are other keys; a repeated sentTime: the last, number or not
  '{"webhookId":"w1","sentTime":1767225600000,"responseCode":200,"timeX":5,"sentTimE":1,"responseCodf":3,"webhookIdz":"x","durationn":"y"}',
  '{"webhookId":"w1","sentTime":"x","sentTime":1767225600000,"responseCode":200}',
  '{"webhookId":"w1","sentTime":1767225600000,"sentTime":"2026-01-01T00:00:00Z","responseCode":500}',
  '{"webhookId":"w1","sentTime":-1767225600000,"responseCode":200}',
  // invalid by the field rules, valid JSON: same error either way
  '{"webhookId":"w1","sentTime":1767225600000}',
  '{"webhookId":"","sentTime":1767225600000,"responseCode":200}',
  '{"sentTime":1767225600000,"responseCode":200}',
  '{"webhookId":"w1","responseCode":200}',
  '{"webhookId":"w1","sentTime":"yesterday","responseCode":200}',
  '{"webhookId":"w1","sentTime":1767225600000,"responseCode":200.5}',
  '{"webhookId":"w1","sentTime":1767225600000,"responseCode":99}',
  '{"webhookId":"w1","sentTime":1767225600000,"responseCode":"200"}',
  '{"webhookId":"w1","sentTime":1767225600000,"failureReason":"DNS"}',
  '{"webhookId":"w1","sentTime":1767225600000,"responseCode":500,"failureReason":"TIMED_OUT"}',
  '{"webhookId":"w1","sentTime":1767225600000,"action":"disable"}',
  '{"webhookId":true,"sentTime":1767225600000,"responseCode":200}',
  '{"webhookId":"w1","sentTime":1767225600000,"responseCode":200,"duration":"slow"}',
  "{}",
];

/** Lines the scanner must hand to JSON.parse (escapes, bad JSON, not objects). */
const FALLBACK = [
  '{"webhookId":"w\\u0031","sentTime":1767225600000,"responseCode":200}',
  '{"webhookId":"w\\"1","sentTime":1767225600000,"responseCode":200}',
  '{"webhookId":"w1","sentTime":01767225600000,"responseCode":200}',
  '{"webhookId":"w1","sentTime":1767225600000,"responseCode":200,}',
  '{"webhookId":"w1","sentTime":1767225600000,"responseCode":200} x',
  '{"webhookId":"w1","sentTime":1767225600000,"responseCode":200',
  '{"webhookId":"w1\t","sentTime":1767225600000,"responseCode":200}',
  '{"webhookId":"w1","sentTime":-,"responseCode":200}',
  '{"webhookId":"w1","sentTime":1.,"responseCode":200}',
  '{"webhookId":"w1","sentTime":1e,"responseCode":200}',
  '{"webhookId":"w1","sentTime":1767225600000,"responseCode":nul}',
  '{webhookId:"w1"}',
  "[1,2,3]",
  '"just a string"',
  "42",
  "null",
  "not json at all",
];

for (const [i, line] of [...SCANNED, ...FALLBACK].entries()) {
  Deno.test(`scanner and JSON.parse agree on line ${i + 1}: ${line.slice(0, 60)}`, () => {
    const bytes = enc.encode(line);
    const fast = parseNdjsonLine(bytes, 7);
    const slow = parseNdjsonLine(bytes, 7, { jsonParseOnly: true });
    assert.equal(slow.scanned, false);
    assert.deepEqual(fast.record, slow.record);
    assert.equal(fast.error?.message, slow.error?.message);
    assert.equal(fast.error?.field, slow.error?.field);
    // the common shapes must really go through the scanner, or this test proves nothing
    if (i < SCANNED.length && i !== 5) assert.equal(fast.scanned, true, "scanner fell back");
    if (i >= SCANNED.length) {
      assert.equal(fast.scanned, false, "scanner accepted bad or escaped JSON");
    }
  });
}

Deno.test("an error names the line number and the field", () => {
  const r = parseNdjsonLine(enc.encode('{"webhookId":"w1","sentTime":1767225600000}'), 12);
  assert.equal(r.error?.line, 12);
  assert.equal(r.error?.field, "responseCode");
  assert.match(r.error!.message, /^line 12: responseCode or failureReason is missing/);
  const t = parseNdjsonLine(enc.encode('{"webhookId":"w1","time":"noon","responseCode":200}'), 3);
  assert.equal(t.error?.field, "time");
  assert.match(
    t.error!.message,
    /^line 3: time "noon" is not a time: give epoch milliseconds or an ISO 8601/,
  );
});

Deno.test("ISO times with offsets and epoch ms mean the same instant", () => {
  const a = parseNdjsonLine(
    enc.encode('{"webhookId":"w","sentTime":"2026-01-01T02:00:00+02:00","responseCode":200}'),
    1,
  );
  const b = parseNdjsonLine(
    enc.encode('{"webhookId":"w","sentTime":1767225600000,"responseCode":200}'),
    1,
  );
  const c = parseNdjsonLine(
    enc.encode('{"webhookId":"w","time":"2026-01-01T00:00:00Z","responseCode":200}'),
    1,
  );
  assert.equal(a.record?.time, 1767225600000);
  assert.equal(b.record?.time, 1767225600000);
  assert.equal(c.record?.time, 1767225600000);
});

function chunked(bytes: Uint8Array, sizes: number[]): AsyncIterable<Uint8Array> {
  return (async function* () {
    let o = 0;
    let i = 0;
    while (o < bytes.length) {
      const n = sizes[i++ % sizes.length];
      yield bytes.slice(o, o + n);
      o += n;
    }
  })();
}

async function readAll(bytes: Uint8Array, sizes = [bytes.length || 1], skipInvalid = false) {
  const recs: LogRecord[] = [];
  const stats = await readDeliveryLog(chunked(bytes, sizes), (r) => recs.push(copyRecord(r)), {
    notificationIds: true,
    skipInvalid,
  });
  return { recs, stats };
}

const LOG = "\ufeff" + [
  '{"webhookId":"w1","sentTime":1767225600000,"responseCode":200,"notificationId":"n1"}',
  "",
  '{"webhookId":"w2","sentTime":1767225601000,"failureReason":"TIMED_OUT"}\r',
  "   ",
  '{"webhookId":"w\\u0031","sentTime":1767225602000,"responseCode":500}',
  '{"webhookId":"w1","sentTime":1767225603000,"action":"enable"}',
].join("\n"); // no newline at the end

Deno.test("lines split across chunks at every position read the same", async () => {
  const bytes = enc.encode(LOG);
  const whole = await readAll(bytes);
  assert.equal(whole.recs.length, 4);
  assert.deepEqual(whole.recs.map((r) => r.line), [1, 3, 5, 6]);
  assert.equal(whole.recs[2].webhookId, "w1"); // decoded by JSON.parse
  assert.equal(whole.stats.lines, 6);
  assert.equal(whole.stats.format, "ndjson");
  for (const sizes of [[1], [2], [3], [7], [5, 1, 13], [64]]) {
    const part = await readAll(bytes, sizes);
    assert.deepEqual(part.recs, whole.recs, `chunks of ${sizes}`);
  }
});

Deno.test("without notificationIds the records carry none", async () => {
  const recs: LogRecord[] = [];
  await readDeliveryLog(chunked(enc.encode(LOG), [100]), (r) => recs.push(copyRecord(r)));
  assert.equal(recs[0].notificationId, undefined);
});

Deno.test("the first invalid line stops the read unless skipInvalid", async () => {
  const bytes = enc.encode('{"webhookId":"w1","sentTime":1,"responseCode":200}\nnope\n');
  await assert.rejects(() => readAll(bytes), /line 2: not valid JSON/);
  const { recs, stats } = await readAll(bytes, [bytes.length], true);
  assert.equal(recs.length, 1);
  assert.equal(stats.invalidLines, 1);
});

Deno.test("CSV: header row, quotes, empty cells, ISO and ms times", async () => {
  const csv = [
    "notificationId,webhookId,sentTime,responseCode,failureReason",
    'n1,"w,1",1767225600000,200,',
    '"n""2",w2,2026-01-01T00:00:01.000Z,,NO_RESPONSE',
    "",
    "n3,w2,1767225602000,abc,",
  ].join("\n") + "\n";
  await assert.rejects(
    () => readAll(enc.encode(csv)),
    /line 5: responseCode "abc" is not an HTTP status/,
  );
  const { recs, stats } = await readAll(enc.encode(csv), [9], true);
  assert.equal(stats.format, "csv");
  assert.equal(stats.invalidLines, 1);
  assert.deepEqual(
    recs.map((
      r,
    ) => [r.line, r.webhookId, r.notificationId, r.time, r.responseCode, r.failureReason]),
    [
      [2, "w,1", "n1", 1767225600000, 200, undefined],
      [3, "w2", 'n"2', 1767225601000, undefined, "NO_RESPONSE"],
    ],
  );
});

Deno.test("a CSV header without webhookId is named as the problem", async () => {
  await assert.rejects(
    () => readAll(enc.encode("id,when,code\nw1,1,200\n")),
    /line 1: not a JSON object, and not a CSV header naming webhookId and sentTime/,
  );
});

Deno.test("splitCsvLine follows RFC 4180 quoting", () => {
  assert.deepEqual(splitCsvLine('a,"b,c","d""e",'), ["a", "b,c", 'd"e', ""]);
  assert.equal(splitCsvLine('a,"b'), null);
});

Deno.test("gzip is recognised by its bytes; plain bytes pass through", async () => {
  const text = '{"webhookId":"w1","sentTime":1,"responseCode":200}\n';
  const gz = new Uint8Array(
    await new Response(
      new Blob([text]).stream().pipeThrough(new CompressionStream("gzip")),
    ).arrayBuffer(),
  );
  const out = async (src: Uint8Array) => {
    let s = "";
    for await (const c of decompressIfGzip(chunked(src, [5]))) {
      s += new TextDecoder().decode(c, { stream: true });
    }
    return s;
  };
  assert.equal(await out(gz), text);
  assert.equal(await out(enc.encode(text)), text);
});

async function gzipOf(text: string): Promise<Uint8Array> {
  return new Uint8Array(
    await new Response(new Blob([text]).stream().pipeThrough(new CompressionStream("gzip")))
      .arrayBuffer(),
  );
}

async function gunzipAll(src: Uint8Array, size: number): Promise<string> {
  let s = "";
  for await (const c of decompressIfGzip(chunked(src, [size]))) {
    s += new TextDecoder().decode(c, { stream: true });
  }
  return s;
}

Deno.test("multi-member gzip (cat a.gz b.gz) decompresses to both members, split anywhere", async () => {
  const a = '{"webhookId":"w1","sentTime":1,"responseCode":200}\n';
  const b = '{"webhookId":"w1","sentTime":2,"responseCode":503}\n';
  const ab = concatBytes([await gzipOf(a), await gzipOf(b), await gzipOf(""), await gzipOf(a)]);
  for (const size of [1, 2, 3, 7, 19, 64, ab.length]) {
    assert.equal(await gunzipAll(ab, size), a + b + a, `chunks of ${size}`);
  }
  // zero padding after the last member is ignored, as gzip -d does
  assert.equal(await gunzipAll(concatBytes([ab, new Uint8Array(512)]), 100), a + b + a);
  // the reader counts every member's records
  const stats = await readDeliveryLog(chunked(ab, [10]), () => {});
  assert.equal(stats.records, 3);
});

Deno.test("gzip followed by garbage is refused as trailing data; a truncated member is corrupt", async () => {
  const a = await gzipOf('{"webhookId":"w1","sentTime":1,"responseCode":200}\n');
  for (const size of [1, 5, 1000]) {
    await assert.rejects(
      () => gunzipAll(concatBytes([a, enc.encode("garbage")]), size),
      (e: unknown) =>
        e instanceof DeliveryLogError && e.reason === "gzip-trailing-data" &&
        /neither gzip nor zero padding/.test(e.message),
    );
    await assert.rejects(
      () => gunzipAll(a.subarray(0, a.length - 5), size),
      (e: unknown) => e instanceof DeliveryLogError && e.reason === "corrupt-gzip",
    );
  }
});

Deno.test("a time before 1970, beyond the last date, or overflowing is refused naming the bound, in NDJSON and CSV", async () => {
  const cases: [string, RegExp][] = [
    [
      "-5",
      /^line 1: sentTime -5 is before 1970-01-01T00:00:00Z: give epoch milliseconds \(0 or more\)/,
    ],
    ["-0.5", /^line 1: sentTime -0\.5 is before 1970-01-01/],
    ["1e400", /^line 1: sentTime is a number too large to be a time \(it overflows to Infinity\)/],
    [
      "-1e400",
      /^line 1: sentTime is a number too large to be a time \(it overflows to -Infinity\)/,
    ],
    ["9e15", /^line 1: sentTime 9000000000000000 is after the last representable time/],
    ['"1969-12-31T23:59:59Z"', /^line 1: sentTime "1969-12-31T23:59:59Z" is before 1970-01-01/],
  ];
  for (const [value, want] of cases) {
    const line = `{"webhookId":"w","sentTime":${value},"responseCode":200}`;
    // the byte scanner and JSON.parse say the same
    const scanned = parseNdjsonLine(enc.encode(line), 1);
    assert.equal(scanned.error?.field, "sentTime", line);
    assert.match(scanned.error!.message, want, line);
    await assert.rejects(
      () => readAll(enc.encode(line + "\n")),
      (e: unknown) => e instanceof DeliveryLogError && want.test(e.message),
      line,
    );
  }
  await assert.rejects(
    () => readAll(enc.encode("webhookId,sentTime,responseCode\nw,-1,200\n")),
    (e: unknown) =>
      e instanceof DeliveryLogError && /^line 2: sentTime -1 is before 1970/.test(e.message),
  );
  // 0 (1970-01-01) itself is a time
  assert.equal(
    parseNdjsonLine(enc.encode('{"webhookId":"w","sentTime":0,"responseCode":200}'), 1).record
      ?.time,
    0,
  );
});
