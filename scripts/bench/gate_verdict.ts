/**
 * The regression gate's judgement (`gate.ts`), pure: for one figure measured
 * in pairs (REF and the working tree back to back), the cost ratio of each
 * pair oriented so that above 1 is worse whichever way the figure goes, the
 * median of those ratios, and the verdict against the threshold (10%: noise
 * is handled by pairing and the median, never by a wider threshold). And the
 * one table the gate prints.
 *
 * @module
 */

/** Which way a figure is better: more (req/s) or less (ms, MB). */
export type Better = "higher" | "lower";

/** One pair of measurements, taken back to back. */
export interface Pair {
  ref: number;
  now: number;
}

/** A figure's verdict: within the threshold, worse than it, better, or not measured. */
export type Verdict = "ok" | "WORSE" | "better" | "FAILED";

/** What the gate concludes for one figure. */
export interface Judged {
  /** Median of REF's measurements. */
  ref: number;
  /** Median of the working tree's measurements. */
  now: number;
  /** Median of the per-pair cost ratios (> 1: now is worse). */
  ratio: number;
  /** The per-pair cost ratios, in the order measured. */
  ratios: number[];
  verdict: Verdict;
}

/** A figure more than 10% worse than REF fails the gate. */
export const THRESHOLD = 1.10;

/**
 * The cost of `now` relative to `ref`, oriented so that above 1 is worse:
 * `now / ref` when lower is better, `ref / now` when higher is better.
 * NaN when either is not a positive finite number.
 */
export function costRatio(pair: Pair, better: Better): number {
  const { ref, now } = pair;
  if (!(ref > 0 && now > 0 && Number.isFinite(ref) && Number.isFinite(now))) return NaN;
  return better === "lower" ? now / ref : ref / now;
}

/** The median (the mean of the two middle values for an even count); NaN when empty. */
export function median(xs: readonly number[]): number {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

/**
 * Judges one figure from its pairs: FAILED when there is no pair or any pair
 * could not be measured (a figure that cannot be measured must not pass),
 * WORSE when the median cost ratio is above `threshold`, better when it is
 * below `1 / threshold`, ok otherwise.
 */
export function judge(pairs: readonly Pair[], better: Better, threshold = THRESHOLD): Judged {
  const ratios = pairs.map((p) => costRatio(p, better));
  const ref = median(pairs.map((p) => p.ref));
  const now = median(pairs.map((p) => p.now));
  if (ratios.length === 0 || ratios.some((r) => Number.isNaN(r))) {
    return { ref, now, ratio: NaN, ratios, verdict: "FAILED" };
  }
  const ratio = median(ratios);
  const verdict: Verdict = ratio > threshold ? "WORSE" : ratio < 1 / threshold ? "better" : "ok";
  return { ref, now, ratio, ratios, verdict };
}

/** True when every verdict lets the gate pass (no WORSE, no FAILED). */
export function passes(verdicts: readonly Verdict[]): boolean {
  return verdicts.every((v) => v === "ok" || v === "better");
}

/** One row of the gate's table. */
export interface Row {
  figure: string;
  unit: string;
  judged: Judged;
}

/** A value for the table: 3 significant digits at least, no exponent. */
export function formatValue(x: number): string {
  if (!Number.isFinite(x)) return "-";
  const a = Math.abs(x);
  return a >= 100 ? Math.round(x).toString() : a >= 10 ? x.toFixed(1) : x.toFixed(a >= 1 ? 2 : 3);
}

/**
 * The gate's table, one line per figure: figure (with its unit), REF, now,
 * cost ratio (> 1 worse), the spread of the per-pair ratios, verdict.
 */
export function formatTable(rows: readonly Row[], threshold = THRESHOLD): string {
  const head = ["figure", "REF", "now", "ratio", "pairs (min-max)", "verdict"];
  const body = rows.map((r) => {
    const j = r.judged;
    const finite = j.ratios.filter(Number.isFinite);
    return [
      `${r.figure} (${r.unit})`,
      formatValue(j.ref),
      formatValue(j.now),
      Number.isFinite(j.ratio) ? j.ratio.toFixed(3) : "-",
      finite.length
        ? `${j.ratios.length}: ${Math.min(...finite).toFixed(2)}-${Math.max(...finite).toFixed(2)}`
        : `${j.ratios.length}: -`,
      j.verdict,
    ];
  });
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((b) => b[i].length)));
  const line = (cells: string[]) =>
    cells.map((
      c,
      i,
    ) => (i === 0 || i === cells.length - 1 ? c.padEnd(widths[i]) : c.padStart(widths[i])))
      .join("  ").trimEnd();
  return [
    line(head),
    line(widths.map((w) => "-".repeat(w))),
    ...body.map(line),
    `ratio: median over pairs of now/REF for costs (ms, MB), REF/now for rates (req/s, /s); ` +
    `> ${threshold.toFixed(2)} is WORSE and fails the gate`,
  ].join("\n");
}
