/**
 * The one redactor: what the process knows to be secret never reaches a
 * person or a peer, even when the platform echoes it back in an error.
 *
 * - By value: the API key (registered by the platform client and
 *   `loadCredentials`): the whole key, or a run of {@linkcode MIN_PART} or
 *   more characters that starts or ends it (a message that quotes it cut
 *   short); the PEM text of the private key and the last
 *   {@linkcode RECENT_TOKENS} request tokens (registered as they are signed):
 *   any run holding {@linkcode MIN_PART} or more characters of one of them, so
 *   a message that quotes only the start of a token is caught too. (An API key
 *   is often a UUID, whose inner parts other ids may share: only its ends count.)
 * - By shape: a PEM block (`-----BEGIN … PRIVATE KEY-----` to its end, or to
 *   the end of the text when cut short), the value after `Bearer`, and a JWT
 *   (base64url JSON starting `eyJ`) or any part of one of at least
 *   {@linkcode MIN_PART} characters.
 *
 * What is redacted becomes {@linkcode REDACTED}. Used by the CLI's printer
 * (`lib/cli/output.ts`) for every line it shows and by the bridge for every
 * JSON-RPC error it sends (`lib/rpc/protocol.ts`).
 *
 * @module
 */

/** What a secret is replaced with. */
export const REDACTED = "[redacted]";

/** The shortest part of a known secret that is redacted (shorter runs are too common). */
export const MIN_PART = 10;

/** How many recent request tokens are remembered by value (memory stays bounded). */
export const RECENT_TOKENS = 32;

/** Each `MIN_PART`-character window of each remembered secret, counted. */
const windows = new Map<string, number>();
/** Whole secrets shorter than `MIN_PART` (matched as whole runs). */
const shortOnes = new Set<string>();
const tokens: string[] = [];
/** Secrets already remembered. */
const seen = new Set<string>();
/** API keys, matched whole or by their ends. */
const apiKeys: string[] = [];

function add(value: string, delta: 1 | -1): void {
  if (value.length < MIN_PART) {
    if (delta === 1) shortOnes.add(value);
    return;
  }
  for (let i = 0; i + MIN_PART <= value.length; i++) {
    const w = value.slice(i, i + MIN_PART);
    const n = (windows.get(w) ?? 0) + delta;
    if (n <= 0) windows.delete(w);
    else windows.set(w, n);
  }
}

/**
 * Remembers a secret (the API key, the private key's PEM text) for the life
 * of the process: it and every part of it of at least {@linkcode MIN_PART}
 * characters are redacted from then on. Empty and repeated values are ignored.
 *
 * @example
 * ```ts
 * rememberSecret("3f2a1b4c-0000-4000-8000-000000000000");
 * redact("key 3f2a1b4c-0000-4000-8000-000000000000 refused"); // "key [redacted] refused"
 * ```
 */
export function rememberSecret(value: string | undefined): void {
  if (!value || value.length < 4) return;
  if (!value.includes("-----BEGIN")) {
    if (!apiKeys.includes(value)) apiKeys.push(value);
    return;
  }
  // A PEM's body lines, not its armour ("-----BEGIN PRIVATE KEY-----" is no secret).
  const parts = value.split(/\s+/).filter((p) => p.length >= MIN_PART && !p.includes("-----"));
  for (const part of parts) {
    if (seen.has(part)) continue; // (every part is at least MIN_PART long)
    seen.add(part);
    add(part, 1);
  }
}

/**
 * Remembers one request token (a bearer JWT); only the last
 * {@linkcode RECENT_TOKENS} are kept.
 *
 * @example
 * ```ts
 * rememberToken("eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJrIn0.c2lnbmF0dXJl");
 * ```
 */
export function rememberToken(token: string): void {
  tokens.push(token);
  for (const part of token.split(".")) add(part, 1);
  if (tokens.length > RECENT_TOKENS) {
    for (const part of tokens.shift()!.split(".")) add(part, -1);
  }
}

const PEM_BLOCK =
  /-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z0-9 ]*PRIVATE KEY-----|$)/g;
const BEARER = /\b(Bearer)\s+[^\s"',;]+/gi;
const JWT_PART = /eyJ[A-Za-z0-9_-]{7,}(?:\.[A-Za-z0-9_-]*){0,2}/g;
/** Runs of the characters keys, tokens and PEM bodies are made of. */
const RUN = /[A-Za-z0-9_\-+/.]+/g;

function isKnown(run: string): boolean {
  if (shortOnes.has(run)) return true;
  for (const key of apiKeys) {
    if (key.length < MIN_PART) { // a short key (a test's) only as a whole word
      if (run === key) return true;
      continue;
    }
    if (run.includes(key)) return true;
    if (run.length >= MIN_PART && (key.startsWith(run) || key.endsWith(run))) return true;
  }
  if (run.length < MIN_PART || windows.size === 0) return false;
  for (let i = 0; i + MIN_PART <= run.length; i++) {
    if (windows.has(run.slice(i, i + MIN_PART))) return true;
  }
  return false;
}

/**
 * `text` with every secret the process knows, and everything shaped like a
 * private key or a bearer token, replaced by {@linkcode REDACTED}.
 *
 * @example
 * ```ts
 * redact("401: Bearer eyJhbGciOiJSUzI1NiIs... is expired"); // "401: Bearer [redacted] is expired"
 * ```
 */
export function redact(text: string): string {
  if (text.length === 0) return text;
  let out = text.replace(PEM_BLOCK, REDACTED).replace(BEARER, `$1 ${REDACTED}`)
    .replace(JWT_PART, REDACTED);
  if (windows.size > 0 || shortOnes.size > 0 || apiKeys.length > 0) {
    out = out.replace(RUN, (run) => {
      if (run === REDACTED.slice(1, -1)) return run;
      if (isKnown(run)) return REDACTED;
      // a dot or slash may join a secret to ordinary words ("key abc…def."): check each piece
      if (/[./]/.test(run)) {
        const pieces = run.split(/([./])/);
        if (pieces.some((p) => p.length > 0 && isKnown(p))) {
          return pieces.map((p) => (p.length > 1 && isKnown(p) ? REDACTED : p)).join("");
        }
      }
      return run;
    });
  }
  return out;
}
