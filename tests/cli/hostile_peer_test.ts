/**
 * `service` against a hostile peer on loopback (`tests/support/hostile_peer.ts`, a real
 * server): an app that answers without end, a platform that lists pages forever or keeps a
 * job IN_PROGRESS forever, echoes the API key and the bearer token back in its errors, puts
 * terminal escapes and newlines in ids and statuses, or redirects the JWKS elsewhere. Each
 * command runs as a real process; each ends on its own with a stated exit code, and where
 * memory is the point the test reads the process's own peak resident set (VmHWM), never a
 * timing. Issue 32.
 *
 * @module
 */

import nodeAssert from "node:assert/strict";
import { mainCommand } from "../support/main_command.ts";
import { makeTestKeys } from "../support/keys.ts";
import { endlessBody, json, startHostilePeer, watchPeakRss } from "../support/hostile_peer.ts";

const assert = (ok: unknown, message?: string) => nodeAssert.ok(ok, message);
const assertEquals = (a: unknown, b: unknown, message?: string) =>
  nodeAssert.deepEqual(a, b, message);
const assertMatch = (text: string, re: RegExp) => nodeAssert.match(text, re);
const assertStringIncludes = (text: string, part: string) =>
  nodeAssert.ok(text.includes(part), `${JSON.stringify(part)} not in ${JSON.stringify(text)}`);

const keys = await makeTestKeys();
const API_KEY = "7d1c9e2a-5b4f-4c3d-9e8f-0a1b2c3d4e5f";

interface Ran {
  code: number;
  stdout: string;
  stderr: string;
  /** Peak resident set of the process, KiB. */
  peakKiB: number;
  /** Whether the test had to kill it (it did not end on its own). */
  killed: boolean;
}

/** Runs `service args` against `base`; kills it after `deadlineMs` (then `killed`). */
async function service(
  args: string[],
  base: string,
  deadlineMs = 60_000,
  env: Record<string, string> = {},
): Promise<Ran> {
  const child = mainCommand(args, {
    env: {
      SERVICE_API_KEY: API_KEY,
      SERVICE_API_PRIVATE_KEY_PATH: keys.pkcs8Pem,
      SERVICE_API_BASE_URL: base,
      ...env,
    },
  }).spawn();
  const rss = watchPeakRss(child.pid);
  let killed = false;
  const timer = setTimeout(() => {
    killed = true;
    try {
      child.kill("SIGKILL");
    } catch { /* gone */ }
  }, deadlineMs);
  const out = await child.output();
  clearTimeout(timer);
  const dec = new TextDecoder();
  return {
    code: out.code,
    stdout: dec.decode(out.stdout),
    stderr: dec.decode(out.stderr),
    peakKiB: rss.stop(),
    killed,
  };
}

const MiB = 1024;

/** A control character other than the newline ending a line, as a terminal would act on it. */
// deno-lint-ignore no-control-regex -- finding control characters is the point
const RAW_CONTROL = /[\x00-\x09\x0b-\x1f\x7f]/;

Deno.test("listen --forwardTo: an app that answers without end is cut at 64 KiB, the platform gets its status at once, and the receiver stays small", async () => {
  const app = startHostilePeer({
    "POST /hook": () => new Response(endlessBody(), { status: 200 }),
    "GET /jwks": () => json({ keys: [] }),
  });
  const child = mainCommand([
    "webhooks",
    "listen",
    "--port",
    "0",
    "--forwardTo",
    `${app.url}/hook`,
    "--forwardTimeout",
    "5s",
    "--jwks",
    `${app.url}/jwks`,
    "--format",
    "ndjson",
  ], { stdout: "piped", stderr: "piped" }).spawn();
  const rss = watchPeakRss(child.pid);
  const lines = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  try {
    let first = "";
    while (!first.includes("\n")) {
      const { value, done } = await lines.read();
      if (done) break;
      first += value;
    }
    const url = JSON.parse(first.split("\n")[0]).url as string;
    const res = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ id: "n1", webhookId: "w1", eventType: "transaction.created" }),
    });
    const body = new Uint8Array(await res.arrayBuffer());
    // the app's status, not the 504 of a forwarder still reading when its timeout fired
    assertEquals(res.status, 200);
    assertEquals(body.length, 64 * 1024);
    const peak = rss.stop();
    console.log(`listen: peak RSS ${Math.round(peak / 1024)} MiB`);
    assert(peak < 250 * MiB, `listen grew to ${Math.round(peak / 1024)} MiB`);
  } finally {
    rss.stop();
    child.kill("SIGTERM");
    await lines.cancel().catch(() => {});
    await child.stderr.cancel().catch(() => {});
    await child.status;
    await app.close();
  }
});

/**
 * A platform whose notification listing never ends: full pages of the size asked for (a larger
 * page is refused by the client's pager), a new cursor each.
 */
function endlessListing(): Record<string, (r: Request, u: URL) => Response> {
  let page = 0;
  return {
    "GET /v1/webhooks/*/notifications": (_r, u) => {
      const n = page++;
      const now = Date.now();
      const size = Number(u.searchParams.get("pageSize") ?? 100);
      return json({
        data: Array.from({ length: size }, (_, i) => ({
          id: `n-${n}-${i}-${"x".repeat(24)}`,
          createdAt: now,
          updatedAt: now,
          status: "FAILED",
          eventType: "transaction.created",
          resourceId: `r-${n}-${i}`,
        })),
        next: `cursor-${n + 1}`,
      });
    },
    "POST /v1/webhooks/*/notifications/*/resend": () => new Response(null, { status: 202 }),
  };
}

Deno.test("resend-all --dryRun over a listing that never ends stops at 100,000 (exit 1), in bounded memory", async () => {
  const peer = startHostilePeer(endlessListing());
  try {
    const r = await service(
      ["notifications", "resend-all", "--webhookId", "w1", "--since", "25h", "--dryRun"],
      peer.url,
      120_000,
    );
    console.log(`resend-all --dryRun: peak RSS ${Math.round(r.peakKiB / 1024)} MiB`);
    assert(!r.killed, `still running after 120 s: ${r.stderr.slice(-300)}`);
    assertEquals(r.code, 1, r.stderr);
    assertMatch(r.stderr, /More than 100000 notifications listed since .*--maxNotifications/);
    assert(r.peakKiB < 250 * MiB, `grew to ${Math.round(r.peakKiB / 1024)} MiB`);
  } finally {
    await peer.close();
  }
});

Deno.test("resend-all one by one over a listing that never ends resends as it lists and stops at --maxNotifications (exit 1)", async () => {
  const peer = startHostilePeer(endlessListing());
  try {
    const r = await service(
      [
        "notifications",
        "resend-all",
        "--webhookId",
        "w1",
        "--since",
        "25h",
        "--maxNotifications",
        "1500",
        "--concurrency",
        "8",
      ],
      peer.url,
      120_000,
    );
    assert(!r.killed, `still running after 120 s: ${r.stderr.slice(-300)}`);
    assertEquals(r.code, 1, r.stderr);
    assertMatch(r.stderr, /More than 1500 notifications listed/);
    console.log(`resend-all one by one: peak RSS ${Math.round(r.peakKiB / 1024)} MiB`);
    // resent as listed: the first page's resends were made before the second page was read
    assertEquals(peer.hits.get("POST /v1/webhooks/*/notifications/*/resend"), 1500);
    assert(r.peakKiB < 250 * MiB, `grew to ${Math.round(r.peakKiB / 1024)} MiB`);
  } finally {
    await peer.close();
  }
});

Deno.test("resend-all --wait on a job that stays IN_PROGRESS gives up after --waitTimeout with exit 7", async () => {
  const peer = startHostilePeer({
    "POST /v1/webhooks/*/notifications/resend_by_query": () =>
      json({ total: 3 }, 202, {
        location: "/v1/webhooks/w1/notifications/resend_by_query/jobs/j1",
      }),
    "GET /v1/webhooks/*/notifications/resend_by_query/jobs/*": () =>
      json({ jobId: "j1", status: "IN_PROGRESS", processed: 1, total: 3 }),
  });
  try {
    const r = await service(
      ["notifications", "resend-all", "--webhookId", "w1", "--wait", "--waitTimeout", "2s"],
      peer.url,
      60_000,
    );
    assert(!r.killed, "still polling after 60 s");
    assertEquals(r.code, 7, r.stderr);
    assertMatch(r.stderr, /Gave up waiting for the resend job j1: still IN_PROGRESS at 1 of 3/);
  } finally {
    await peer.close();
  }
});

Deno.test("resend-all run again in the same hour says how to resend again", async () => {
  const now = Date.now();
  const peer = startHostilePeer({
    "GET /v1/webhooks/*/notifications": () =>
      json({
        data: [1, 2, 3].map((i) => ({
          id: `n${i}`,
          createdAt: now,
          updatedAt: now,
          status: "FAILED",
          eventType: "transaction.created",
        })),
      }),
    // the platform's idempotency record answers every resend of this run key
    "POST /v1/webhooks/*/notifications/*/resend": () =>
      new Response(null, { status: 202, headers: { "idempotent-replayed": "true" } }),
  });
  try {
    const r = await service(
      ["notifications", "resend-all", "--webhookId", "w1", "--since", "25h"],
      peer.url,
    );
    assertEquals(r.code, 0, r.stderr);
    assertMatch(r.stderr, /resent 0 of 3 notification\(s\); 3 already resent/);
    assertMatch(r.stderr, /to resend them again, give a new key: --idempotencyKey/);
  } finally {
    await peer.close();
  }
});

/** A platform that refuses with `status` and quotes the API key and the start of the token. */
function echoing(status: number) {
  const echoed: string[] = [];
  const peer = startHostilePeer({
    "GET /v1/vault/accounts_paged": (r) => answer(r),
    "GET /v1/webhooks/*": (r) => answer(r),
    "GET /v1/webhooks/*/notifications": (r) => answer(r),
  });
  function answer(r: Request): Response {
    const key = r.headers.get("x-api-key") ?? "";
    const token = (r.headers.get("authorization") ?? "").replace(/^Bearer /, "");
    echoed.push(key, token.slice(0, 60), token.slice(-40));
    return json({
      code: status,
      message: `key ${key} with Bearer ${token.slice(0, 60)} (sig …${
        token.slice(-40)
      }) refused\n-----BEGIN PRIVATE KEY-----\n${keys.pkcs8Pem.split("\n")[1]}`,
    }, status);
  }
  return { peer, echoed };
}

function assertNoSecret(text: string, echoed: string[]) {
  for (const s of [API_KEY, ...echoed]) {
    if (s) assert(!text.includes(s), `shown: ${s.slice(0, 12)}… in ${text}`);
  }
  assert(!text.includes(keys.pkcs8Pem.split("\n")[1]), "a line of the PEM shown");
  assert(!/eyJ[A-Za-z0-9_-]{6}/.test(text), `a token part shown: ${text}`);
}

for (
  const [status, args, exit] of [
    [401, ["whoami"], 3],
    [400, ["webhooks", "get", "--webhookId", "w1"], 1],
    [503, ["notifications", "list", "--webhookId", "w1", "--retries", "0"], 6],
  ] as const
) {
  Deno.test(
    `a ${status} that echoes the API key and the bearer token: neither is shown (${
      args.slice(0, 2).join(" ")
    })`,
    async () => {
      const { peer, echoed } = echoing(status);
      try {
        for (const extra of [[], ["--verbose"]]) {
          const r = await service([...args, ...extra], peer.url);
          assertEquals(r.code, exit, r.stderr);
          assertStringIncludes(r.stderr, "[redacted]");
          assertNoSecret(r.stdout + r.stderr, echoed);
        }
      } finally {
        await peer.close();
      }
    },
  );
}

Deno.test("a platform error the bridge passes to its child as a JSON-RPC error never holds the key or the token", async () => {
  const { peer, echoed } = echoing(401);
  const node = startHostilePeer({
    "POST /": async (r) => {
      const req = await r.json();
      return json({ jsonrpc: "2.0", id: req.id, result: "0x7a69" });
    },
  });
  try {
    const r = await service([
      "rpc",
      "--http",
      "--rpcUrl",
      node.url,
      "--chainId",
      "31337",
      "--assetId",
      "ETH_TEST",
      "--",
      "curl",
      "-s",
      "-X",
      "POST",
      "-H",
      "content-type: application/json",
      "--data",
      '{"jsonrpc":"2.0","id":1,"method":"eth_accounts","params":[]}',
      "{}",
    ], peer.url);
    assertEquals(r.code, 0, r.stderr);
    const answer = JSON.parse(r.stdout);
    assertEquals(answer.error.code, -32000, r.stdout);
    assertStringIncludes(answer.error.message, "[redacted]");
    assertNoSecret(r.stdout + r.stderr, echoed);
  } finally {
    await node.close();
    await peer.close();
  }
});

Deno.test("the bridge's banner shows a refused account listing without the key or the token", async () => {
  const { peer, echoed } = echoing(401);
  const node = startHostilePeer({
    "POST /": async (r) => {
      const req = await r.json();
      return json({ jsonrpc: "2.0", id: req.id, result: "0x7a69" });
    },
  });
  const child = mainCommand([
    "rpc",
    "--http",
    "--rpcUrl",
    node.url,
    "--chainId",
    "31337",
    "--assetId",
    "ETH_TEST",
  ], {
    env: {
      SERVICE_API_KEY: API_KEY,
      SERVICE_API_PRIVATE_KEY_PATH: keys.pkcs8Pem,
      SERVICE_API_BASE_URL: peer.url,
    },
  }).spawn();
  let stderr = "";
  const reading = (async () => {
    for await (const t of child.stderr.pipeThrough(new TextDecoderStream())) stderr += t;
  })();
  try {
    for (let i = 0; i < 300 && !/Listening on/.test(stderr); i++) {
      await new Promise((r) => setTimeout(r, 100));
    }
    assertMatch(stderr, /\(none listed: .*\[redacted\].*\)/);
    assertMatch(
      stderr,
      /The API key goes to http:\/\/127\.0\.0\.1:\d+ \(from SERVICE_API_BASE_URL/,
    );
    assertNoSecret(stderr, echoed);
  } finally {
    child.kill("SIGTERM");
    await child.status;
    await reading;
    await child.stdout.cancel().catch(() => {});
    await node.close();
    await peer.close();
  }
});

Deno.test("ids and statuses holding ESC, an OSC title or a newline are shown escaped in a table and in an error; JSON is unchanged", async () => {
  const now = Date.now();
  const hostile = {
    id: "n1\x1b]0;owned\x07",
    createdAt: now,
    updatedAt: now,
    status: "FAILED\nn2  COMPLETED  forged",
    eventType: "transaction.created\x1b[2J",
  };
  const peer = startHostilePeer({
    "GET /v1/webhooks/*/notifications": () => json({ data: [hostile] }),
    "GET /v1/webhooks/*": () =>
      json({ message: "no webhook \x1b[31mw1\x1b[0m\nerror: forged" }, 404),
  });
  try {
    const table = await service(
      ["notifications", "list", "--webhookId", "w1", "--format", "table"],
      peer.url,
    );
    assertEquals(table.code, 0, table.stderr);
    assert(!RAW_CONTROL.test(table.stdout), JSON.stringify(table.stdout));
    const rows = table.stdout.trimEnd().split("\n");
    assertEquals(rows.length, 2, table.stdout); // the header and one row: no forged row
    assertStringIncludes(rows[1], "n1\\x1b]0;owned\\x07");
    assertStringIncludes(rows[1], "FAILED\\nn2  COMPLETED  forged");
    const asJson = await service(
      ["notifications", "list", "--webhookId", "w1", "--format", "ndjson"],
      peer.url,
    );
    assertEquals(JSON.parse(asJson.stdout), hostile);
    const error = await service(["webhooks", "get", "--webhookId", "w1"], peer.url);
    assertEquals(error.code, 4, error.stderr);
    assert(!RAW_CONTROL.test(error.stderr), JSON.stringify(error.stderr));
    assertEquals(error.stderr.trimEnd().split("\n").length, 1, error.stderr);
    assertMatch(error.stderr, /\\(x1b|u001b)\[31mw1\\(x1b|u001b)\[0m\\nerror: forged/);
  } finally {
    await peer.close();
  }
});

Deno.test("listen prints a delivery whose fields hold ESC, an OSC title or a newline escaped, on one line", async () => {
  const keysServer = startHostilePeer({ "GET /jwks": () => json({ keys: [] }) });
  const child = mainCommand([
    "webhooks",
    "listen",
    "--port",
    "0",
    "--respond",
    "200",
    "--jwks",
    `${keysServer.url}/jwks`,
    "--format",
    "table",
  ], { stdout: "piped", stderr: "piped" }).spawn();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let text = "";
  const lines = async (n: number) => {
    while (text.split("\n").length <= n) {
      const { value, done } = await reader.read();
      if (done) break;
      text += value;
    }
    return text.split("\n").slice(0, n);
  };
  try {
    const [url] = await lines(1);
    const res = await fetch(url, {
      method: "POST",
      body: JSON.stringify({
        id: "n1\nforged  line",
        webhookId: "w1",
        eventType: "transaction.created\x1b]0;owned\x07",
        resourceId: "r1\x1b[2J",
      }),
    });
    await res.body?.cancel();
    assertEquals(res.status, 200);
    const [, delivery] = await lines(2);
    assert(!RAW_CONTROL.test(delivery), JSON.stringify(delivery));
    assertStringIncludes(
      delivery,
      "transaction.created\\x1b]0;owned\\x07  r1\\x1b[2J  n1\\nforged  line",
    );
  } finally {
    child.kill("SIGTERM");
    await reader.cancel().catch(() => {});
    await child.stderr.cancel().catch(() => {});
    await child.status;
    await keysServer.close();
  }
});

Deno.test("the JWKS fetch does not follow a redirect to another host", async () => {
  const elsewhere = startHostilePeer({ "GET /keys": () => json({ keys: [] }) });
  const peer = startHostilePeer({
    "GET /jwks": () =>
      new Response(null, { status: 302, headers: { location: `${elsewhere.url}/keys` } }),
  });
  const dir = await Deno.makeTempDir();
  try {
    await Deno.writeTextFile(`${dir}/body.json`, '{"id":"n1"}');
    const b64 = (s: string) => btoa(s).replace(/=+$/, "").replace(/\+/g, "-").replace(/\//g, "_");
    const signature = `${b64('{"alg":"RS512","kid":"k1"}')}..${b64("not a signature")}`;
    const r = await service([
      "webhooks",
      "verify",
      "--body",
      `${dir}/body.json`,
      "--signature",
      signature,
      "--jwks",
      `${peer.url}/jwks`,
    ], peer.url);
    assertEquals(r.code, 6, r.stderr);
    assertMatch(r.stderr, /redirects to .*: redirects are not followed/);
    assertEquals(elsewhere.hits.get("GET /keys") ?? 0, 0, "the other host was asked for keys");
  } finally {
    await Deno.remove(dir, { recursive: true });
    await peer.close();
    await elsewhere.close();
  }
});
