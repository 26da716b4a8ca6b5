/**
 * A streaming framer for raw JSON over a byte stream, as geth and anvil speak
 * it on IPC: values may arrive split across reads, several in one read, or
 * larger than any buffer, separated by optional whitespace (usually `\n`).
 * It tracks bracket depth outside strings, so it never parses a value twice
 * and never needs a delimiter.
 *
 * @module
 */

import { BaseError, concatBytes } from "../core/mod.ts";

/** The framer found bytes that cannot start a JSON object or array, or a value over the limit. */
export class FramingError extends BaseError {
  /** The class name. */
  override name = "FramingError";
}

const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/** Default largest value: 64 MiB (far above the largest contract deployment). */
export const DEFAULT_MAX_FRAME_BYTES = 64 * 1024 * 1024;

/**
 * Splits a byte stream into complete top-level JSON objects/arrays.
 *
 * @example
 * ```ts
 * const d = new JsonStreamDecoder();
 * d.push(new TextEncoder().encode('{"a":1}{"b"')); // [bytes of {"a":1}]
 * d.push(new TextEncoder().encode(':2}\n'));        // [bytes of {"b":2}]
 * ```
 */
export class JsonStreamDecoder {
  readonly #max: number;
  #parts: Uint8Array[] = [];
  #partsLength = 0;
  #depth = 0;
  #inString = false;
  #escape = false;

  /** Creates a decoder; `maxFrameBytes` defaults to 64 MiB. */
  constructor(options: { maxFrameBytes?: number } = {}) {
    this.#max = options.maxFrameBytes ?? DEFAULT_MAX_FRAME_BYTES;
  }

  /** True while a value has started but not ended. */
  get pending(): boolean {
    return this.#depth > 0;
  }

  /**
   * Feeds one chunk; returns the complete values it finished (as bytes).
   * Throws {@linkcode FramingError} on garbage between values or on a value
   * over the limit; the decoder is then unusable (drop the connection).
   */
  push(chunk: Uint8Array): Uint8Array[] {
    const out: Uint8Array[] = [];
    let start = this.#depth > 0 ? 0 : -1;
    let depth = this.#depth;
    let inString = this.#inString;
    let escape = this.#escape;
    const n = chunk.length;
    for (let i = 0; i < n; i++) {
      const c = chunk[i];
      if (depth === 0) {
        if (c === OPEN_BRACE || c === OPEN_BRACKET) {
          depth = 1;
          start = i;
          continue;
        }
        if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) continue;
        throw new FramingError(
          `unexpected byte 0x${c.toString(16).padStart(2, "0")} outside a JSON object or array`,
        );
      }
      if (inString) {
        if (escape) escape = false;
        else if (c === BACKSLASH) escape = true;
        else if (c === QUOTE) inString = false;
        continue;
      }
      if (c === QUOTE) inString = true;
      else if (c === OPEN_BRACE || c === OPEN_BRACKET) depth++;
      else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
        depth--;
        if (depth === 0) {
          const piece = chunk.subarray(start, i + 1);
          if (this.#partsLength + piece.length > this.#max) this.#tooLarge();
          if (this.#parts.length) {
            out.push(concatBytes([...this.#parts, piece]));
            this.#parts = [];
            this.#partsLength = 0;
          } else out.push(piece);
          start = -1;
        }
      }
    }
    if (depth > 0) {
      const rest = chunk.subarray(start === -1 ? 0 : start);
      this.#partsLength += rest.length;
      if (this.#partsLength > this.#max) this.#tooLarge();
      // copy: the caller may reuse its read buffer
      this.#parts.push(rest.slice());
    }
    this.#depth = depth;
    this.#inString = inString;
    this.#escape = escape;
    return out;
  }

  #tooLarge(): never {
    throw new FramingError(`a message is larger than ${this.#max} bytes`);
  }
}

const decoder = new TextDecoder();

/**
 * Reads `conn` to its end, handing `onFrame` the text of each JSON value (as the IPC clients of
 * a node read it). Throws what the read or the decoder throws.
 */
export async function readJsonFrames(
  conn: Deno.Conn,
  onFrame: (text: string) => void,
): Promise<void> {
  const frames = new JsonStreamDecoder();
  const buf = new Uint8Array(256 * 1024);
  for (let n; (n = await conn.read(buf)) !== null;) {
    for (const frame of frames.push(buf.subarray(0, n))) onFrame(decoder.decode(frame));
  }
}
