/**
 * The findings, end to end through the real CLI (`deno run main.ts`),
 * each with its exit code and its one-line message, so that what was found
 * stays fixed:
 *
 * - `--privateKey /dev/zero` and a FIFO: refused at once (were: 8 GB read,
 *   blocked forever);
 * - `breaker simulate` on `cat a.gz b.gz`: read whole, as zcat does; gzip
 *   followed by garbage: its own message (both were "failed to write whole
 *   buffer");
 * - `--timeout 0`: a usage error naming the range (was: every request timed
 *   out, exit 7); a negative and an overflowing `sentTime`: named (were: 1969
 *   without a word, "sentTime null");
 * - `rpc --ipcPath /nonexistent/dir/x.ipc`: names the flag and the directory;
 *   `emulator --rpcUrl` of a closed port: one sentence, no ".." ; an HTML page
 *   answered 200 by `--apiBaseUrl` and a 302: say to check `--apiBaseUrl`
 *   and where it redirects.
 *
 * Each message was seen wrong before its fix (the text).
 */

import assert from "node:assert/strict";
import { runCli, startAnvil } from "../support/tools.ts";
import { makeTestKeys } from "../support/keys.ts";

const keys = await makeTestKeys();
const DIR = new URL("../fixtures/breaker/", import.meta.url).pathname;

/** One line on stderr, starting `error: `, nothing on stdout. */
function oneLine(r: { stdout: string; stderr: string }): string {
  assert.equal(r.stdout, "");
  const lines = r.stderr.trimEnd().split("\n");
  assert.equal(lines.length, 1, r.stderr);
  assert.match(lines[0], /^error: /);
  assert.doesNotMatch(lines[0], /\.\.( |$)/, "no doubled period");
  return lines[0];
}

async function gzip(bytes: Uint8Array): Promise<Uint8Array> {
  return new Uint8Array(
    await new Response(
      new Blob([bytes as BlobPart]).stream().pipeThrough(
        new CompressionStream("gzip"),
      ),
    ).arrayBuffer(),
  );
}

Deno.test("torture: a private key path that is /dev/zero or a FIFO is refused at once (exit 2)", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const fifo = `${dir}/key.fifo`;
    assert.equal((await new Deno.Command("mkfifo", { args: [fifo] }).output()).code, 0);
    for (const path of ["/dev/zero", fifo]) {
      const r = await runCli(["webhooks", "list", "--apiKey", "k", "--privateKey", path], {
        timeoutMs: 30_000, // a blocked read would be killed here and fail the test
      });
      assert.equal(r.code, 2, r.stderr);
      assert.match(
        oneLine(r),
        /Cannot read the private key file ".*": it is not a regular file \(a FIFO, device or socket\)\. Give --privateKey/,
      );
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("torture: breaker simulate reads multi-member gzip whole and names trailing garbage", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const plain = await Deno.readFile(DIR + "window_boundary.ndjson");
    const expected = await runCli(["breaker", "simulate", DIR + "window_boundary.ndjson"]);
    assert.equal(expected.code, 0, expected.stderr);
    // the log cut in two at a line boundary, each half gzipped: `cat a.gz b.gz`
    const text = new TextDecoder().decode(plain);
    const cut = text.indexOf("\n", text.length >> 1) + 1;
    const enc = new TextEncoder();
    const a = await gzip(enc.encode(text.slice(0, cut)));
    const b = await gzip(enc.encode(text.slice(cut)));
    const both = new Uint8Array(a.length + b.length);
    both.set(a);
    both.set(b, a.length);
    await Deno.writeFile(`${dir}/log.ndjson.gz`, both);
    const r = await runCli(["breaker", "simulate", `${dir}/log.ndjson.gz`]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, expected.stdout);
    const garbage = new Uint8Array(both.length + 5);
    garbage.set(both);
    garbage.set(enc.encode("junk\n"), both.length);
    await Deno.writeFile(`${dir}/junk.gz`, garbage);
    const g = await runCli(["breaker", "simulate", `${dir}/junk.gz`]);
    assert.equal(g.code, 1);
    assert.match(
      oneLine(g),
      /junk\.gz: its gzip data is followed by bytes that are not gzip \(trailing garbage.*zcat .*junk\.gz \| service breaker simulate/,
    );
    await Deno.writeFile(`${dir}/cut.gz`, a.subarray(0, a.length - 9));
    const c = await runCli(["breaker", "simulate", `${dir}/cut.gz`]);
    assert.equal(c.code, 1);
    assert.match(oneLine(c), /cut\.gz: it starts like gzip but does not decompress/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("torture: values that cannot work are refused: --timeout 0, negative and overflowing sentTime", async () => {
  const t = await runCli([
    "webhooks",
    "list",
    "--apiKey",
    "k",
    "--privateKey",
    keys.pkcs8Pem,
    "--timeout",
    "0",
  ]);
  assert.equal(t.code, 2);
  assert.equal(
    oneLine(t),
    'error: Invalid value "0" for --timeout: expected a duration from 100ms to 1h.',
  );
  for (
    const [value, want] of [
      ["-1000", /line 1: sentTime -1000 is before 1970-01-01T00:00:00Z/],
      ["1e400", /line 1: sentTime is a number too large to be a time \(it overflows to Infinity\)/],
    ] as const
  ) {
    const r = await runCli(["breaker", "simulate"], {
      stdin: `{"webhookId":"w1","sentTime":${value},"responseCode":500}\n`,
    });
    assert.equal(r.code, 1, r.stderr);
    assert.match(oneLine(r), want);
  }
});

Deno.test("torture: messages name the flag and what to do: --ipcPath, --rpcUrl, --apiBaseUrl answering HTML or 302", async () => {
  const anvil = await startAnvil();
  const html = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, (req) => {
    if (new URL(req.url).pathname.startsWith("/moved")) {
      return new Response(null, {
        status: 302,
        headers: { location: "https://elsewhere.example/v1/webhooks?token=SECRET" },
      });
    }
    return new Response("<!doctype html><title>Welcome</title>", {
      status: 200,
      headers: { "content-type": "text/html; charset=utf-8" },
    });
  });
  const base = `http://127.0.0.1:${html.addr.port}`;
  try {
    const ipc = await runCli([
      "rpc",
      "--emulator",
      "--rpcUrl",
      anvil.url,
      "--ipcPath",
      "/nonexistent/dir/x.ipc",
      "--",
      "true",
    ]);
    assert.equal(ipc.code, 2, ipc.stderr);
    assert.equal(
      oneLine(ipc),
      "error: Cannot listen on /nonexistent/dir/x.ipc: its directory /nonexistent/dir does not exist. Choose another --ipcPath.",
    );

    // a port nobody listens on (taken, then freed)
    const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
    const closed = (l.addr as Deno.NetAddr).port;
    l.close();
    const node = await runCli(["emulator", "--rpcUrl", `http://127.0.0.1:${closed}`]);
    assert.equal(node.code, 2);
    assert.match(
      oneLine(node),
      new RegExp(
        `^error: Cannot reach the node at --rpcUrl http://127\\.0\\.0\\.1:${closed} \\(HTTP request failed: .+\\)\\. Start it first \\(e\\.g\\. anvil\\) or fix the URL\\.$`,
      ),
    );

    const conn = ["--apiKey", "k", "--privateKey", keys.pkcs8Pem, "--retries", "0"];
    const page = await runCli(["webhooks", "list", ...conn, "--apiBaseUrl", base]);
    assert.equal(page.code, 6, page.stderr); // cli.md: 6 = platform unreachable (not its API)
    assert.match(
      oneLine(page),
      new RegExp(
        `an HTML page \\(text/html\\), not JSON\\)\\. Check that --apiBaseUrl \\(${
          base.replace(/\./g, "\\.")
        }\\) is the platform's API\\.$`,
      ),
    );
    const moved = await runCli(["webhooks", "list", ...conn, "--apiBaseUrl", `${base}/moved`]);
    assert.equal(moved.code, 6, moved.stderr); // a redirect is not followed: not reachable there
    const line = oneLine(moved);
    assert.match(
      line,
      /answered 302.*It redirects to https:\/\/elsewhere\.example\/v1\/webhooks: give that address as --apiBaseUrl/,
    );
    assert.doesNotMatch(line, /SECRET|Check the values given/);
  } finally {
    await html.shutdown();
    await anvil.stop();
  }
});

/** `gzip` of `mib` MiB of zero bytes, as `copies` concatenated members (a small file, a huge output). */
async function zeroBomb(mib: number, copies: number): Promise<Uint8Array> {
  const member = await gzip(new Uint8Array(mib * 1024 * 1024));
  const out = new Uint8Array(member.length * copies);
  for (let i = 0; i < copies; i++) out.set(member, i * member.length);
  return out;
}

Deno.test("torture: breaker simulate on /dev/zero, a gzip bomb and a 20 MB line: one line naming the 1 MiB line limit, exit 1", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await Deno.writeFile(`${dir}/bomb.gz`, await zeroBomb(64, 16)); // 1 GiB of zeros
    const line = '{"webhookId":"w1","sentTime":1767225600000,"responseCode":200}\n';
    await Deno.writeTextFile(`${dir}/long.ndjson`, line + `{"webhookId":"${"a".repeat(20e6)}"}\n`);
    for (
      const [args, n] of [
        [["/dev/zero"], 1],
        [[`${dir}/bomb.gz`], 1],
        [[`${dir}/long.ndjson`], 2],
      ] as const
    ) {
      const r = await runCli(["breaker", "simulate", ...args], { timeoutMs: 30_000 });
      assert.equal(r.code, 1, `${args}: ${r.stderr}`);
      assert.match(
        oneLine(r),
        new RegExp(`line ${n} is longer than 1048576 bytes, the limit of a delivery-log line`),
      );
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("torture: breaker simulate waiting on a FIFO stops on SIGTERM; a FIFO is read whole", async () => {
  const dir = await Deno.makeTempDir();
  const line = '{"webhookId":"w1","sentTime":1767225600000,"responseCode":503}\n';
  try {
    const fifo = `${dir}/log.fifo`;
    assert.equal((await new Deno.Command("mkfifo", { args: [fifo] }).output()).code, 0);
    // 1. a writer that wrote one line and stays silent: SIGTERM ends the run (exit 143)
    const child = new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", "main.ts", "breaker", "simulate", fifo],
      cwd: new URL("../../", import.meta.url).pathname,
      env: { NO_COLOR: "1", RUST_BACKTRACE: "0" },
      stdout: "null",
      stderr: "null",
      signal: AbortSignal.timeout(30_000), // a run that ignores SIGTERM is killed here: the test fails
    }).spawn();
    const writer = await Deno.open(fifo, { write: true }); // returns once the run opened it
    await writer.write(new TextEncoder().encode(line));
    child.kill("SIGTERM");
    const status = await child.status;
    writer.close();
    assert.equal(status.signal === "SIGKILL" ? "killed by the timeout" : status.code, 143);
    // 2. a FIFO: every line counted
    const run = runCli(["breaker", "simulate", fifo, "--format", "json"], {
      timeoutMs: 30_000,
    });
    const w = await Deno.open(fifo, { write: true });
    await w.write(new TextEncoder().encode(line.repeat(5)));
    w.close();
    const r = await run;
    assert.equal(r.code, 0, r.stderr);
    assert.equal(JSON.parse(r.stdout).summary.attempts, 5);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("torture: a malformed API key is a usage error before any request, and no part of it is shown", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const pem = `${dir}/api.pem`;
    await Deno.writeTextFile(pem, keys.pkcs8Pem);
    // a server that counts requests: none may arrive
    let requests = 0;
    const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, () => {
      requests++;
      return new Response("{}");
    });
    try {
      const base = `http://127.0.0.1:${server.addr.port}`;
      for (const apiKey of ["sekret key\nxyz", "sekret\u0001xyz", "sekret\u00e9xyz"]) {
        const r = await runCli(
          ["whoami", "--verbose", "--apiKey", apiKey, "--privateKey", pem, "--apiBaseUrl", base],
          { timeoutMs: 30_000 },
        );
        assert.equal(r.code, 2, r.stderr);
        assert.match(oneLine(r), /The API key \(--apiKey or SERVICE_API_KEY\) is malformed/);
        assert.doesNotMatch(r.stderr, /sekret|xyz/);
      }
      assert.equal(requests, 0);
    } finally {
      await server.shutdown();
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

/** A server whose every answer is an endless 200 body (counts the bytes it sent). */
function endlessServer(): { url: string; sent: () => number; close: () => Promise<void> } {
  let sent = 0;
  const chunk = new Uint8Array(64 * 1024).fill(0x20);
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, () =>
    new Response(
      new ReadableStream({
        pull(c) {
          sent += chunk.length;
          c.enqueue(chunk);
        },
      }),
      { headers: { "content-type": "application/json" } },
    ));
  return {
    url: `http://127.0.0.1:${server.addr.port}`,
    sent: () => sent,
    close: () => server.shutdown(),
  };
}

Deno.test("torture: an endless JWKS or platform answer is refused once past its bound (1 MiB, 16 MiB), one line", async () => {
  const endless = endlessServer();
  const dir = await Deno.makeTempDir();
  try {
    await Deno.writeTextFile(`${dir}/body.json`, '{"id":"n1"}');
    const header = btoa(JSON.stringify({ alg: "RS512", kid: "k1" })).replace(/=+$/, "");
    const v = await runCli([
      "webhooks",
      "verify",
      "--body",
      `${dir}/body.json`,
      "--signature",
      `${header}..c2ln`,
      "--jwks",
      `${endless.url}/jwks.json`,
    ], { timeoutMs: 30_000 });
    assert.notEqual(v.code, 0);
    assert.match(oneLine(v), /is larger than 1048576 bytes: not a key set/);
    const pem = `${dir}/api.pem`;
    await Deno.writeTextFile(pem, keys.pkcs8Pem);
    const w = await runCli(
      [
        "whoami",
        "--apiKey",
        "k",
        "--privateKey",
        pem,
        "--apiBaseUrl",
        endless.url,
        "--retries",
        "0",
      ],
      { timeoutMs: 30_000 },
    );
    assert.notEqual(w.code, 0);
    assert.match(oneLine(w), /an answer larger than 16777216 bytes/);
    assert.ok(endless.sent() < 200 * 1024 * 1024, `sent ${endless.sent()} bytes`);
    // and a --body that never ends (/dev/zero): a usage error past 1 MiB
    const z = await runCli([
      "webhooks",
      "verify",
      "--body",
      "/dev/zero",
      "--signature",
      `${header}..c2ln`,
      "--jwks",
      `${endless.url}/jwks.json`,
    ], { timeoutMs: 30_000 });
    assert.equal(z.code, 2, z.stderr);
    assert.match(oneLine(z), /--body is larger than 1048576 bytes/);
  } finally {
    await endless.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("torture: a profiles directory others can write in (0777) is refused, exit 2", async () => {
  const home = await Deno.makeTempDir();
  try {
    const env = { HOME: home, XDG_CONFIG_HOME: "" };
    const set = await runCli(
      ["config", "set", "--profile", "p1", "--apiBaseUrl", "https://sandbox.example.io"],
      { env },
    );
    assert.equal(set.code, 0, set.stderr);
    await Deno.chmod(`${home}/.config/service`, 0o777);
    const r = await runCli(["config", "list"], { env });
    assert.equal(r.code, 2, r.stderr);
    assert.match(
      oneLine(r),
      /its permissions 0777 let other users replace the profiles file in it.*chmod 700/,
    );
  } finally {
    await Deno.remove(home, { recursive: true });
  }
});

Deno.test("torture: breaker simulate reads a quoted CSV cell holding a newline and refuses a row with extra cells", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const quoted = `${dir}/quoted.csv`;
    await Deno.writeTextFile(
      quoted,
      'webhookId,sentTime,responseCode,notificationId\nw1,1767225600000,503,"n1\nsecond line"\nw1,1767225660000,200,n2\n',
    );
    const q = await runCli(["breaker", "simulate", quoted, "--format", "json"]);
    assert.equal(q.code, 0, q.stderr);
    assert.equal(JSON.parse(q.stdout).summary.attempts, 2);
    const extra = `${dir}/extra.csv`;
    await Deno.writeTextFile(extra, "webhookId,sentTime,responseCode\nw1,1767225600000,503,x\n");
    const r = await runCli(["breaker", "simulate", extra]);
    assert.equal(r.code, 1);
    assert.match(oneLine(r), /line 2: 4 cells, but the header names 3 columns/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
