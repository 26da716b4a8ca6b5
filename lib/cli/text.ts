/**
 * Text for people: the one suggestion rule for a mistyped name
 * ({@linkcode closest}) and wrapping to a width ({@linkcode wrapText}), used
 * by usage errors and every help text.
 *
 * @module
 */

/** The edit distance of `a` and `b` (Levenshtein), a row of the table at a time. */
function distance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      row[j] = Math.min(prev[j] + 1, row[j - 1] + 1, prev[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    prev = row;
  }
  return prev[b.length];
}

/**
 * The one suggestion rule for a mistyped flag, command or verb: the closest
 * of `names` (also compared in the spelling `alt` gives, e.g. kebab-case) at
 * an edit distance of at most 2, or one that starts with what was typed.
 * `undefined` when nothing is close.
 *
 * @example
 * ```ts
 * closest("notification", ["rpc", "notifications", "webhooks"]); // "notifications"
 * ```
 */
export function closest(
  typed: string,
  names: readonly string[],
  alt: (name: string) => string = (n) => n,
): string | undefined {
  const lower = typed.toLowerCase();
  const scored = names.map((n) => {
    const d = Math.min(distance(lower, n.toLowerCase()), distance(lower, alt(n).toLowerCase()));
    return [n, d] as const;
  }).sort((a, b) => a[1] - b[1]);
  if (scored.length && scored[0][1] <= 2) return scored[0][0];
  if (lower.length >= 3) return names.find((n) => n.toLowerCase().startsWith(lower));
  return undefined;
}

/**
 * Wraps `text` to `width` columns at spaces, keeping its own line breaks;
 * continuation lines start with `indent` (and wrapped lines end with
 * `joiner`, e.g. ` \\` for a shell command). A word longer than the width
 * stays whole.
 *
 * @example
 * ```ts
 * wrapText("a b c", 3); // "a b\nc"
 * ```
 */
export function wrapText(text: string, width: number, indent = "", joiner = ""): string {
  return text.split("\n").map((line) => {
    if (line.length <= width) return line;
    const lead = /^\s*/.exec(line)![0];
    const words = line.slice(lead.length).split(" ");
    const out: string[] = [];
    let cur = lead;
    for (const w of words) {
      const room = width - joiner.length;
      if (cur.trim() !== "" && (cur + " " + w).length > room) {
        out.push(cur + joiner);
        cur = indent + w;
      } else cur = cur.trim() === "" ? cur + w : cur + " " + w;
    }
    out.push(cur);
    return out.join("\n");
  }).join("\n");
}
