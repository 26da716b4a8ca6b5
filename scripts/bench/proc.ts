/**
 * What the benchmarks read of a process from /proc (Linux): its CPU time so
 * far (whole process, or all its threads in µs) and its resident memory, now
 * or sampled for a peak. NaN where there is no /proc or the process is gone.
 *
 * @module
 */

/** CPU time (user + system, all threads) a process has used so far, in ms. */
export function cpuMs(pid: number | "self"): number {
  try {
    const stat = Deno.readTextFileSync(`/proc/${pid}/stat`);
    const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return ((Number(f[11]) + Number(f[12])) * 1000) / 100; // clock ticks of 1/100 s
  } catch {
    return NaN;
  }
}

/**
 * CPU time (user + system) of a process so far, in µs, summed over its threads
 * as /proc/PID/task lists them now (a thread that has ended no longer counts).
 */
export function threadsCpuUs(pid: number): number {
  let ticks = 0;
  try {
    for (const t of Deno.readDirSync(`/proc/${pid}/task`)) {
      try {
        const stat = Deno.readTextFileSync(`/proc/${pid}/task/${t.name}/stat`);
        const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
        ticks += Number(f[11]) + Number(f[12]);
      } catch { /* thread gone */ }
    }
  } catch {
    return NaN;
  }
  return ticks * 10_000; // USER_HZ = 100 on Linux
}

/**
 * CPU time (user + system) so far of a process and its descendants (as
 * /proc/PID/task/TID/children lists them now), in ms: nginx's master with its
 * worker, the bridge with its child command.
 */
export function treeCpuMs(pid: number): number {
  let ms = cpuMs(pid);
  try {
    for (const t of Deno.readDirSync(`/proc/${pid}/task`)) {
      try {
        const kids = Deno.readTextFileSync(`/proc/${pid}/task/${t.name}/children`).trim();
        for (const k of kids ? kids.split(" ") : []) ms += treeCpuMs(Number(k));
      } catch { /* thread gone */ }
    }
  } catch { /* process gone */ }
  return ms;
}

/** A process's resident memory, MB: total, anonymous (its own) and file-backed (mapped code). */
export interface Rss {
  total: number;
  anon: number;
  file: number;
}

/** A process's resident memory now (throws when the process is gone). */
export function rssOf(pid: number): Rss {
  const status = Deno.readTextFileSync(`/proc/${pid}/status`);
  const kb = (key: string) => Number(status.match(new RegExp(`${key}:\\s+(\\d+)`))?.[1] ?? 0);
  return { total: kb("VmRSS") / 1024, anon: kb("RssAnon") / 1024, file: kb("RssFile") / 1024 };
}

/** Samples a process's RSS every 100 ms until stopped; `stop()` returns the peak total, MB. */
export function rssSampler(pid: number): { stop(): number; peak(): Rss } {
  let peak = rssOf(pid);
  const sample = () => {
    try {
      const now = rssOf(pid);
      if (now.total > peak.total) peak = now;
    } catch { /* the process is gone: its peak is the last sample */ }
  };
  const t = setInterval(sample, 100);
  return {
    stop() {
      clearInterval(t);
      sample();
      return peak.total;
    },
    peak: () => peak,
  };
}
