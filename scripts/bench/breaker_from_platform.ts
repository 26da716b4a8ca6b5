/**
 * `service breaker simulate --webhookId W` (issue 27): the window's
 * notifications and their attempts read from a real emulator, replayed.
 * Two endpoints in one emulator (--timeScale 3600, so retries come within
 * milliseconds): a small one (default 1,000 notifications) and a large one
 * (default 5,000); about one delivery in three fails (500) and is retried,
 * so a notification has 1 to 3 attempts. For each the CLI is run as a user
 * runs it, under GNU time, with `--save` and `--verbose` (its debug line
 * gives the requests and the read's seconds); the baseline is the offline
 * replay of the large endpoint's saved log in the same run.
 *
 * A third read of the large endpoint runs with V8's heap capped at 48 MiB
 * (it completes: the live data is bounded; the rest of the peak is garbage
 * not yet collected).
 *
 * Reported: requests, seconds and peak RSS of each read; the large/small
 * peak memory ratio (flat memory: about 1) and the read/offline time ratio.
 *
 *   deno run -A scripts/bench/breaker_from_platform.ts [small=1000] [large=5000]
 *
 * @module
 */

import { startEmulatorOnAnvil, waitFor } from "../../tests/support/emulator_process.ts";

const root = new URL("../../", import.meta.url).pathname;
const small = Number(Deno.args[0] ?? 1_000);
const large = Number(Deno.args[1] ?? 5_000);

interface Run {
  kb: number;
  ms: number;
  stdout: string;
  stderr: string;
}

async function timed(
  args: string[],
  env: Record<string, string>,
  denoFlags: string[] = [],
): Promise<Run> {
  const t0 = performance.now();
  const out = await new Deno.Command("/usr/bin/time", {
    args: ["-v", Deno.execPath(), "run", "-A", ...denoFlags, `${root}main.ts`, ...args],
    env: { ...env, NO_COLOR: "1", RUST_BACKTRACE: "0" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const ms = performance.now() - t0;
  const stderr = new TextDecoder().decode(out.stderr);
  const m = stderr.match(/Maximum resident set size \(kbytes\): (\d+)/);
  if (out.code !== 0 || !m) throw new Error(`${args.join(" ")} failed: ${stderr.slice(-800)}`);
  return { kb: Number(m[1]), ms, stdout: new TextDecoder().decode(out.stdout), stderr };
}

// per endpoint: the first 10 answers are 200, then one in three is 500 (about 33%, below the
// band), so that no endpoint is suspended whatever order attempts in flight finish in
const seen = new Map<string, number>();
const receiver = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, (req) => {
  const path = new URL(req.url).pathname;
  const n = seen.get(path) ?? 0;
  seen.set(path, n + 1);
  return new Response(null, { status: n >= 10 && n % 3 === 2 ? 500 : 200 });
});
const emu = await startEmulatorOnAnvil(["--timeScale", "3600"]);
const dir = await Deno.makeTempDir({ prefix: "bench-breaker-platform-" });
try {
  const env = {
    SERVICE_API_BASE_URL: emu.ready.apiBaseUrl,
    SERVICE_API_KEY: emu.ready.apiKey,
    SERVICE_API_PRIVATE_KEY_PATH: emu.ready.privateKeyPath,
  };
  const hook = async (event: string, count: number) => {
    const r = await emu.api<{ id: string }>("POST", "/v1/webhooks", {
      body: { url: `http://127.0.0.1:${receiver.addr.port}/${event}`, events: [event] },
    });
    for (let left = count; left > 0; left -= 1000) {
      await emu.api("POST", "/admin/notifications", {
        body: { eventType: event, count: Math.min(1000, left) },
      });
    }
    return r.data.id;
  };
  const ws = await hook("connection.added", small);
  const wl = await hook("connection.removed", large);
  const t0 = performance.now();
  for (const w of [ws, wl]) {
    await waitFor(
      `every notification of ${w} to end`,
      async () => {
        const r = await emu.api<{ total: number }>("GET", `/v1/webhooks/${w}/notifications`, {
          query: { statuses: ["IN_PROGRESS"], pageSize: 1 },
        });
        return r.data.total === 0;
      },
      600_000,
      500,
    );
  }
  console.log(
    `delivered ${small + large} notifications in ${((performance.now() - t0) / 1000).toFixed(1)} s`,
  );

  const read = async (w: string, count: number, denoFlags: string[] = []) => {
    const file = `${dir}/${count}${denoFlags.length ? "-capped" : ""}.ndjson`;
    const r = await timed(
      [
        "breaker",
        "simulate",
        "--webhookId",
        w,
        "--since",
        "1h",
        "--save",
        file,
        "--format",
        "ndjson",
        "--verbose",
      ],
      env,
      denoFlags,
    );
    const m = r.stderr.match(
      /read (\d+) notification\(s\) and (\d+) attempt\(s\) .* in (\d+) request\(s\), ([\d.]+) s/,
    );
    if (!m) throw new Error(`no debug line: ${r.stderr.slice(-800)}`);
    const summary = JSON.parse(r.stdout.trim().split("\n").find((l) => l.includes('"summary"'))!);
    return {
      notifications: Number(m[1]),
      attempts: Number(m[2]),
      requests: Number(m[3]),
      seconds: Number(m[4]),
      run: r,
      file,
      summary,
    };
  };
  const s = await read(ws, small);
  const l = await read(wl, large);
  // the same read with V8's heap capped at 48 MiB: it completes, so what the reads
  // above hold at their peak is garbage not yet collected, not live data
  const capped = await read(wl, large, ["--v8-flags=--max-old-space-size=48"]);
  const offline = await timed(["breaker", "simulate", l.file, "--format", "ndjson"], env);
  const row = (name: string, x: typeof s) =>
    `${name.padEnd(6)} ${String(x.notifications).padStart(6)} notifications ${
      String(x.attempts).padStart(6)
    } attempts ${String(x.requests).padStart(6)} requests  read ${
      x.seconds.toFixed(1)
    } s  process ${(x.run.ms / 1000).toFixed(1)} s  peak ${(x.run.kb / 1024).toFixed(0)} MiB`;
  console.log(row("small", s));
  console.log(row("large", l));
  console.log(row("capped", capped) + " (V8 heap capped at 48 MiB)");
  console.log(
    `offline replay of the large saved log: ${(offline.ms / 1000).toFixed(1)} s, peak ${
      (offline.kb / 1024).toFixed(0)
    } MiB`,
  );
  console.log(`peak memory large/small: ${(l.run.kb / s.run.kb).toFixed(2)} (flat: about 1)`);
  console.log(`read+replay / offline replay (large): ${(l.run.ms / offline.ms).toFixed(1)}x`);
  const same = offline.stdout.trim() === l.run.stdout.trim().split("\n").filter((x) =>
    !x.includes('"type":"platform"')
  ).join("\n");
  console.log(`offline output equals the online one: ${same}`);
  if (!same) Deno.exitCode = 1;
} finally {
  await emu.stop();
  await receiver.shutdown();
  await Deno.remove(dir, { recursive: true });
}
