import assert from "node:assert/strict";
import * as s from "../../lib/platform/shape.ts";
import {
  pageSchema,
  ResendJobSchema,
  type Schema,
  WebhookSchema,
} from "../../lib/platform/schemas.ts";

function issueOf<T>(shape: Schema<T>, value: unknown) {
  const r = shape.safeParse(value);
  return r.success ? undefined : r.error.issues[0];
}

Deno.test("shape: a value that fits is returned as given, unknown fields kept", () => {
  const value = { id: "w1", url: "https://x", events: ["a"], status: "ENABLED", extra: { n: 1 } };
  const r = WebhookSchema.safeParse(value);
  assert.ok(r.success);
  assert.ok(r.data === value, "the value itself, not a copy");
  assert.deepEqual((r.data as Record<string, unknown>).extra, { n: 1 });
});

Deno.test("shape: each kind refuses what is not it, naming where and what", () => {
  assert.deepEqual(issueOf(s.string(), 5), {
    path: [],
    message: "expected string, received number",
  });
  assert.deepEqual(issueOf(s.number(), "5")?.message, "expected number, received string");
  assert.deepEqual(issueOf(s.number(), NaN)?.message, "expected number, received number");
  assert.deepEqual(issueOf(s.boolean(), null)?.message, "expected boolean, received null");
  assert.deepEqual(
    issueOf(s.array(s.string()), { 0: "a" })?.message,
    "expected array, received object",
  );
  assert.deepEqual(issueOf(s.looseObject({}), [1])?.message, "expected object, received array");
  assert.deepEqual(issueOf(s.looseObject({}), null)?.message, "expected object, received null");
  assert.deepEqual(
    issueOf(s.enumOf(["A", "B"] as const), "C")?.message,
    'expected one of "A", "B", received "C"',
  );
  assert.deepEqual(issueOf(s.union([s.string(), s.number()]), 1), undefined);
  assert.deepEqual(issueOf(s.union([s.string(), s.number()]), "1"), undefined);
  assert.ok(/no alternative fits/.test(issueOf(s.union([s.string(), s.number()]), true)!.message));
});

Deno.test("shape: optional accepts a missing field, nullish also null; required fields do not", () => {
  const shape = s.looseObject({ a: s.string(), b: s.string().optional(), c: s.number().nullish() });
  assert.deepEqual(issueOf(shape, { a: "x" }), undefined);
  assert.deepEqual(issueOf(shape, { a: "x", c: null }), undefined);
  assert.deepEqual(issueOf(shape, { a: "x", b: null })?.path, ["b"]);
  assert.deepEqual(issueOf(shape, { b: "y" }), {
    path: ["a"],
    message: "expected string, received undefined",
  });
});

Deno.test("shape: the path of a nested problem goes through objects, arrays and pages", () => {
  const page = pageSchema(WebhookSchema);
  const bad = {
    data: [
      { id: "w1", url: "u", events: [], status: "ENABLED" },
      { id: "w2", url: "u", events: ["ok", 7], status: "ENABLED" },
    ],
  };
  assert.deepEqual(issueOf(page, bad), {
    path: ["data", 1, "events", 1],
    message: "expected string, received number",
  });
  assert.deepEqual(
    issueOf(ResendJobSchema, { jobId: "j", status: "NOPE", processed: 0, total: 1 })
      ?.path,
    ["status"],
  );
  // a Schema that is not a shape (any safeParse) nests too, under its place
  const odd = {
    safeParse: (v: unknown) =>
      v === 1
        ? { success: true as const, data: 1 }
        : { success: false as const, error: { issues: [{ path: ["x"], message: "not one" }] } },
  };
  assert.deepEqual(issueOf(pageSchema(odd), { data: [1, 2] }), {
    path: ["data", 1, "x"],
    message: "not one",
  });
});
