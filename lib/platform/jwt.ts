/**
 * The platform's request authentication: an RS256 JWT per request whose
 * claims bind it to the path, query and body (`platform-api.md`).
 *
 * @module
 */

const enc = new TextEncoder();

/** base64url without padding. */
export function base64url(bytes: Uint8Array | string): string {
  const b = typeof bytes === "string" ? enc.encode(bytes) : bytes;
  let s = "";
  for (let i = 0; i < b.length; i += 0x8000) s += String.fromCharCode(...b.subarray(i, i + 0x8000));
  return btoa(s).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

/** Hex SHA-256 of bytes or text. */
export async function sha256Hex(data: Uint8Array | string): Promise<string> {
  const bytes = typeof data === "string" ? enc.encode(data) : data;
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes as BufferSource));
  return Array.from(digest, (b) => b.toString(16).padStart(2, "0")).join("");
}

/** The claims of a request token. */
export interface RequestClaims {
  /** Path plus query string, including `/v1`. */
  uri: string;
  /** A fresh UUID per request. */
  nonce: string;
  /** Issued at, seconds. */
  iat: number;
  /** Expiry, seconds (iat + 29). */
  exp: number;
  /** The API key. */
  sub: string;
  /** Hex SHA-256 of the exact body bytes (of "" without a body). */
  bodyHash: string;
}

/** Token lifetime in seconds: the docs ask for exp < iat + 30. */
export const TOKEN_LIFETIME_SECONDS = 29;

/**
 * Signs the request token for one request.
 *
 * @example
 * ```ts
 * const jwt = await signRequestToken(key, { apiKey, uri: "/v1/webhooks?pageSize=10", body: "", nonce, nowMs: Date.now() });
 * ```
 */
export async function signRequestToken(
  privateKey: CryptoKey,
  input: { apiKey: string; uri: string; body: Uint8Array | string; nonce: string; nowMs: number },
): Promise<string> {
  const iat = Math.floor(input.nowMs / 1000);
  const claims: RequestClaims = {
    uri: input.uri,
    nonce: input.nonce,
    iat,
    exp: iat + TOKEN_LIFETIME_SECONDS,
    sub: input.apiKey,
    bodyHash: await sha256Hex(input.body),
  };
  const head = base64url(JSON.stringify({ alg: "RS256", typ: "JWT" }));
  const payload = base64url(JSON.stringify(claims));
  const data = enc.encode(`${head}.${payload}`);
  const sig = new Uint8Array(
    await crypto.subtle.sign({ name: "RSASSA-PKCS1-v1_5" }, privateKey, data as BufferSource),
  );
  return `${head}.${payload}.${base64url(sig)}`;
}
