/**
 * The flags section of a `--help` text, rendered from a command's
 * {@linkcode FlagSpecs} (the same object the parser reads): placeholders,
 * defaults, environment variables, wrapped to a width.
 *
 * @module
 */

import type { FlagSpec, FlagSpecs, FlagType } from "./flags.ts";
import { formatDuration } from "../core/durations.ts";
import { wrapText } from "./text.ts";

/** The placeholder shown for a flag's value in help when it declares none. */
const PLACEHOLDERS: Record<FlagType, string> = {
  string: "VALUE",
  boolean: "",
  integer: "N",
  number: "NUMBER",
  list: "LIST",
  duration: "DURATION",
  durationRange: "DURATION|MIN-MAX",
  time: "TIME",
};

/**
 * The placeholder of a flag in help: `<ID>`, `<N>`, `<DURATION>`: always
 * upper case in angle brackets (the one style of every help text).
 *
 * @example
 * ```ts
 * placeholderOf({ type: "integer", description: "" }); // "<N>"
 * ```
 */
export function placeholderOf(spec: FlagSpec): string {
  if (spec.type === "boolean") return "";
  return `<${(spec.placeholder ?? PLACEHOLDERS[spec.type]).toUpperCase()}>`;
}

/**
 * Renders the flags section of a `--help` text, each line at most `width`
 * columns (long descriptions wrap under their column).
 *
 * @example
 * ```ts
 * renderFlags({ verbose: { type: "boolean", description: "More detail." } });
 * ```
 */
export function renderFlags(specs: FlagSpecs, width = 100): string {
  const rows = Object.entries(specs).filter(([, s]) => !s.hidden).map(([name, s]) => {
    const ph = s.type === "boolean" ? "" : ` ${placeholderOf(s)}`;
    const left = `  ${s.short ? `-${s.short}, ` : ""}--${name}${ph}`;
    const extra: string[] = [];
    if (s.choices) {
      // a long list (the platform's event types) is written so that it wraps at its commas
      const list = s.choices.join("|");
      extra.push(`one of ${list.length > 60 ? s.choices.join(", ") : list}`);
    }
    if (s.default !== undefined && s.default !== false) {
      const shown = s.type === "duration" && typeof s.default === "number"
        ? formatDuration(s.default)
        : String(s.default);
      if (!s.description.includes(`default ${shown}`)) extra.push(`default ${shown}`);
    }
    if (s.required) extra.push("required");
    if (s.env) extra.push(`env ${s.env}`);
    if (s.multiple) extra.push("repeatable");
    return [left, s.description + (extra.length ? ` (${extra.join("; ")})` : "")] as const;
  });
  const col = Math.min(32, Math.max(0, ...rows.map((r) => r[0].length)) + 2);
  const pad = " ".repeat(col);
  return rows.map(([l, r]) => {
    const first = l.length >= col ? `${l}\n${pad}${r}` : l.padEnd(col) + r;
    return first.split("\n").map((line) => wrapText(line, width, pad)).join("\n");
  })
    .join("\n");
}
