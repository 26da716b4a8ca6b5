/**
 * The one encoding helper: base64, base64url and hex, through the runtime's
 * own `Uint8Array.prototype.toBase64` / `Uint8Array.fromBase64` / `toHex` /
 * `fromHex` (Deno 2.9, the runtime every install runs on). Text is encoded as
 * UTF-8.
 *
 * @module
 */

type Bytes = Uint8Array<ArrayBuffer>;
type NativeBytes = {
  toBase64(o?: { alphabet?: "base64" | "base64url"; omitPadding?: boolean }): string;
  toHex(): string;
};
const native = Uint8Array as unknown as {
  fromBase64(s: string, o?: { alphabet?: "base64" | "base64url" }): Bytes;
  fromHex(s: string): Bytes;
};

const enc = new TextEncoder();

function bytesOf(input: Uint8Array | string): NativeBytes {
  return (typeof input === "string" ? enc.encode(input) : input) as unknown as NativeBytes;
}

/**
 * Standard base64 with padding.
 *
 * @example
 * ```ts
 * toBase64("hi"); // "aGk="
 * ```
 */
export function toBase64(input: Uint8Array | string): string {
  return bytesOf(input).toBase64();
}

/**
 * base64url without padding (JWT, JWS, cursors).
 *
 * @example
 * ```ts
 * toBase64Url(new Uint8Array([250, 251, 252])); // "-vv8"
 * ```
 */
export function toBase64Url(input: Uint8Array | string): string {
  return bytesOf(input).toBase64({ alphabet: "base64url", omitPadding: true });
}

/**
 * Decodes base64url (padding optional). Throws `SyntaxError` on any other
 * character, so a caller can answer "malformed" instead of guessing.
 *
 * @example
 * ```ts
 * fromBase64Url("-vv8"); // Uint8Array [250, 251, 252]
 * ```
 */
export function fromBase64Url(text: string): Uint8Array<ArrayBuffer> {
  if (!/^[A-Za-z0-9_-]*={0,2}$/.test(text)) throw new SyntaxError("not base64url");
  const bare = text.replace(/=+$/, "");
  if (bare.length % 4 === 1) throw new SyntaxError("not base64url");
  return native.fromBase64(bare, { alphabet: "base64url" });
}

/**
 * Decodes standard base64 (padding required by the runtime's decoder).
 * Throws `SyntaxError` on malformed input.
 *
 * @example
 * ```ts
 * fromBase64("aGk="); // Uint8Array [104, 105]
 * ```
 */
export function fromBase64(text: string): Uint8Array<ArrayBuffer> {
  return native.fromBase64(text);
}

/**
 * Lower-case hex without `0x`.
 *
 * @example
 * ```ts
 * toHex(new Uint8Array([1, 255])); // "01ff"
 * ```
 */
export function toHex(input: Uint8Array | string): string {
  return bytesOf(input).toHex();
}

/**
 * Decodes hex without `0x` (even length). Throws `SyntaxError` when malformed.
 *
 * @example
 * ```ts
 * fromHex("01ff"); // Uint8Array [1, 255]
 * ```
 */
export function fromHex(text: string): Uint8Array<ArrayBuffer> {
  if (text.length % 2 !== 0 || !/^[0-9a-fA-F]*$/.test(text)) throw new SyntaxError("not hex");
  return native.fromHex(text);
}

/**
 * The bytes of `parts`, one after another, in one new array.
 *
 * @example
 * ```ts
 * concatBytes([new Uint8Array([1]), new Uint8Array([2, 3])]); // Uint8Array [1, 2, 3]
 * ```
 */
export function concatBytes(parts: readonly Uint8Array[]): Uint8Array {
  const all = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let o = 0;
  for (const p of parts) {
    all.set(p, o);
    o += p.length;
  }
  return all;
}
