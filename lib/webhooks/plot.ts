/**
 * The picture of `breaker simulate --plot`: one panel per endpoint with its
 * windowed error rate over time, the two thresholds, the periods spent in
 * the sustained band, the periods suspended, and a marker on each
 * suspension. A self-contained SVG (no script, no fonts, no network), or
 * the same inside a minimal HTML page.
 *
 * @module
 */

import type { BreakerConfig } from "./circuit_breaker.ts";
import { formatDuration } from "../core/durations.ts";
import { HAS_RATE, IN_BAND } from "./rate_series.ts";
import { iso, type SimulationResult, type SuspendedEvent } from "./simulate.ts";

/** Options of {@linkcode renderPlot}. */
export interface PlotOptions {
  /** At most this many endpoint panels (those with suspensions first, then by peak rate). Default 20. */
  maxPanels?: number;
  /** `svg` (default) or `html` (the SVG in a page). */
  kind?: "svg" | "html";
}

const WIDTH = 1000;
const LEFT = 58;
const RIGHT = 128;
const PANEL_H = 120;
const PANEL_GAP = 62;
const HEADER_H = 118;

const C_RATE = "#1f6fd1";
const C_ENVELOPE = "#a9c8f0";
const C_IMMEDIATE = "#d62728";
const C_FLOOR = "#e08a00";
const C_BAND = "#ffcc66";
const C_SUSPENDED = "#9a9a9a";

const DASHED = `stroke-width="1.5" stroke-dasharray="5,3"`;
const SWATCH = `x1="0" y1="0" x2="20" y2="0"`;
const BOX = `x="0" y="-6" width="20" height="12"`;
/** The legend's entries: the sample drawn, its label, the room it takes. */
const LEGEND: [string, string, number][] = [
  [`<line ${SWATCH} stroke="${C_RATE}" stroke-width="2"/>`, "error rate in the window", 175],
  [`<line ${SWATCH} stroke="${C_IMMEDIATE}" ${DASHED}/>`, "suspend-at-once threshold", 190],
  [`<line ${SWATCH} stroke="${C_FLOOR}" ${DASHED}/>`, "band floor", 100],
  [`<rect ${BOX} fill="${C_BAND}" fill-opacity="0.45"/>`, "in the band", 105],
  [`<rect ${BOX} fill="url(#hatch)"/>`, "suspended", 100],
  [`<path d="M4,-6 L16,-6 L10,4 Z" fill="${C_IMMEDIATE}"/>`, "suspension", 100],
];

function esc(s: string): string {
  return s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(
    /"/g,
    "&quot;",
  ).replace(/'/g, "&apos;");
}

const pct = (x: number) => `${Math.round(x * 1000) / 10}%`;

const S = 1000, M = 60 * S, H = 60 * M, D = 24 * H;

/** A rounded span for people: `3h10m`, `45m`, `12s`. */
function humanSpan(ms: number): string {
  if (ms < M) return `${Math.round(ms / S)}s`;
  const m = Math.round(ms / M);
  if (m < 60) return `${m}m`;
  const h = Math.floor(m / 60);
  return m % 60 ? `${h}h${m % 60}m` : `${h}h`;
}

const TICK_STEPS = [
  ...[1, 5, 15].map((n) => n * S),
  ...[1, 5, 15, 30].map((n) => n * M),
  ...[1, 2, 3, 6, 12].map((n) => n * H),
  ...[1, 2, 7, 14, 30, 91, 365].map((n) => n * D),
];

function ticks(t0: number, t1: number): { at: number; label: string }[] {
  const span = t1 - t0;
  const step = TICK_STEPS.find((s) => span / s <= 8) ?? TICK_STEPS[TICK_STEPS.length - 1];
  const out: { at: number; label: string }[] = [];
  let prevDay = "";
  for (let t = Math.ceil(t0 / step) * step; t <= t1; t += step) {
    const s = iso(t);
    const day = s.slice(5, 10);
    let label = step >= D ? s.slice(0, 10) : s.slice(11, step < M ? 19 : 16); // date, or time
    if (step < D && day !== prevDay) label = `${day} ${label}`;
    prevDay = day;
    out.push({ at: t, label });
  }
  return out;
}

/** The runs of consecutive buckets that have `flag` set. */
function runsOf<B extends { flags: number }>(buckets: B[], flag: number): B[][] {
  const runs: B[][] = [];
  let cur: B[] = [];
  for (const b of buckets) {
    if (b.flags & flag) cur.push(b);
    else if (cur.length) {
      runs.push(cur);
      cur = [];
    }
  }
  if (cur.length) runs.push(cur);
  return runs;
}

/**
 * Renders the plot of a simulation (its first policy).
 *
 * @example
 * ```ts
 * import { DEFAULT_BREAKER_CONFIG } from "./circuit_breaker.ts";
 * import { Simulation } from "./simulate.ts";
 * const result = new Simulation({ policies: [DEFAULT_BREAKER_CONFIG] }).finish();
 * const svg = renderPlot(result, DEFAULT_BREAKER_CONFIG); // the caller writes it to a file
 * ```
 */
export function renderPlot(
  result: SimulationResult,
  cfg: BreakerConfig,
  options: PlotOptions = {},
): string {
  const maxPanels = options.maxPanels ?? 20;
  const byWebhook = new Map<string, SuspendedEvent[]>();
  for (const e of result.policies[0].events) {
    if (e.type !== "suspended") continue;
    let l = byWebhook.get(e.webhookId);
    if (!l) byWebhook.set(e.webhookId, l = []);
    l.push(e);
  }
  const chosen = [...result.endpoints].sort((a, b) =>
    b.policies[0].suspensions - a.policies[0].suspensions ||
    b.policies[0].peakRate - a.policies[0].peakRate
  ).slice(0, maxPanels);
  let [t0, t1] = result.timeRange ?? [0, 3_600_000];
  if (t1 - t0 < 60_000) t1 = t0 + 60_000;
  const span = t1 - t0;
  t0 -= span * 0.01;
  t1 += span * 0.01;
  const plotW = WIDTH - LEFT - RIGHT;
  const x = (t: number) => LEFT + ((t - t0) / (t1 - t0)) * plotW;
  const f = (n: number) => n.toFixed(1);
  const totalSusp = result.policies[0].suspensions;
  const height = HEADER_H + Math.max(1, chosen.length) * (PANEL_H + PANEL_GAP) + 30;

  const o: string[] = [];
  o.push(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${height}" viewBox="0 0 ${WIDTH} ${height}" font-family="Helvetica, Arial, sans-serif" font-size="12">`,
    `<title>Circuit breaker replay: ${result.webhooks} webhook(s), ${totalSusp} suspension(s)</title>`,
    `<rect width="${WIDTH}" height="${height}" fill="#ffffff"/>`,
    `<defs><pattern id="hatch" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)"><rect width="6" height="6" fill="${C_SUSPENDED}" fill-opacity="0.18"/><line x1="0" y1="0" x2="0" y2="6" stroke="${C_SUSPENDED}" stroke-width="2" stroke-opacity="0.6"/></pattern></defs>`,
    `<text x="${LEFT}" y="26" font-size="18" font-weight="bold">Circuit breaker replay: ${
      totalSusp === 0 ? "no suspension" : `${totalSusp} suspension${totalSusp === 1 ? "" : "s"}`
    } across ${result.webhooks} webhook${result.webhooks === 1 ? "" : "s"}</text>`,
    `<text x="${LEFT}" y="46" fill="#444">Suspend at once when more than ${
      pct(cfg.immediateAbove)
    } of the attempts in the last ${formatDuration(cfg.windowMs)} failed; suspend when at least ${
      pct(cfg.sustainedFrom)
    } failed for ${formatDuration(cfg.sustainedForMs)}${
      cfg.minAttempts > 1 ? `; only with ${cfg.minAttempts}+ attempts in the window` : ""
    }. Times in UTC.</text>`,
  );
  let lx = LEFT;
  for (const [svg, label, w] of LEGEND) {
    o.push(`<g transform="translate(${lx},72)">${svg}<text x="26" y="4">${esc(label)}</text></g>`);
    lx += w;
  }
  const shown = chosen.length < result.endpoints.length
    ? `Showing ${chosen.length} of ${result.endpoints.length} webhooks: those suspended first, then the highest peak error rate.`
    : "";
  if (shown) o.push(`<text x="${LEFT}" y="98" fill="#444">${esc(shown)}</text>`);
  if (chosen.length === 0) {
    o.push(`<text x="${LEFT}" y="${HEADER_H + 40}">The log holds no attempt.</text>`);
  }

  chosen.forEach((ep, idx) => {
    const top = HEADER_H + idx * (PANEL_H + PANEL_GAP) + 24;
    const y = (r: number) => top + PANEL_H - r * PANEL_H;
    const track = ep.policies[0];
    const susp = byWebhook.get(ep.webhookId) ?? [];
    const hline = (r: number, attrs: string) =>
      `<line x1="${LEFT}" x2="${LEFT + plotW}" y1="${f(y(r))}" y2="${f(y(r))}" ${attrs}/>`;
    const peak = track.peakRate >= 0 ? `peak ${pct(track.peakRate)}` : "no evaluation";
    o.push(
      `<g class="endpoint" data-webhook-id="${esc(ep.webhookId)}">`,
      `<clipPath id="clip${idx}"><rect x="${LEFT}" y="${top - 1}" width="${plotW}" height="${
        PANEL_H + 2
      }"/></clipPath>`,
      `<text x="${LEFT}" y="${top - 8}"><tspan font-weight="bold">${esc(ep.webhookId)}</tspan>` +
        `<tspan fill="#444" dx="6">— ${track.suspensions} suspension${
          track.suspensions === 1 ? "" : "s"
        }, ${peak}${
          track.longestBandMs > 0 ? `, longest in band ${humanSpan(track.longestBandMs)}` : ""
        }, ${ep.attempts} attempt${ep.attempts === 1 ? "" : "s"}${
          track.suppressed ? `, ${track.suppressed} suppressed` : ""
        }</tspan></text>`,
      `<rect x="${LEFT}" y="${top}" width="${plotW}" height="${PANEL_H}" fill="#fbfbfb" stroke="#cccccc"/>`,
      `<g clip-path="url(#clip${idx})">`,
    );
    // band periods
    const buckets = ep.series?.buckets() ?? [];
    for (const r of runsOf(buckets, IN_BAND)) {
      const xa = x(r[0].start);
      const xb = x(r[r.length - 1].end);
      o.push(
        `<rect class="band" x="${f(xa)}" y="${top}" width="${
          f(Math.max(1, xb - xa))
        }" height="${PANEL_H}" fill="${C_BAND}" fill-opacity="0.45"/>`,
      );
    }
    // suspended periods
    for (const [a, b] of track.suspendedPeriods) {
      const xa = x(a);
      const xb = x(b ?? t1);
      o.push(
        `<rect class="suspended-period" x="${f(xa)}" y="${top}" width="${
          f(Math.max(1, xb - xa))
        }" height="${PANEL_H}" fill="url(#hatch)"><title>${
          esc(`suspended from ${iso(a)} ${b === null ? "to the end of the log" : `to ${iso(b)}`}`)
        }</title></rect>`,
      );
    }
    // grid
    for (const g of [0.25, 0.5, 0.75, 1]) o.push(hline(g, `stroke="#e6e6e6"`));
    // rate: min-max envelope and the max line, broken where there was no evaluation
    for (const r of runsOf(buckets, HAS_RATE)) {
      const mid = (b: (typeof buckets)[number]) =>
        x(Math.min(b.end, t1, ep.lastTime) / 2 + Math.max(b.start, ep.firstTime) / 2);
      if (r.some((b) => b.max - b.min > 1e-9)) {
        const top_ = r.map((b) => `${f(mid(b))},${f(y(b.max))}`);
        const bottom = r.slice().reverse().map((b) => `${f(mid(b))},${f(y(b.min))}`);
        o.push(
          `<polygon points="${
            [...top_, ...bottom].join(" ")
          }" fill="${C_ENVELOPE}" fill-opacity="0.6" stroke="none"/>`,
        );
      }
      if (r.length === 1) {
        o.push(
          `<circle cx="${f(mid(r[0]))}" cy="${f(y(r[0].max))}" r="2.5" fill="${C_RATE}"/>`,
        );
      } else {
        o.push(
          `<polyline points="${
            r.map((b) => `${f(mid(b))},${f(y(b.max))}`).join(" ")
          }" fill="none" stroke="${C_RATE}" stroke-width="1.8" stroke-linejoin="round"/>`,
        );
      }
    }
    // the thresholds, after the clipped part
    const floorLabelY = Math.abs(y(cfg.sustainedFrom) - y(cfg.immediateAbove)) < 14
      ? y(cfg.sustainedFrom) + 14
      : y(cfg.sustainedFrom) + 4;
    o.push(
      `</g>`,
      hline(cfg.immediateAbove, `stroke="${C_IMMEDIATE}" ${DASHED} class="threshold-immediate"`),
      `<text x="${LEFT + plotW + 6}" y="${f(y(cfg.immediateAbove) + 4)}" fill="${C_IMMEDIATE}">${
        pct(cfg.immediateAbove)
      } at once</text>`,
      hline(cfg.sustainedFrom, `stroke="${C_FLOOR}" ${DASHED} class="threshold-band"`),
      `<text x="${LEFT + plotW + 6}" y="${f(floorLabelY)}" fill="${C_FLOOR}">${
        pct(cfg.sustainedFrom)
      } for ${formatDuration(cfg.sustainedForMs)}</text>`,
    );
    // y axis
    for (const g of [0, 0.5, 1]) {
      o.push(
        `<text x="${LEFT - 6}" y="${f(y(g) + 4)}" text-anchor="end" fill="#666">${g * 100}%</text>`,
      );
    }
    // x axis
    for (const t of ticks(t0, t1)) {
      const tx = x(t.at);
      o.push(
        `<line x1="${f(tx)}" x2="${f(tx)}" y1="${top + PANEL_H}" y2="${
          top + PANEL_H + 4
        }" stroke="#888"/>`,
        `<text x="${f(tx)}" y="${top + PANEL_H + 16}" text-anchor="middle" fill="#666">${
          esc(t.label)
        }</text>`,
      );
    }
    // suspensions
    const labelled = susp.length <= 8;
    for (const e of susp) {
      const sx = x(e.time);
      const text = `${ep.webhookId} suspended (${e.reason}) at ${
        iso(e.time)
      }: ${e.errors} of ${e.attempts} attempts in the window failed (${pct(e.errorRate)})${
        e.bandSince !== undefined ? `, in the band since ${iso(e.bandSince)}` : ""
      }`;
      o.push(
        `<g class="suspension" data-webhook-id="${esc(ep.webhookId)}" data-time="${
          iso(e.time)
        }" data-reason="${e.reason}"><title>${esc(text)}</title>` +
          `<line x1="${f(sx)}" x2="${f(sx)}" y1="${top}" y2="${
            top + PANEL_H
          }" stroke="${C_IMMEDIATE}" stroke-width="1.5"/>` +
          `<path d="M${f(sx - 6)},${top - 1} L${f(sx + 6)},${top - 1} L${f(sx)},${
            top + 9
          } Z" fill="${C_IMMEDIATE}"/>` +
          (labelled
            ? `<text x="${f(sx + 4)}" y="${top + 22}" fill="${C_IMMEDIATE}" font-weight="bold">${
              e.reason === "immediate"
                ? "suspended: above " + pct(cfg.immediateAbove)
                : `suspended: ${formatDuration(cfg.sustainedForMs)} in band`
            }</text>`
            : "") +
          `</g>`,
      );
    }
    o.push(`</g>`);
  });
  o.push(`</svg>`);
  const svg = o.join("\n") + "\n";
  if (options.kind !== "html") return svg;
  return `<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><title>Circuit breaker replay</title></head>\n<body style="margin:0">\n${svg}</body></html>\n`;
}
