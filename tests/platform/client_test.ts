import assert from "node:assert/strict";
import {
  loadCredentials,
  PlatformApiError,
  PlatformClient,
  PlatformUnreachableError,
} from "../../lib/platform/mod.ts";
import { listNotifications, resendNotification, updateWebhook } from "../../lib/platform/mod.ts";
import { exitCodeFor } from "../../lib/cli/mod.ts";
import { makeTestKeys, verifyRequestToken } from "../support/keys.ts";
import { startRecordingServer } from "../support/recording_server.ts";

const keys = await makeTestKeys();
const API_KEY = "3f1d2c4b-0000-4000-8000-00000000abcd";

async function clientFor(url: string, opts: ConstructorParameters<typeof PlatformClient>[1] = {}) {
  const creds = await loadCredentials({
    apiKey: API_KEY,
    privateKey: keys.pkcs8Pem,
    apiBaseUrl: url,
  });
  return new PlatformClient(creds, opts);
}

async function verifyAll(srv: ReturnType<typeof startRecordingServer>) {
  for (const r of srv.requests) {
    assert.deepEqual(r.headers.get("x-api-key"), API_KEY);
    const auth = r.headers.get("authorization") ?? "";
    assert.ok(auth.startsWith("Bearer "), "Bearer token present");
    await verifyRequestToken(auth.slice(7), {
      publicKey: keys.publicKey,
      apiKey: API_KEY,
      uri: r.path + r.search,
      body: r.body,
    });
  }
}

Deno.test("every request carries a token the platform's rules verify: GET with query, POST with and without body, PATCH", async () => {
  const srv = startRecordingServer({ status: 200, body: { data: [], next: null } });
  try {
    const client = await clientFor(srv.url + "/v1");
    await client.request("GET", "/v1/webhooks/w1/notifications", {
      operation: "list",
      query: { statuses: ["FAILED", "ON_HOLD"], pageSize: 5, order: "ASC", events: ["a.b"] },
    });
    await client.request("POST", "/v1/webhooks/w1/notifications/resend_by_resource", {
      operation: "resend",
      body: { resourceId: "r1", excludeStatuses: [] },
    });
    await client.request("POST", "/v1/webhooks/w1/notifications/n1/resend", {
      operation: "resend one",
    });
    await client.request("PATCH", "/v1/webhooks/w1", {
      operation: "update",
      body: { enabled: true },
    });
    assert.deepEqual(srv.requests.map((r) => r.method), ["GET", "POST", "POST", "PATCH"]);
    assert.deepEqual(
      srv.requests[0].search,
      "?statuses=FAILED&statuses=ON_HOLD&pageSize=5&order=ASC&events=a.b",
    );
    assert.deepEqual(
      new TextDecoder().decode(srv.requests[1].body),
      '{"resourceId":"r1","excludeStatuses":[]}',
    );
    assert.deepEqual(srv.requests[2].body.length, 0);
    await verifyAll(srv);
    // A fresh nonce per request.
    const nonces = srv.requests.map((r) =>
      JSON.parse(
        atob(r.headers.get("authorization")!.split(".")[1].replace(/-/g, "+").replace(/_/g, "/")),
      ).nonce
    );
    assert.deepEqual(new Set(nonces).size, nonces.length);
  } finally {
    await srv.close();
  }
});

Deno.test("a PKCS#1 private key signs as well as PKCS#8", async () => {
  const srv = startRecordingServer({ status: 200, body: {} });
  try {
    const creds = await loadCredentials({
      apiKey: API_KEY,
      privateKey: keys.pkcs1Pem,
      apiBaseUrl: srv.url,
    });
    await new PlatformClient(creds).request("GET", "/v1/webhooks", { operation: "list" });
    await verifyAll(srv);
  } finally {
    await srv.close();
  }
});

Deno.test("a base URL with a path prefix keeps the prefix in the signed uri", async () => {
  const srv = startRecordingServer({ status: 200, body: {} });
  try {
    const client = await clientFor(srv.url + "/proxy/v1/");
    await client.request("GET", "/v1/webhooks", { operation: "list", query: { pageSize: 2 } });
    assert.deepEqual(srv.requests[0].path, "/proxy/v1/webhooks");
    await verifyAll(srv);
  } finally {
    await srv.close();
  }
});

Deno.test("503 then 200: the same Idempotency-Key is sent twice and the call succeeds", async () => {
  const srv = startRecordingServer({ status: 202 });
  srv.script.push({ status: 503, body: { message: "busy", code: 1 } });
  const waits: number[] = [];
  try {
    const client = await clientFor(srv.url, {
      sleep: (ms) => (waits.push(ms), Promise.resolve()),
      random: () => 0.5,
    });
    const r = await resendNotification(client, "w1", "n1");
    assert.deepEqual(r.status, 202);
    assert.deepEqual(srv.requests.length, 2);
    assert.deepEqual(waits, [125]); // one wait: half (the injected jitter) of the first 250 ms backoff
    const k1 = srv.requests[0].headers.get("idempotency-key");
    assert.ok(k1 && k1.length >= 16);
    assert.deepEqual(srv.requests[1].headers.get("idempotency-key"), k1);
    assert.deepEqual(r.idempotencyKey, k1);
    await verifyAll(srv);
  } finally {
    await srv.close();
  }
});

Deno.test("a given idempotency key is the one sent, on every retry", async () => {
  const srv = startRecordingServer({ status: 202 });
  srv.script.push({ status: 500 }, { status: 502 });
  try {
    const client = await clientFor(srv.url, { sleep: () => Promise.resolve() });
    await resendNotification(client, "w1", "n1", "my-key-1");
    assert.deepEqual(srv.requests.map((r) => r.headers.get("idempotency-key")), [
      "my-key-1",
      "my-key-1",
      "my-key-1",
    ]);
  } finally {
    await srv.close();
  }
});

Deno.test("429 with Retry-After: 1 waits one second before the retry", async () => {
  const srv = startRecordingServer({ status: 200, body: { data: [], next: null } });
  srv.script.push({ status: 429, headers: { "Retry-After": "1" } });
  // the injected clock: each wait is recorded with the number of requests sent before it
  const waits: [number, number][] = [];
  try {
    const client = await clientFor(srv.url, {
      sleep: (ms) => (waits.push([ms, srv.requests.length]), Promise.resolve()),
      random: () => 0.5, // jitter would say 125: the header wins
    });
    await client.request("GET", "/v1/webhooks", { operation: "list" });
    assert.deepEqual(waits, [[1000, 1]]);
    assert.deepEqual(srv.requests.length, 2);
  } finally {
    await srv.close();
  }
});

Deno.test("backoff doubles from 250 ms up to the 8 s cap, each wait a full-jitter share of it", async () => {
  const srv = startRecordingServer({ status: 200, body: {} });
  for (let i = 0; i < 7; i++) srv.script.push({ status: 503 });
  const randoms = [0.5, 0.999, 0, 0.25, 0.75, 0.5, 0.1];
  const waits: number[] = [];
  const reported: number[] = [];
  try {
    const client = await clientFor(srv.url, {
      sleep: (ms) => (waits.push(ms), Promise.resolve()),
      random: () => randoms.shift()!,
      retries: 7,
      onRetry: (r) => reported.push(r.waitMs),
    });
    await client.request("GET", "/v1/webhooks", { operation: "list" });
    // backoffs 250, 500, 1000, 2000, 4000, 8000, 8000 (capped), times the injected randoms
    assert.deepEqual(waits, [125, 500, 0, 500, 3000, 4000, 800]);
    assert.deepEqual(reported, waits);
    assert.deepEqual(srv.requests.length, 8);
    assert.deepEqual(randoms.length, 0);
  } finally {
    await srv.close();
  }
});

Deno.test("jitter stays within [0, backoff]: the extremes of the random source", async () => {
  for (
    const [random, want] of [
      [() => 0, [0, 0, 0, 0, 0, 0, 0]],
      [() => 1 - Number.EPSILON, [250, 500, 1000, 2000, 4000, 8000, 8000]],
    ] as const
  ) {
    const srv = startRecordingServer({ status: 500 });
    const waits: number[] = [];
    try {
      const client = await clientFor(srv.url, {
        sleep: (ms) => (waits.push(ms), Promise.resolve()),
        random,
        retries: 7,
      });
      await assert.rejects(
        () => client.request("GET", "/v1/webhooks", { operation: "list" }),
        PlatformApiError,
      );
      assert.deepEqual(waits, [...want]);
      assert.deepEqual(srv.requests.length, 8);
    } finally {
      await srv.close();
    }
  }
});

Deno.test("Retry-After is honoured up to the cap, as seconds or as an HTTP date", async () => {
  const now = Date.UTC(2026, 0, 1, 12, 0, 0);
  const srv = startRecordingServer({ status: 200, body: {} });
  srv.script.push(
    { status: 503, headers: { "Retry-After": "60" } }, // exactly the cap: honoured
    { status: 429, headers: { "Retry-After": new Date(now + 7000).toUTCString() } },
    { status: 503, headers: { "Retry-After": "0" } },
  );
  const waits: number[] = [];
  try {
    const client = await clientFor(srv.url, {
      sleep: (ms) => (waits.push(ms), Promise.resolve()),
      random: () => 0.5,
      now: () => now,
      maxRetryAfterMs: 60_000,
    });
    await client.request("GET", "/v1/webhooks", { operation: "list" });
    assert.deepEqual(waits, [60_000, 7000, 0]);
    assert.deepEqual(srv.requests.length, 4);
  } finally {
    await srv.close();
  }
});

Deno.test("400 is not retried and carries the platform's code, message and request id", async () => {
  const srv = startRecordingServer({
    status: 400,
    body: { message: "bad resourceId", code: 1234 },
  });
  try {
    const client = await clientFor(srv.url, { sleep: () => Promise.resolve() });
    await assert.rejects(
      () => client.request("POST", "/v1/x", { operation: "resend by resource", body: {} }),
      (e) => {
        assert.ok(e instanceof PlatformApiError, String(e));
        assert.deepEqual(e.status, 400);
        assert.deepEqual(e.code, 1234);
        assert.deepEqual(e.platformMessage, "bad resourceId");
        assert.deepEqual(e.requestId, "req-1");
        assert.deepEqual(exitCodeFor(e), 1);
        return true;
      },
    );
    assert.deepEqual(srv.requests.length, 1);
  } finally {
    await srv.close();
  }
});

Deno.test("exhausted retries map to the exit codes of cli.md", async () => {
  const cases: [number, number][] = [[503, 6], [500, 6], [429, 5], [408, 7], [401, 3], [403, 3], [
    404,
    4,
  ], [409, 1]];
  for (const [status, code] of cases) {
    const srv = startRecordingServer({ status, body: { message: "no", code: 9 } });
    try {
      const client = await clientFor(srv.url, { sleep: () => Promise.resolve(), retries: 2 });
      await assert.rejects(
        () => client.request("GET", "/v1/webhooks", { operation: "list" }),
        (e) => {
          assert.deepEqual(exitCodeFor(e), code, `status ${status}`);
          return true;
        },
      );
      const retried = status >= 500 || status === 429 || status === 408;
      assert.deepEqual(srv.requests.length, retried ? 3 : 1, `attempts for ${status}`);
    } finally {
      await srv.close();
    }
  }
});

Deno.test("an unreachable platform is retried, then exit code 6", async () => {
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (l.addr as Deno.NetAddr).port;
  l.close();
  const client = await clientFor(`http://127.0.0.1:${port}`, {
    sleep: () => Promise.resolve(),
    retries: 1,
  });
  await assert.rejects(
    () => client.request("GET", "/v1/webhooks", { operation: "list webhooks" }),
    (e) => {
      assert.ok(e instanceof PlatformUnreachableError);
      assert.deepEqual(exitCodeFor(e), 6);
      return true;
    },
  );
});

Deno.test("a Retry-After longer than the cap stops retrying and reports the wait", async () => {
  const srv = startRecordingServer({
    status: 429,
    headers: { "Retry-After": "300" },
    body: { message: "slow down" },
  });
  try {
    const client = await clientFor(srv.url, {
      sleep: () => Promise.resolve(),
      maxRetryAfterMs: 60_000,
    });
    await assert.rejects(
      () => client.request("GET", "/v1/webhooks", { operation: "list" }),
      (e) => {
        assert.ok(e instanceof PlatformApiError, String(e));
        assert.deepEqual(e.retryAfterMs, 300_000);
        assert.ok(e.message.includes("wait 300 s"), e.message);
        return true;
      },
    );
    assert.deepEqual(srv.requests.length, 1);
  } finally {
    await srv.close();
  }
});

Deno.test("list follows next cursors until next is null, one page at a time", async () => {
  const srv = startRecordingServer();
  const n = (id: string) => ({
    id,
    createdAt: 1,
    updatedAt: 2,
    status: "COMPLETED",
    eventType: "e",
  });
  srv.script.push(
    { status: 200, body: { data: [n("a"), n("b")], next: "c1", total: 3 } },
    { status: 200, body: { data: [n("c")], next: null } },
  );
  try {
    const client = await clientFor(srv.url);
    const ids: string[] = [];
    for await (const item of listNotifications(client, "w1", { pageSize: 2 })) ids.push(item.id);
    assert.deepEqual(ids, ["a", "b", "c"]);
    assert.deepEqual(srv.requests.map((r) => r.search), [
      "?pageSize=2",
      "?pageCursor=c1&pageSize=2",
    ]);
  } finally {
    await srv.close();
  }
});

Deno.test("an answer of the wrong shape is an error naming the field", async () => {
  const srv = startRecordingServer({ status: 200, body: { id: 5 } });
  try {
    const client = await clientFor(srv.url);
    await assert.rejects(() => updateWebhook(client, "w1", { enabled: true }), (e) => {
      assert.ok(/unexpected shape \(id:/.test((e as Error).message), (e as Error).message);
      // Not a refusal of the caller's input (1): the platform (or what answers at --apiBaseUrl)
      // did not answer as the API does, cli.md's "platform error" (6).
      assert.deepEqual(exitCodeFor(e), 6);
      return true;
    });
  } finally {
    await srv.close();
  }
});

Deno.test("a POST is never re-sent by the runtime when a kept-alive connection closes", async () => {
  // A raw HTTP/1.1 server: answers the first request with keep-alive, then reads the
  // next request on the same connection and closes without answering.
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  const seen: string[] = [];
  const serve = (async () => {
    for await (const conn of listener) {
      (async () => {
        const buf = new Uint8Array(65536);
        let answered = false;
        let pending = "";
        for (;;) {
          const n = await conn.read(buf).catch(() => null);
          if (n === null) break;
          pending += new TextDecoder().decode(buf.subarray(0, n));
          const m = pending.match(/^(\w+) (\S+) HTTP\/1\.1\r\n[\s\S]*?\r\n\r\n/);
          if (!m) continue;
          const len = Number(pending.match(/content-length: (\d+)/i)?.[1] ?? 0);
          if (pending.length < m[0].length + len) continue;
          seen.push(`${m[1]} ${m[2]}`);
          pending = pending.slice(m[0].length + len);
          if (answered) break; // drop the connection after reading the request
          answered = true;
          await conn.write(new TextEncoder().encode(
            "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 2\r\nconnection: keep-alive\r\n\r\n{}",
          ));
        }
        try {
          conn.close();
        } catch { /* closed */ }
      })();
    }
  })();
  try {
    const client = await clientFor(`http://127.0.0.1:${port}`, { retries: 0 });
    // POSTs never ride a kept-alive connection, so the second one opens its own and is answered.
    // Were it sent on the first connection, the server would drop it and the runtime would
    // either re-send it (seen twice) or fail the call: both fail here.
    const a = await client.request("POST", "/v1/a", { operation: "first", body: { n: 1 } });
    const b = await client.request("POST", "/v1/b", { operation: "second", body: { n: 2 } });
    assert.deepEqual([a.status, b.status], [200, 200]);
    // Each POST reached the server exactly once (the server records a request before answering).
    assert.deepEqual(seen, ["POST /v1/a", "POST /v1/b"]);
  } finally {
    listener.close();
    await serve.catch(() => {});
  }
});
