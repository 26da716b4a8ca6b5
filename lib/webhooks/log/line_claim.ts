/**
 * Which `--jobs` partition answers for a line of a delivery log, decided
 * from its bytes alone, without decoding or parsing it: the rule that lets
 * each worker thread skip the lines of the other partitions cheaply while
 * every line is still read (and, when invalid, reported) exactly once.
 *
 * The claim of an NDJSON line: when it holds no backslash and exactly one
 * `"webhookId"` followed by a colon (spaces or tabs allowed around it), and
 * the colon by a string of plain ASCII (code points 32–126, no quote or
 * backslash), the {@linkcode webhookPartition} of that string; otherwise
 * none. In valid JSON without backslashes a quote followed by
 * `webhookId"` and a colon can only be that key, so a valid line whose
 * claim is partition p has its webhook in partition p: a reader of another
 * partition may skip it. The claim of a CSV line: when it holds no quote, the
 * partition of its webhookId cell (trimmed, plain ASCII, not empty);
 * otherwise none. A line with no claim is read by every partition (its
 * record tells whose it is) and, if invalid, reported by partition 0.
 *
 * {@linkcode lineClaim} and {@linkcode csvLineClaim} apply the rule to bytes
 * (for the rare invalid line); {@linkcode PartitionSkipper} applies the same
 * rule to a whole chunk at native string-search speed (the hot path).
 *
 * @module
 */

/** No claim (see the module doc): every partition reads the line. */
export const NO_CLAIM = -1;

/**
 * The partition (0..count-1) of a webhook: a hash of its UTF-16 code units.
 *
 * @example
 * ```ts
 * webhookPartition("wh-0001", 2); // 0 or 1, always the same
 * ```
 */
export function webhookPartition(webhookId: string, count: number): number {
  let h = 0;
  for (let i = 0; i < webhookId.length; i++) h = (Math.imul(h, 31) + webhookId.charCodeAt(i)) | 0;
  return (h >>> 0) % count;
}

const KEY = new TextEncoder().encode('"webhookId"');
const PREFIX = new TextEncoder().encode('{"webhookId":"');

/** 1 for the bytes of a plain NDJSON id (ASCII 32–126, no quote or backslash). */
const PLAIN = new Uint8Array(256);
for (let b = 32; b < 127; b++) PLAIN[b] = b === 34 || b === 92 ? 0 : 1;

/** 1 for the bytes of a plain CSV cell (ASCII 32–126, no quote; a backslash is a letter). */
const PLAIN_CSV = new Uint8Array(256);
for (let b = 32; b < 127; b++) PLAIN_CSV[b] = b === 34 ? 0 : 1;

/** 1 for what `String.prototype.trim` removes among ASCII bytes. */
const SPACE = new Uint8Array(256);
for (const b of [9, 10, 11, 12, 13, 32]) SPACE[b] = 1;

/**
 * Whether buf[p, e) starts with `"webhookId"` and then, after spaces or
 * tabs, a colon: how the key looks (the string `"webhookId"` as a value is
 * followed by something else).
 */
function isKey(buf: Uint8Array, p: number, e: number): boolean {
  if (p + KEY.length > e) return false;
  for (let i = 0; i < KEY.length; i++) if (buf[p + i] !== KEY[i]) return false;
  p += KEY.length;
  while (p < e && (buf[p] === 32 || buf[p] === 9)) p++;
  return p < e && buf[p] === 58;
}

/** The partition of the plain id after the key that ends at `p` in buf[.., e), or NO_CLAIM. */
function idAfterKey(buf: Uint8Array, p: number, e: number, count: number): number {
  while (p < e && (buf[p] === 32 || buf[p] === 9)) p++;
  if (p >= e || buf[p] !== 58 /* : */) return NO_CLAIM;
  p++;
  while (p < e && (buf[p] === 32 || buf[p] === 9)) p++;
  if (p >= e || buf[p] !== 34) return NO_CLAIM;
  const vs = ++p;
  let h = 0;
  while (p < e && PLAIN[buf[p]] === 1) h = (Math.imul(h, 31) + buf[p++]) | 0;
  if (p >= e || buf[p] !== 34 || p === vs) return NO_CLAIM;
  return (h >>> 0) % count;
}

/**
 * The claim of the NDJSON line buf[s, e) (without its newline) among
 * `count` partitions, or {@linkcode NO_CLAIM}: see the module doc.
 *
 * @example
 * ```ts
 * const b = new TextEncoder().encode('{"sentTime":1,"webhookId":"w1","responseCode":200}');
 * lineClaim(b, 0, b.length, 2) === webhookPartition("w1", 2); // true
 * ```
 */
export function lineClaim(buf: Uint8Array, s: number, e: number, count: number): number {
  let key = -1;
  for (let p = s; p < e; p++) {
    const b = buf[p];
    if (b === 92) return NO_CLAIM;
    if (b === 34 && isKey(buf, p, e)) {
      if (key !== -1) return NO_CLAIM; // named twice
      key = p;
    }
  }
  return key === -1 ? NO_CLAIM : idAfterKey(buf, key + KEY.length, e, count);
}

/**
 * The claim of the CSV line buf[s, e) (without its newline) whose webhookId
 * is in cell `column` (0-based), or {@linkcode NO_CLAIM}: see the module doc.
 *
 * @example
 * ```ts
 * const b = new TextEncoder().encode("1767225600000, w1 ,200");
 * csvLineClaim(b, 0, b.length, 1, 3) === webhookPartition("w1", 3); // true
 * ```
 */
export function csvLineClaim(
  buf: Uint8Array,
  s: number,
  e: number,
  column: number,
  count: number,
): number {
  for (let p = s; p < e; p++) if (buf[p] === 34) return NO_CLAIM;
  let p = s;
  for (let i = 0; i < column; i++) {
    while (p < e && buf[p] !== 44) p++;
    if (p >= e) return NO_CLAIM;
    p++;
  }
  let q = p;
  while (q < e && buf[q] !== 44) q++;
  return cellClaim(buf, p, q, count);
}

function cellClaim(buf: Uint8Array, p: number, q: number, count: number): number {
  while (p < q && SPACE[buf[p]] === 1) p++;
  while (q > p && SPACE[buf[q - 1]] === 1) q--;
  if (p === q) return NO_CLAIM;
  let h = 0;
  for (; p < q; p++) {
    const b = buf[p];
    if (PLAIN_CSV[b] === 0) return NO_CLAIM;
    h = (Math.imul(h, 31) + b) | 0;
  }
  return (h >>> 0) % count;
}

const ascii = new TextDecoder();

/**
 * The skipping side of the claim rule, for one reader of one partition:
 * given a chunk, tells for each line whether another partition claims it,
 * using `String.prototype.indexOf` (native, vectorised) on the chunk decoded
 * once, instead of a loop over its bytes. Works on chunks without multi-byte
 * characters (a chunk with some is read line by line, as without partitions).
 *
 * @example
 * ```ts
 * const skipper = new PartitionSkipper(0, 2);
 * const chunk = new TextEncoder().encode('{"webhookId":"w1","sentTime":1,"responseCode":200}\n');
 * if (skipper.begin(chunk, 0, chunk.length)) skipper.foreign(0); // the "\n" index, or -1
 * ```
 */
export class PartitionSkipper {
  readonly #index: number;
  readonly #count: number;
  /** The webhookId cell of a CSV log (null: NDJSON). */
  csvColumn: number | null = null;
  #buf: Uint8Array = new Uint8Array(0);
  #text = "";
  #base = 0;
  // the next backslash (NDJSON) or quote (CSV), and the next "k", at or after a point (text index)
  #special = 0;
  #specialFrom = Infinity;
  #k = 0;
  #kFrom = Infinity;

  /** A skipper for the reader of partition `index` of `count`. */
  constructor(index: number, count: number) {
    this.#index = index;
    this.#count = count;
  }

  /** Prepares chunk[start, end) (`end` just past a "\n"); false when it holds a multi-byte character. */
  begin(chunk: Uint8Array, start: number, end: number): boolean {
    const text = ascii.decode(chunk.subarray(start, end));
    // text index = byte index only when every byte became one character (ASCII, or a lone
    // invalid byte as U+FFFD, which no rule matches); a multi-byte character decodes shorter
    if (text.length !== end - start) return false;
    this.#buf = chunk;
    this.#text = text;
    this.#base = start;
    this.#specialFrom = Infinity;
    this.#kFrom = Infinity;
    return true;
  }

  #nextSpecial(t: number): number {
    if (t < this.#specialFrom || (this.#special !== -1 && this.#special < t)) {
      this.#special = this.#text.indexOf(this.csvColumn === null ? "\\" : '"', t);
      this.#specialFrom = t;
    }
    return this.#special === -1 ? Infinity : this.#special;
  }

  #nextK(t: number): number {
    if (t < this.#kFrom || (this.#k !== -1 && this.#k < t)) {
      this.#k = this.#text.indexOf("k", t);
      this.#kFrom = t;
    }
    return this.#k === -1 ? Infinity : this.#k;
  }

  /**
   * For the line that starts at chunk index `start` (inside the chunk given
   * to {@linkcode PartitionSkipper.begin}): the chunk index of its "\n" when
   * another partition claims it (skip it), else -1 (read it).
   */
  foreign(start: number): number {
    const text = this.#text;
    const t = start - this.#base;
    if (this.csvColumn === null) {
      // the common shape, {"webhookId":"<plain id>",...: the id's partition first; a line
      // that names this partition there is read at once (its record decides whose it is)
      const buf = this.#buf;
      let p = start;
      let i = 0;
      while (i < PREFIX.length && buf[p] === PREFIX[i]) {
        p++;
        i++;
      }
      if (i === PREFIX.length) {
        const vs = p;
        let h = 0;
        while (PLAIN[buf[p]] === 1) h = (Math.imul(h, 31) + buf[p++]) | 0;
        if (buf[p] === 34 && p > vs) {
          if ((h >>> 0) % this.#count === this.#index) return -1;
          // another's, if the rest of the line has no backslash and no second key
          const after = p - this.#base;
          const nl = text.indexOf("\n", after);
          if (nl === -1 || this.#nextSpecial(after) < nl) return -1;
          // from the id's first byte: an id "webhookId" followed by a colon is a second key too
          for (let k = this.#nextK(vs - this.#base); k < nl; k = this.#nextK(k + 1)) {
            if (isKey(buf, this.#base + k - 7, this.#base + nl)) return -1; // named twice
          }
          return this.#base + nl;
        }
      }
    }
    const nl = text.indexOf("\n", t);
    if (nl === -1 || this.#nextSpecial(t) < nl) return -1;
    let claim: number;
    if (this.csvColumn === null) {
      let key = -1;
      for (let k = this.#nextK(t); k < nl; k = this.#nextK(k + 1)) {
        // the "k" of "webhookId" is its 8th byte
        if (k - 7 >= t && isKey(this.#buf, this.#base + k - 7, this.#base + nl)) {
          if (key !== -1) return -1; // named twice
          key = k - 7;
        }
      }
      if (key === -1) return -1;
      claim = idAfterKey(this.#buf, this.#base + key + 11, this.#base + nl, this.#count);
    } else {
      let p = t;
      for (let i = 0; i < this.csvColumn; i++) {
        p = text.indexOf(",", p);
        if (p === -1 || p >= nl) return -1;
        p++;
      }
      let q = text.indexOf(",", p);
      if (q === -1 || q > nl) q = nl;
      claim = cellClaim(this.#buf, this.#base + p, this.#base + q, this.#count);
    }
    return claim === NO_CLAIM || claim === this.#index ? -1 : this.#base + nl;
  }
}
