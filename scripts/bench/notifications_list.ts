/**
 * `service notifications list --all` memory: peak RSS of the CLI paging
 * through 10,000 and then 100,000 notifications of one webhook in a real
 * emulator, against the baseline of `service --version` in the same run. Flat
 * memory means the 100k/10k ratio stays near 1.
 *
 *   deno run -A scripts/bench/notifications_list.ts [small=10000] [large=100000]
 *
 * Uses /usr/bin/time -v (GNU time) for the peak RSS of the child process.
 *
 * @module
 */

import { startEmulatorOnAnvil } from "../../tests/support/emulator_process.ts";

const root = new URL("../../", import.meta.url).pathname;
const small = Number(Deno.args[0] ?? 10_000);
const large = Number(Deno.args[1] ?? 100_000);

async function peakRss(
  args: string[],
  env: Record<string, string>,
): Promise<{ kb: number; ms: number; lines: number }> {
  const t0 = performance.now();
  const out = await new Deno.Command("/usr/bin/time", {
    args: ["-v", Deno.execPath(), "run", "-A", `${root}main.ts`, ...args],
    env: { ...env, NO_COLOR: "1", RUST_BACKTRACE: "0" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const ms = performance.now() - t0;
  const err = new TextDecoder().decode(out.stderr);
  const m = err.match(/Maximum resident set size \(kbytes\): (\d+)/);
  if (out.code !== 0 || !m) throw new Error(`${args.join(" ")} failed: ${err.slice(-500)}`);
  const lines = new TextDecoder().decode(out.stdout).split("\n").filter((l) => l).length;
  return { kb: Number(m[1]), ms, lines };
}

const emu = await startEmulatorOnAnvil();
try {
  const env = {
    SERVICE_API_KEY: emu.ready.apiKey,
    SERVICE_API_PRIVATE_KEY_PATH: emu.ready.privateKeyPath,
    SERVICE_API_BASE_URL: emu.ready.apiBaseUrl,
  };
  // An endpoint nobody listens on: the first delivery fails, the breaker suspends it, and every
  // other notification waits ON_HOLD, so the emulator spends no time delivering during the listing.
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const deadPort = (l.addr as Deno.NetAddr).port;
  l.close();
  const hook = await emu.api<{ id: string }>("POST", "/v1/webhooks", {
    body: { url: `http://127.0.0.1:${deadPort}/hook`, events: ["transaction.created"] },
  });
  const list = [
    "notifications",
    "list",
    "--webhookId",
    hook.data.id,
    "--all",
    "--format",
    "ndjson",
  ];
  const create = async (n: number) => {
    for (let made = 0; made < n;) {
      const count = Math.min(10_000, n - made);
      const r = await emu.api("POST", "/admin/notifications", {
        body: { eventType: "transaction.created", count },
      });
      if (r.status !== 201) throw new Error(`admin/notifications answered ${r.status}`);
      made += count;
    }
  };
  const base = await peakRss(["--version"], env);
  await create(small);
  const a = await peakRss(list, env);
  await create(large - small);
  const b = await peakRss(list, env);
  const mb = (kb: number) => (kb / 1024).toFixed(1);
  console.log(`baseline  service --version             peak RSS ${mb(base.kb)} MB`);
  console.log(
    `list --all ${String(a.lines).padStart(7)} notifications  peak RSS ${mb(a.kb)} MB  ${
      (a.ms / 1000).toFixed(1)
    } s  (${Math.round(a.lines / (a.ms / 1000))}/s)`,
  );
  console.log(
    `list --all ${String(b.lines).padStart(7)} notifications  peak RSS ${mb(b.kb)} MB  ${
      (b.ms / 1000).toFixed(1)
    } s  (${Math.round(b.lines / (b.ms / 1000))}/s)`,
  );
  console.log(
    `RSS ratio ${b.lines}/${a.lines}: ${(b.kb / a.kb).toFixed(2)}  (above baseline: ${
      ((b.kb - base.kb) / 1024).toFixed(1)
    } MB vs ${((a.kb - base.kb) / 1024).toFixed(1)} MB)`,
  );
} finally {
  await emu.stop();
}
