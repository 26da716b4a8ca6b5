/**
 * What a person's terminal is shown of a string that came from outside (the
 * platform, a log file, the user's app): the one rule, used by every printer
 * function of `output.ts` and `table.ts` (tables, `key: value` objects,
 * prose on either stream). Secrets are redacted (`lib/core/redact.ts`) and
 * control characters are escaped, so that no ESC sequence, OSC title, bell or
 * newline reaches the terminal as itself: `\n`, `\r`, `\t`, `\x1b` (C0, DEL
 * and C1 controls), and the bidirectional overrides as `\u202e`. JSON output
 * is not shown through it (JSON escapes for itself).
 *
 * @module
 */

import { redact } from "../core/redact.ts";

/** C0 and C1 controls, DEL, bidirectional overrides and isolates, the line and paragraph separators. */
// deno-lint-ignore no-control-regex -- matching control characters is the point
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

const NAMED: Record<string, string> = { "\n": "\\n", "\r": "\\r", "\t": "\\t" };

/**
 * `text` with every control character escaped (newlines too).
 *
 * @example
 * ```ts
 * escapeControls("tx\x1b]0;owned\x07\nFAILED"); // "tx\\x1b]0;owned\\x07\\nFAILED"
 * ```
 */
export function escapeControls(text: string): string {
  return text.replace(CONTROL, (c) => {
    const named = NAMED[c];
    if (named) return named;
    const code = c.charCodeAt(0);
    return code <= 0xff
      ? `\\x${code.toString(16).padStart(2, "0")}`
      : `\\u${code.toString(16).padStart(4, "0")}`;
  });
}

/**
 * What a terminal is shown of `text`: secrets redacted, control characters
 * escaped (a newline too: one string is one line).
 *
 * @example
 * ```ts
 * shown("id\x1b[2J"); // "id\\x1b[2J"
 * ```
 */
export function shown(text: string): string {
  return escapeControls(redact(text));
}
