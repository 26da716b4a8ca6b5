/**
 * What the benchmarks read of a process from /proc (Linux): its CPU time so
 * far. NaN where there is no /proc or the process is gone.
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
