/**
 * Benchmark of `service breaker simulate` (issues 5, 15 and 31).
 *
 * Generates a delivery log of 5,000,000 attempts (epoch-ms times, 1,000
 * endpoints, the line shape `notifications attempts` prints plus webhookId
 * and notificationId; a notification whose attempt fails is retried on the
 * platform's schedule until delivered or 10 attempts, as the platform
 * does, so notifications reach a final status) into a temporary directory,
 * then in one run measures:
 *
 *   (a) the baseline: a bare loop that reads the file and JSON.parses every
 *       line (scripts/bench/json_parse_baseline.ts, a child process);
 *   (b) `service breaker simulate FILE --format ndjson` over the same file
 *       (a child process, as a user runs it: the bundle of the npm package
 *       with its flags, `program.ts`; `BRIDGE_SOURCE=1`: the checkout's
 *       main.ts, as the bench ran it before issue 31);
 *
 * both on ONE core (`taskset -c 0` when it exists), and reports the time
 * ratio (b)/(a) (issue 31's target: <= 0.6); with `--against DIR` also
 *
 *   (b') the same command from another checkout (e.g. an older commit in a
 *       temporary worktree; its own bundle, built by its own
 *       `scripts/bundle.ts`), run right after (b) in each round, saying
 *       whether both print the same bytes, and the ratios (b)/(b');
 *
 * and the peak resident memory of (b) over the first 1,000,000 lines versus
 * all 5,000,000, with and without `--notifications` (target: flat, ratio
 * about 1). Peak memory is the child's VmHWM from /proc (Linux), polled
 * until it exits.
 *
 * Each measurement runs `--runs` times (default 3), interleaved, and the
 * median (and best) is reported (the machine is shared).
 * A last run adds `--plot` to show the picture stays small.
 *
 * Usage: deno run -A scripts/bench/breaker_simulate.ts [--lines N] [--small N] [--runs N] [--keep] [--file F --small-file F] [--against DIR]
 *
 * @module
 */

import { parseArgs } from "node:util";
import { seededRandom } from "../../tests/support/seeded_random.ts";
import { benchProgram, type Program } from "./program.ts";

const root = new URL("../../", import.meta.url).pathname;

/** The size of a generated log, and the optional file of its first lines. */
export interface LogShape {
  /** Attempts (lines) in the log. */
  lines: number;
  /** Endpoints (webhook ids) they go to. */
  endpoints: number;
  /** Also writes the first `small.lines` lines to `small.path`. */
  small?: { path: string; lines: number };
}

/**
 * Writes a deterministic delivery log of `shape.lines` attempts to `path` (the
 * same bytes for the same shape, every run; see the module doc).
 */
export async function generate(path: string, shape: LogShape): Promise<void> {
  const LINES = shape.lines;
  const ENDPOINTS = shape.endpoints;
  const SMALL = shape.small ? Math.min(shape.small.lines, LINES) : 0;
  const rnd = seededRandom(42); // the same log each run
  const enc = new TextEncoder();
  const big = await Deno.open(path, { write: true, create: true, truncate: true });
  const small = shape.small
    ? await Deno.open(shape.small.path, { write: true, create: true, truncate: true })
    : undefined;
  // each endpoint has a health profile: healthy, flaky (in the band), or failing in bursts
  const profile = Array.from(
    { length: ENDPOINTS },
    (_, i) => (i % 20 === 0 ? 2 : i % 7 === 0 ? 1 : 0),
  );
  const start = Date.UTC(2026, 0, 1);
  const spanMs = 7 * 86_400_000; // one week
  const step = spanMs / LINES;
  // as the platform delivers: a notification that fails (retryably) is retried on the
  // schedule until delivered or 10 attempts, so notifications reach a final status and the
  // ones in flight at any time are bounded by the schedule's span, not by the log
  const DELAYS = [10, 30, 120, 300, 900, 1800, 3600, 7200, 14400].map((s) => s * 1000);
  const due = new Heap(); // pending retries by due time
  let buf = "";
  let notification = 0;
  for (let i = 0; i < LINES; i++) {
    const t = Math.floor(start + i * step);
    let ep: number;
    let id: number;
    let attempt: number;
    const next = due.peek();
    if (next !== null && next.at <= t) {
      due.pop();
      ep = next.ep;
      id = next.id;
      attempt = next.attempt;
    } else {
      ep = Math.floor(rnd() * ENDPOINTS);
      id = ++notification;
      attempt = 1;
    }
    const p = profile[ep];
    const hour = Math.floor((t - start) / 3_600_000);
    const errP = p === 0 ? 0.02 : p === 1 ? 0.6 : (hour % 12 < 2 ? 0.97 : 0.05);
    let outcome: string;
    let retry = false;
    if (rnd() < errP) {
      const r = rnd();
      retry = r >= 0.25 && r < 0.3 ? false : true; // a 404 is final
      outcome = r < 0.15
        ? `"failureReason":"TIMED_OUT"`
        : r < 0.25
        ? `"failureReason":"NO_RESPONSE"`
        : r < 0.3
        ? `"responseCode":404`
        : `"responseCode":503`;
    } else outcome = `"responseCode":200`;
    if (retry && attempt < 10) {
      due.push({ at: t + DELAYS[attempt - 1], ep, id, attempt: attempt + 1 });
    }
    buf += `{"webhookId":"wh-${
      String(ep).padStart(4, "0")
    }","notificationId":"n-${id}","sentTime":${t},"duration":${
      Math.floor(rnd() * 900)
    },${outcome}}\n`;
    if (buf.length > 1 << 20 || i === LINES - 1) {
      const bytes = enc.encode(buf);
      await big.write(bytes).then(async (n) => {
        let off = n;
        while (off < bytes.length) off += await big.write(bytes.subarray(off));
      });
      const lines = buf.split("\n");
      lines.pop();
      const before = i + 1 - lines.length; // lines written before this buffer
      if (small && before < SMALL) {
        // the small file is exactly the first SMALL lines (it missed the last buffer's share)
        const keep = Math.min(lines.length, SMALL - before);
        const part = enc.encode(lines.slice(0, keep).join("\n") + "\n");
        let off = 0;
        while (off < part.length) off += await small.write(part.subarray(off));
      }
      buf = "";
    }
  }
  big.close();
  small?.close();
}

/** A retry due at `at`: attempt number `attempt` of notification `id` to endpoint `ep`. */
interface Due {
  at: number;
  ep: number;
  id: number;
  attempt: number;
}

/** A binary min-heap of due retries (ties in insertion order do not matter here). */
class Heap {
  #a: Due[] = [];
  peek(): Due | null {
    return this.#a[0] ?? null;
  }
  push(d: Due): void {
    const a = this.#a;
    a.push(d);
    let i = a.length - 1;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (a[p].at <= a[i].at) break;
      [a[p], a[i]] = [a[i], a[p]];
      i = p;
    }
  }
  pop(): void {
    const a = this.#a;
    const last = a.pop()!;
    if (a.length === 0) return;
    a[0] = last;
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < a.length && a[l].at < a[m].at) m = l;
      if (r < a.length && a[r].at < a[m].at) m = r;
      if (m === i) return;
      [a[m], a[i]] = [a[i], a[m]];
      i = m;
    }
  }
}

/** What {@linkcode measure} saw of one child process. */
export interface Measured {
  seconds: number;
  /** CPU time (user + system, all threads) of the child: its work, whatever else runs. */
  cpuSeconds: number;
  peakRssMb: number;
  code: number;
  stdout: string;
}

/** `taskset -c 0` when it exists: "one core". */
const PIN: string[] = await (async () => {
  try {
    const r = await new Deno.Command("taskset", { args: ["-c", "0", "true"] }).output();
    return r.success ? ["taskset", "-c", "0"] : [];
  } catch {
    return [];
  }
})();

/**
 * Runs `deno <args>` in the checkout (pinned to one core when `pinned` and
 * `taskset` exists; stdout kept unless `discard`) and measures its wall time,
 * CPU time and peak RSS (VmHWM, polled every 25 ms until it exits).
 */
export async function measure(
  args: string[],
  pinned = false,
  discard = false,
): Promise<Measured> {
  const t0 = performance.now();
  const cmd = pinned && PIN.length ? PIN[0] : Deno.execPath();
  const child = new Deno.Command(cmd, {
    args: pinned && PIN.length ? [...PIN.slice(1), Deno.execPath(), ...args] : args,
    cwd: root,
    stdout: discard ? "null" : "piped",
    stderr: "inherit",
    env: { NO_COLOR: "1", RUST_BACKTRACE: "0" },
  }).spawn();
  let peakKb = 0;
  let cpuTicks = 0;
  let done = false;
  const poll = (async () => {
    while (!done) {
      try {
        const status = await Deno.readTextFile(`/proc/${child.pid}/status`);
        const m = status.match(/VmHWM:\s+(\d+) kB/);
        if (m) peakKb = Math.max(peakKb, Number(m[1]));
        // utime and stime (fields 14, 15) in clock ticks, after the ")" of the name
        const stat = (await Deno.readTextFile(`/proc/${child.pid}/stat`)).split(") ")[1].split(" ");
        cpuTicks = Math.max(cpuTicks, Number(stat[11]) + Number(stat[12]));
      } catch { /* exited */ }
      await new Promise((r) => setTimeout(r, 25));
    }
  })();
  const out = discard ? { code: (await child.status).code, stdout: null } : await child.output();
  const seconds = (performance.now() - t0) / 1000;
  done = true;
  await poll;
  return {
    seconds,
    peakRssMb: peakKb / 1024,
    cpuSeconds: cpuTicks / 100, // USER_HZ
    code: out.code,
    stdout: out.stdout === null ? "" : new TextDecoder().decode(out.stdout),
  };
}

if (import.meta.main) {
  const { values } = parseArgs({
    args: Deno.args,
    options: {
      lines: { type: "string", default: "5000000" },
      small: { type: "string", default: "1000000" },
      endpoints: { type: "string", default: "1000" },
      keep: { type: "boolean", default: false },
      file: { type: "string" },
      "small-file": { type: "string" },
      runs: { type: "string", default: "3" },
      against: { type: "string" },
    },
  });
  const LINES = Number(values.lines);
  const SMALL = Math.min(Number(values.small), LINES);
  const ENDPOINTS = Number(values.endpoints);
  const RUNS = Math.max(1, Number(values.runs));
  const dir = await Deno.makeTempDir({ prefix: "breaker-bench-" });
  const big = values.file ?? `${dir}/deliveries-${LINES}.ndjson`;
  const small = values["small-file"] ?? `${dir}/deliveries-${SMALL}.ndjson`;
  const cleanups: (() => Promise<void>)[] = [];
  try {
    if (values.file === undefined) {
      console.error(
        `generating ${LINES.toLocaleString("en-US")} attempts for ${ENDPOINTS} endpoints...`,
      );
      await generate(big, {
        lines: LINES,
        endpoints: ENDPOINTS,
        small: { path: small, lines: SMALL },
      });
    }
    const size = (await Deno.stat(big)).size;
    console.error(`log: ${(size / 1e6).toFixed(0)} MB`);
    const baselineScript = `${root}scripts/bench/json_parse_baseline.ts`;
    const baseline = (file: string) => ["run", "-A", baselineScript, file];
    const against = values.against;
    // what a user runs (the bundle and its flags), for this checkout and the other one
    const programs: Program[] = [await benchProgram()];
    if (against !== undefined) {
      programs.push(await benchProgram(against.endsWith("/") ? against : `${against}/`));
    }
    cleanups.push(...programs.map((p) => p.cleanup));
    console.error(`program: ${programs.map((p) => p.description).join("; against ")}`);
    const simWith = (program: Program, file: string, ...extra: string[]) => [
      ...program.args,
      "breaker",
      "simulate",
      file,
      "--format",
      "ndjson",
      ...extra,
    ];
    const sim = (file: string, ...extra: string[]) => simWith(programs[0], file, ...extra);
    const simRef = (file: string) => simWith(programs[1], file);
    // warm the page cache and Deno's module cache once
    await measure(baseline(small));
    await measure(sim(small));
    if (against !== undefined) await measure(simRef(small));
    // this machine is shared and noisy: interleave the runs, keep the best and the median
    const as: Measured[] = [];
    const bs: Measured[] = [];
    const smalls: Measured[] = [];
    const olds: Measured[] = [];
    const nBig: Measured[] = [];
    const nSmall: Measured[] = [];
    for (let i = 0; i < RUNS; i++) {
      as.push(await measure(baseline(big), true));
      bs.push(await measure(sim(big), true));
      smalls.push(await measure(sim(small), true));
      if (against !== undefined) olds.push(await measure(simRef(big), true));
      // millions of notification lines: not kept
      nSmall.push(await measure(sim(small, "--notifications"), false, true));
      nBig.push(await measure(sim(big, "--notifications"), false, true));
    }
    for (const m of [...as, ...bs, ...smalls, ...olds, ...nSmall, ...nBig]) {
      if (m.code !== 0) throw new Error(`a child failed with exit code ${m.code}`);
    }
    const sameOutput = olds.every((m) => m.stdout === bs[0].stdout);
    const summary = JSON.parse(bs[0].stdout.trim().split("\n").pop()!);
    const lines: number = summary.attempts;
    const plotFile = `${dir}/plot.svg`;
    const plotted = await measure(sim(big, "--plot", plotFile));
    const plotSize = (await Deno.stat(plotFile)).size;
    const best = (ms: Measured[]) => Math.min(...ms.map((m) => m.seconds));
    const median = (xs: number[]) => [...xs].sort((x, y) => x - y)[xs.length >> 1];
    const med = (ms: Measured[]) => median(ms.map((m) => m.seconds));
    const peak = (ms: Measured[]) => Math.max(...ms.map((m) => m.peakRssMb));
    // ratios per run (each pair ran back to back), then their median
    const ratio = median(bs.map((b, i) => b.seconds / as[i].seconds));
    const cpuRatio = median(bs.map((b, i) => b.cpuSeconds / as[i].cpuSeconds));
    const cpu = (ms: Measured[]) => median(ms.map((m) => m.cpuSeconds)).toFixed(2);
    const rate = (s: number) => Math.round(LINES / s).toLocaleString("en-US");
    const fmt = (s: number) => s.toFixed(2);
    console.log(
      `log: ${LINES.toLocaleString("en-US")} attempts, ${ENDPOINTS} endpoints, ${
        (size / 1e6).toFixed(0)
      } MB; simulate found ${summary.suspensions} suspensions, ${summary.suppressed} suppressed`,
    );
    console.log(`program (b): ${programs[0].description}, V8 flags "${programs[0].v8Flags}"`);
    console.log(
      `runs: ${RUNS} of each, interleaved; median (best) wall time; one core = ${
        PIN.length ? PIN.join(" ") : "not pinned (no taskset)"
      }`,
    );
    console.log(
      `(a) read + JSON.parse every line, one core: ${fmt(med(as))} s (${fmt(best(as))} s) = ${
        rate(med(as))
      } lines/s, peak RSS ${peak(as).toFixed(0)} MB`,
    );
    console.log(
      `(b) breaker simulate, one core:             ${fmt(med(bs))} s (${fmt(best(bs))} s) = ${
        rate(med(bs))
      } attempts/s`,
    );
    console.log(
      `ratio (b)/(a): ${ratio.toFixed(2)} median of per-run ratios (target <= 0.6: ${
        (1 / ratio).toFixed(2)
      }x faster than the bare loop)`,
    );
    console.log(
      `CPU time (user + system, all threads; robust when the machine is shared): (a) ${
        cpu(as)
      } s, (b) ${cpu(bs)} s, ratio ${cpuRatio.toFixed(2)} median`,
    );
    if (olds.length > 0) {
      const r = median(bs.map((b, i) => b.seconds / olds[i].seconds));
      console.log(
        `(b') ${against}, one core: ${fmt(med(olds))} s (${fmt(best(olds))} s), ratio (b')/(a) ${
          median(olds.map((o, i) => o.seconds / as[i].seconds)).toFixed(2)
        }, peak RSS ${peak(olds).toFixed(0)} MB, CPU ${cpu(olds)} s; (b)/(b') ${
          r.toFixed(2)
        } median (CPU ${median(bs.map((b, i) => b.cpuSeconds / olds[i].cpuSeconds)).toFixed(2)}); ${
          sameOutput ? "same output" : "OUTPUT DIFFERS"
        }`,
      );
    }
    console.log(
      `peak RSS of simulate: ${peak(smalls).toFixed(0)} MB for ${
        SMALL.toLocaleString("en-US")
      } lines, ${peak(bs).toFixed(0)} MB for ${lines.toLocaleString("en-US")} lines (ratio ${
        (peak(bs) / peak(smalls)).toFixed(2)
      }, target flat)`,
    );
    console.log(
      `peak RSS with --notifications: ${peak(nSmall).toFixed(0)} MB for ${
        SMALL.toLocaleString("en-US")
      } lines, ${peak(nBig).toFixed(0)} MB for ${lines.toLocaleString("en-US")} lines (ratio ${
        (peak(nBig) / peak(nSmall)).toFixed(2)
      }, target about 1); time ${fmt(med(nBig))} s`,
    );
    console.log(
      `with --plot: ${fmt(plotted.seconds)} s, peak RSS ${plotted.peakRssMb.toFixed(0)} MB, SVG ${
        (plotSize / 1024).toFixed(0)
      } KB`,
    );
    const verdict = (ok: boolean) => (ok ? "met" : "MISSED");
    const flat = (a: number, b: number) => b / a <= 1.2; // "flat": at most 20% more for 5x the log
    console.log(
      `result: one-core time ratio ${ratio.toFixed(2)} (target <= 0.6): ${
        verdict(ratio <= 0.6)
      }; peak RSS ${peak(bs).toFixed(0)} MB (target <= 80 MB on 2M lines): ${
        verdict(peak(bs) <= 80)
      }`,
    );
    console.log(
      `result: peak RSS ${SMALL / 1e6}M -> ${lines / 1e6}M lines ${peak(smalls).toFixed(0)} -> ${
        peak(bs).toFixed(0)
      } MB (target flat, <= 1.2x): ${verdict(flat(peak(smalls), peak(bs)))}; with --notifications ${
        peak(nSmall).toFixed(0)
      } -> ${peak(nBig).toFixed(0)} MB: ${verdict(flat(peak(nSmall), peak(nBig)))}`,
    );
  } finally {
    for (const cleanup of cleanups) await cleanup();
    if (!values.keep) await Deno.remove(dir, { recursive: true });
    else console.error(`kept ${dir}`);
  }
}
