/**
 * The one page-cursor codec of the emulator: a cursor is the base64url text
 * (no padding) of a small JSON object naming a position, e.g. `{"after":17}`
 * or `{"s":"<snapshot>","o":20}`. Clients treat it as opaque; each listing
 * decides which fields it puts in and checks them when the cursor comes back.
 *
 * @module
 */

import { fromBase64Url, toBase64Url } from "../../core/mod.ts";
import { bad } from "./params.ts";

/** The fields of a cursor: names to whole numbers or strings. */
export type CursorFields = Readonly<Record<string, string | number>>;

/**
 * Encodes a page position as an opaque cursor.
 *
 * @example
 * ```ts
 * encodeCursor({ after: 17 }); // "eyJhZnRlciI6MTd9"
 * ```
 */
export function encodeCursor(fields: CursorFields): string {
  return toBase64Url(JSON.stringify(fields));
}

const dec = new TextDecoder("utf-8", { fatal: true });

/**
 * Decodes a cursor made by {@linkcode encodeCursor}; `undefined` when the
 * text is not one (bad base64url, not JSON, not an object). The caller checks
 * the fields it expects and answers its own 400.
 *
 * @example
 * ```ts
 * decodeCursor("eyJhZnRlciI6MTd9"); // { after: 17 }
 * decodeCursor("garbage!"); // undefined
 * ```
 */
export function decodeCursor(text: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(dec.decode(fromBase64Url(text)));
    if (typeof value !== "object" || value === null || Array.isArray(value)) return undefined;
    return value as Record<string, unknown>;
  } catch {
    return undefined;
  }
}

/**
 * The whole, non-negative number `field` of the cursor `text` that the
 * parameter `param` carries; a 400 naming `param` when the cursor is
 * malformed or lacks it.
 *
 * @example
 * ```ts
 * cursorInt("pageCursor", encodeCursor({ after: 3 }), "after"); // 3
 * ```
 */
export function cursorInt(param: string, text: string, field: string): number {
  const v = decodeCursor(text)?.[field];
  if (Number.isInteger(v) && (v as number) >= 0) return v as number;
  return bad(`${param} is not a cursor this emulator gave out; omit it to start again.`);
}
