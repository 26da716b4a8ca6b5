/**
 * Verifies the platform's request authentication for real
 * (`platform-api.md`): `X-API-Key` must be the key of one of the API users;
 * the bearer JWT must be RS256 over that user's public key, with `sub` = the key,
 * `uri` = the request path + query exactly, `bodyHash` = SHA-256 of the
 * received bytes (for an empty body both the empty string and the two
 * characters `""` are accepted), `exp` not passed and at most 60 s after
 * `iat`, and a `nonce` never seen before.
 *
 * @module
 */

import { ApiError, ErrorCode } from "./reply.ts";
import type { NonceCache } from "./nonce_cache.ts";
import { createHash } from "node:crypto";
import { fromBase64Url } from "../../core/mod.ts";
import type { ApiUser } from "./api_user.ts";

const dec = new TextDecoder();
const enc = new TextEncoder();

/** Longest token lifetime accepted (exp − iat), seconds. */
export const MAX_TOKEN_LIFETIME_SECONDS = 60;
/** Clock skew tolerated for `iat` in the future, seconds. */
export const CLOCK_SKEW_SECONDS = 60;

/** Hex SHA-256, on the calling thread (a microsecond; WebCrypto's digest hops threads). */
function sha256Hex(bytes: Uint8Array): string {
  return createHash("sha256").update(bytes).digest("hex");
}

/** SHA-256 of the empty body, and of the two characters `""` (legacy SDK form). */
const EMPTY_HASHES = [sha256Hex(new Uint8Array()), sha256Hex(enc.encode('""'))];

/** What {@linkcode verifyRequest} needs. */
export interface AuthInput {
  /** The API user of a key, `undefined` for a key no user has. */
  userOf(apiKey: string): ApiUser | undefined;
  /** The request headers. */
  headers: Headers;
  /** Path plus query string as received (`/v1/x?a=b`). */
  uri: string;
  /** The exact body bytes received. */
  body: Uint8Array;
  /** Now, ms. */
  nowMs: number;
  /** Nonces already seen. */
  nonces: NonceCache;
}

function refuse(message: string): never {
  throw new ApiError(401, message, ErrorCode.unauthorized);
}

/**
 * Checks one request and returns its API user; throws a 401
 * {@linkcode ApiError} naming what was wrong (never echoing the key).
 *
 * @example
 * ```ts
 * import type { ApiUser } from "./api_user.ts";
 * import type { NonceCache } from "./nonce_cache.ts";
 * declare const users: ApiUser[], nonces: NonceCache, req: Request;
 * const userOf = (key: string) => users.find((u) => u.apiKey === key);
 * const body = new Uint8Array(await req.arrayBuffer());
 * const user = await verifyRequest({ userOf, headers: req.headers, uri: "/v1/vault/accounts_paged", body, nowMs: Date.now(), nonces });
 * ```
 */
export async function verifyRequest(input: AuthInput): Promise<ApiUser> {
  const key = input.headers.get("x-api-key");
  if (!key) refuse("Missing X-API-Key header.");
  const user = input.userOf(key);
  if (!user) refuse("Unknown API key.");
  const auth = input.headers.get("authorization") ?? "";
  const m = auth.match(/^Bearer\s+([A-Za-z0-9_-]+)\.([A-Za-z0-9_-]+)\.([A-Za-z0-9_-]*)$/);
  if (!m) refuse("Missing or malformed Authorization bearer token.");
  const [, h, p, s] = m;
  let header: Record<string, unknown>;
  let claims: Record<string, unknown>;
  let signature: Uint8Array;
  try {
    header = JSON.parse(dec.decode(fromBase64Url(h)));
    claims = JSON.parse(dec.decode(fromBase64Url(p)));
    signature = fromBase64Url(s);
  } catch {
    refuse("The bearer token is not a valid JWT.");
  }
  if (!header || typeof header !== "object" || header.alg !== "RS256") {
    refuse("The bearer token must be signed with RS256.");
  }
  if (!claims || typeof claims !== "object") refuse("The bearer token has no claims.");
  const ok = await user.publicKey.verify(signature, enc.encode(`${h}.${p}`));
  if (!ok) refuse("The bearer token's signature does not verify against the API user's key.");
  if (claims.sub !== user.apiKey) refuse("The token's sub claim is not the API key.");
  if (claims.uri !== input.uri) {
    refuse(`The token's uri claim does not match the request path and query (${input.uri}).`);
  }
  const iat = claims.iat, exp = claims.exp;
  if (typeof iat !== "number" || typeof exp !== "number") {
    refuse("The token needs numeric iat and exp claims.");
  }
  const now = Math.floor(input.nowMs / 1000);
  if (exp < now) refuse("The token has expired.");
  if (exp > iat + MAX_TOKEN_LIFETIME_SECONDS) {
    refuse(`The token lives too long: exp must be at most iat + ${MAX_TOKEN_LIFETIME_SECONDS}.`);
  }
  if (iat > now + CLOCK_SKEW_SECONDS) refuse("The token's iat is in the future.");
  if (typeof claims.bodyHash !== "string") refuse("The token has no bodyHash claim.");
  const bodyOk = input.body.length === 0
    ? EMPTY_HASHES.includes(claims.bodyHash)
    : claims.bodyHash === sha256Hex(input.body);
  if (!bodyOk) refuse("The token's bodyHash does not match the SHA-256 of the request body.");
  if (typeof claims.nonce !== "string" || claims.nonce === "") refuse("The token has no nonce.");
  if (!input.nonces.add(claims.nonce, exp, now)) refuse("The token's nonce was already used.");
  return user;
}
