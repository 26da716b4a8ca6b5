/**
 * The one encoding helper: base64, base64url and hex, through the runtime's
 * own `Uint8Array.prototype.toBase64` / `Uint8Array.fromBase64` /
 * `toHex` / `fromHex` (Deno 2.9+), with a portable fallback where a runtime
 * lacks them. Text is encoded as UTF-8.
 *
 * @module
 */

type Bytes = Uint8Array<ArrayBuffer>;
type NativeBytes = {
  toBase64(o?: { alphabet?: "base64" | "base64url"; omitPadding?: boolean }): string;
  toHex(): string;
};
type NativeStatics = {
  fromBase64?(s: string, o?: { alphabet?: "base64" | "base64url" }): Bytes;
  fromHex?(s: string): Bytes;
};

const enc = new TextEncoder();
const native = typeof (Uint8Array.prototype as Partial<NativeBytes>).toBase64 === "function";
const statics = Uint8Array as unknown as NativeStatics;

function bytesOf(input: Uint8Array | string): Uint8Array {
  return typeof input === "string" ? enc.encode(input) : input;
}

function portableBase64(bytes: Uint8Array): string {
  let s = "";
  for (let i = 0; i < bytes.length; i += 0x8000) {
    s += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  }
  return btoa(s);
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
  const bytes = bytesOf(input);
  return native ? (bytes as unknown as NativeBytes).toBase64() : portableBase64(bytes);
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
  const bytes = bytesOf(input);
  if (native) {
    return (bytes as unknown as NativeBytes).toBase64({ alphabet: "base64url", omitPadding: true });
  }
  return portableBase64(bytes).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
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
  if (statics.fromBase64) return statics.fromBase64(bare, { alphabet: "base64url" });
  const b64 = bare.replace(/-/g, "+").replace(/_/g, "/");
  const bin = atob(b64 + "=".repeat((4 - (b64.length % 4)) % 4));
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
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
  if (statics.fromBase64) return statics.fromBase64(text);
  const bin = atob(text);
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
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
  const bytes = bytesOf(input);
  if (native) return (bytes as unknown as NativeBytes).toHex();
  let s = "";
  for (const b of bytes) s += b.toString(16).padStart(2, "0");
  return s;
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
  if (statics.fromHex) return statics.fromHex(text);
  const out = new Uint8Array(text.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(text.slice(2 * i, 2 * i + 2), 16);
  return out;
}
