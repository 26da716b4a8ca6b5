import { z } from "zod";
import assert from "node:assert/strict";
import { getErrorRate, getWebhook, listNotificationsPage } from "../../lib/platform/mod.ts";
import {
  NotificationSchema,
  pageSchema,
  ResendJobSchema,
  stringOrNumber,
  WebhookSchema,
} from "../../lib/platform/schemas.ts";
import { clientFor, startRecordingServer } from "../support/recording_server.ts";

/** The first issue as the client reports it: where and what. */
function issueOf(schema: z.ZodType, value: unknown) {
  const r = schema.safeParse(value);
  if (r.success) return undefined;
  const { path, message } = r.error.issues[0];
  return { path, message };
}

const hook = { id: "w1", url: "https://x", events: ["a"], status: "ENABLED" };

Deno.test("schemas: an answer that fits comes back as the platform sent it, unknown fields kept, in its order", async () => {
  const sent = { extra: { n: 1 }, status: "ENABLED", url: "https://x", id: "w1", events: ["a"] };
  assert.ok(WebhookSchema.safeParse(sent).success);
  const srv = startRecordingServer({ status: 200, body: sent });
  try {
    const got = await getWebhook(await clientFor(srv.url), "w1");
    assert.deepEqual(got, sent);
    assert.deepEqual(Object.keys(got), ["extra", "status", "url", "id", "events"]);
  } finally {
    await srv.close();
  }
});

Deno.test("schemas: each kind refuses what is not it, naming where and what", () => {
  assert.deepEqual(issueOf(WebhookSchema, { ...hook, id: 5 }), {
    path: ["id"],
    message: "Invalid input: expected string, received number",
  });
  assert.deepEqual(
    issueOf(NotificationSchema, {
      id: "n",
      createdAt: "5",
      updatedAt: 1,
      status: "s",
      eventType: "e",
    }),
    { path: ["createdAt"], message: "Invalid input: expected number, received string" },
  );
  assert.deepEqual(
    issueOf(NotificationSchema, {
      id: "n",
      createdAt: NaN,
      updatedAt: 1,
      status: "s",
      eventType: "e",
    })
      ?.message,
    "Invalid input: expected number, received NaN",
  );
  assert.deepEqual(
    issueOf(WebhookSchema, { ...hook, events: { 0: "a" } }),
    { path: ["events"], message: "Invalid input: expected array, received object" },
  );
  assert.deepEqual(
    issueOf(WebhookSchema, [hook])?.message,
    "Invalid input: expected object, received array",
  );
  assert.deepEqual(
    issueOf(WebhookSchema, null)?.message,
    "Invalid input: expected object, received null",
  );
  assert.deepEqual(
    issueOf(ResendJobSchema, { jobId: "j", status: "NOPE", processed: 0, total: 1 })?.path,
    ["status"],
  );
  assert.ok(
    /^Invalid option: expected one of "QUEUED"/.test(
      issueOf(ResendJobSchema, { jobId: "j", status: "NOPE", processed: 0, total: 1 })!.message,
    ),
  );
  assert.deepEqual(issueOf(stringOrNumber(), 1), undefined);
  assert.deepEqual(issueOf(stringOrNumber(), "1"), undefined);
  assert.deepEqual(issueOf(stringOrNumber(), true), {
    path: [],
    message: "expected string or number, received boolean",
  });
  assert.deepEqual(
    issueOf(stringOrNumber(), null)?.message,
    "expected string or number, received null",
  );
});

Deno.test("schemas: optional accepts a missing field, nullish also null; required fields do not", () => {
  const shape = z.looseObject({ a: z.string(), b: z.string().optional(), c: z.number().nullish() });
  assert.deepEqual(issueOf(shape, { a: "x" }), undefined);
  assert.deepEqual(issueOf(shape, { a: "x", c: null }), undefined);
  assert.deepEqual(issueOf(shape, { a: "x", b: null })?.path, ["b"]);
  assert.deepEqual(issueOf(shape, { b: "y" }), {
    path: ["a"],
    message: "Invalid input: expected string, received undefined",
  });
  assert.deepEqual(issueOf(WebhookSchema, { ...hook, description: null }), undefined);
  assert.deepEqual(issueOf(WebhookSchema, { ...hook, createdAt: null })?.path, ["createdAt"]);
});

Deno.test("schemas: the path of a nested problem goes through objects, arrays and pages", () => {
  const bad = {
    data: [
      { id: "w1", url: "u", events: [], status: "ENABLED" },
      { id: "w2", url: "u", events: ["ok", 7], status: "ENABLED" },
    ],
  };
  assert.deepEqual(issueOf(pageSchema(WebhookSchema), bad), {
    path: ["data", 1, "events", 1],
    message: "Invalid input: expected string, received number",
  });
  // any zod schema nests, under its place
  const odd = z.looseObject({ x: z.literal(1) });
  assert.deepEqual(issueOf(pageSchema(odd), { data: [{ x: 1 }, { x: 2 }] })?.path, [
    "data",
    1,
    "x",
  ]);
});

Deno.test("schemas: the client reports an answer that does not fit as 'path: message', body when at the top", async () => {
  const srv = startRecordingServer({ status: 200, body: {} });
  srv.script.push(
    {
      status: 200,
      body: {
        data: [{ id: "n1", createdAt: 1, updatedAt: "late", status: "FAILED", eventType: "e" }],
      },
    },
    { status: 200, body: [1] },
    { status: 200, body: { value: false } },
  );
  try {
    const client = await clientFor(srv.url);
    /** Any rejection whose message says `text`. */
    const saying = (text: string) => (e: unknown) => {
      assert.ok((e as Error).message.includes(text), (e as Error).message);
      return true;
    };
    await assert.rejects(
      () => listNotificationsPage(client, "w1", {}),
      saying("(data.0.updatedAt: Invalid input: expected number, received string)"),
    );
    await assert.rejects(
      () => getWebhook(client, "w1"),
      saying("(body: Invalid input: expected object, received array)"),
    );
    await assert.rejects(
      () => getErrorRate(client, "w1"),
      saying("(value: expected string or number, received boolean)"),
    );
  } finally {
    await srv.close();
  }
});
