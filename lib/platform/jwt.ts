/**
 * The platform's request authentication: an RS256 JWT per request whose
 * claims bind it to the path, query and body (`platform-api.md`). Signed by
 * the project's one RSA signer (`lib/core/rsa.ts`, WebCrypto).
 *
 * @module
 */

import { toBase64Url, toHex } from "../core/mod.ts";
import { RsaSigner } from "../core/rsa.ts";

const enc = new TextEncoder();

/**
 * Hex SHA-256 of bytes or text (the `bodyHash` claim).
 *
 * @example
 * ```ts
 * await sha256Hex(""); // "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
 * ```
 */
export async function sha256Hex(data: Uint8Array | string): Promise<string> {
  const bytes = typeof data === "string" ? enc.encode(data) : data;
  return toHex(new Uint8Array(await crypto.subtle.digest("SHA-256", bytes as BufferSource)));
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
const TOKEN_LIFETIME_SECONDS = 29;

/**
 * Signs the request token for one request, with the shared signer (or, given
 * a bare `CryptoKey`, with WebCrypto).
 *
 * @example
 * ```ts
 * declare const key: CryptoKey, apiKey: string;
 * const nonce = crypto.randomUUID();
 * const jwt = await signRequestToken(key, { apiKey, uri: "/v1/webhooks?pageSize=10", body: "", nonce, nowMs: Date.now() });
 * ```
 */
export async function signRequestToken(
  privateKey: RsaSigner | CryptoKey,
  input: { apiKey: string; uri: string; body: Uint8Array | string; nonce: string; nowMs: number },
): Promise<string> {
  if (privateKey instanceof RsaSigner && privateKey.alg !== "RS256") {
    throw new TypeError(`request tokens are RS256; this signer makes ${privateKey.alg}`);
  }
  const iat = Math.floor(input.nowMs / 1000);
  const claims: RequestClaims = {
    uri: input.uri,
    nonce: input.nonce,
    iat,
    exp: iat + TOKEN_LIFETIME_SECONDS,
    sub: input.apiKey,
    bodyHash: await sha256Hex(input.body),
  };
  const head = toBase64Url(JSON.stringify({ alg: "RS256", typ: "JWT" }));
  const payload = toBase64Url(JSON.stringify(claims));
  const data = enc.encode(`${head}.${payload}`);
  const sig = privateKey instanceof RsaSigner ? await privateKey.sign(data) : new Uint8Array(
    await crypto.subtle.sign({ name: "RSASSA-PKCS1-v1_5" }, privateKey, data as BufferSource),
  );
  return `${head}.${payload}.${toBase64Url(sig)}`;
}
