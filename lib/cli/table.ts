/**
 * How a table's rows are laid out: the cells of a record, the column widths
 * and the line of one row. Piped (or `--wide`), every cell is whole and each
 * column is padded to its declared width, as scripts always saw it. On a
 * terminal the widths come from the cells themselves (the first rows of the
 * table, or the declared widths when no row is known yet), so room goes to
 * the cells that need it; when the row is wider than the terminal, the widest
 * columns are narrowed and their cells shortened in the middle. Times (ISO
 * 8601 cells) are never narrowed nor shortened.
 *
 * @module
 */

import { shown } from "./shown.ts";

/** A column of a table. */
export interface Column {
  /** Header text. */
  header: string;
  /** Field of the record, or a function computing the cell. */
  value: string | ((record: Record<string, unknown>) => unknown);
  /** Width the column is padded to (a longer value widens that row only), so tables stream. */
  width?: number;
}

/**
 * Shortens `text` to `width` characters by cutting its middle:
 * `6b3e4d22-…-…de791eb` keeps both ends of an id recognisable.
 *
 * @example
 * ```ts
 * shortenMiddle("6b3e4d22-1c0f-4d57-9a43-5c1a0de791eb", 16); // "6b3e4d22…de791eb"
 * ```
 */
export function shortenMiddle(text: string, width: number): string {
  const chars = [...text];
  if (chars.length <= width) return text;
  if (width <= 1) return "…".slice(0, width);
  const head = Math.ceil((width - 1) / 2);
  const tail = width - 1 - head;
  return chars.slice(0, head).join("") + "…" + (tail > 0 ? chars.slice(-tail).join("") : "");
}

/** Columns narrower than this are never shortened further. */
const MIN_COLUMN = 8;

/** A field that holds a time (epoch ms numbers there are shown as ISO 8601). */
const TIME_FIELD = /(At|Time)$/;

/** A cell that is a time as `cell()` shows one (ISO 8601). */
const ISO_TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d(:\d\d(\.\d+)?)?(Z|[+-]\d\d:?\d\d)?$/;

/**
 * Renders a cell: times (ms numbers in fields named like `*At`/`*Time`) as ISO,
 * objects as JSON; every cell as a terminal may be shown it (`shown.ts`: secrets
 * redacted, control characters escaped, so a newline cannot forge a row).
 */
export function cell(v: unknown, key: string): string {
  if (v === undefined || v === null) return "-";
  if (typeof v === "number" && TIME_FIELD.test(key) && v > 1e11) return new Date(v).toISOString();
  if (typeof v === "object") return shown(JSON.stringify(v));
  return shown(String(v));
}

/** The cells of `record` under `columns`. */
export function cells(columns: readonly Column[], record: Record<string, unknown>): string[] {
  return columns.map((c) =>
    typeof c.value === "string" ? cell(record[c.value], c.value) : cell(c.value(record), c.header)
  );
}

const length = (text: string) => [...text].length;

/** How the rows of one table are printed. */
export interface TableLayout {
  /** Each column's width (the last one: the room left for it on a terminal). */
  widths: number[];
  /** Whether cells longer than their column are shortened (a terminal, not `--wide`). */
  fit: boolean;
}

/**
 * The layout of a table: whole cells at the declared widths unless `terminalColumns` is given;
 * then widths measured from `sample` (the rows known so far; none: the declared widths), the
 * widest non-time columns narrowed first until a row fits the terminal.
 *
 * @example
 * ```ts
 * const cols = [{ header: "id", value: "id", width: 36 }, { header: "url", value: "url" }];
 * layout(cols, [["tx-1", "https://example.com/hook"]], 100).widths; // [4, 94]
 * ```
 */
export function layout(
  columns: readonly Column[],
  sample: readonly string[][],
  terminalColumns?: number,
): TableLayout {
  if (terminalColumns === undefined) {
    return { widths: columns.map((c) => c.width ?? c.header.length), fit: false };
  }
  const widths = columns.map((c, i) =>
    Math.max(
      c.header.length,
      sample.length ? Math.max(0, ...sample.map((row) => length(row[i] ?? ""))) : c.width ?? 0,
    )
  );
  const isTime = columns.map((c, i) =>
    (typeof c.value === "string" && (TIME_FIELD.test(c.value) || c.value === "time")) ||
    (sample.some((row) => ISO_TIME.test(row[i])) &&
      sample.every((row) => ISO_TIME.test(row[i]) || row[i] === "-"))
  );
  const total = () => widths.reduce((a, b) => a + b, 0) + 2 * (widths.length - 1);
  while (total() > terminalColumns) {
    let wi = -1;
    for (let i = 0; i < widths.length; i++) {
      const min = Math.max(MIN_COLUMN, columns[i].header.length);
      if (!isTime[i] && widths[i] > min && (wi === -1 || widths[i] > widths[wi])) wi = i;
    }
    if (wi === -1) break;
    widths[wi]--;
  }
  const last = widths.length - 1;
  if (!isTime[last]) {
    const used = widths.slice(0, -1).reduce((a, b) => a + b + 2, 0);
    widths[last] = Math.max(widths[last], terminalColumns - used);
  }
  return { widths, fit: true };
}

/** One row of a table laid out by `table`, with its newline. */
export function row(table: TableLayout, cells: readonly string[]): string {
  return cells.map((c, i) => {
    const shown = table.fit && !ISO_TIME.test(c) ? shortenMiddle(c, table.widths[i]) : c;
    return i === cells.length - 1 ? shown : shown.padEnd(table.widths[i]);
  }).join("  ").trimEnd() + "\n";
}
