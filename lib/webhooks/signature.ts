/**
 * The one verifier of webhook signatures, for receivers (`mod.ts`), the CLI
 * (`service webhooks verify|listen`) and the emulator's tests alike.
 *
 * A delivery's `Service-Webhook-Signature` header is a detached JWS (RFC 7515
 * appendix F): `<b64url protected header>..<b64url signature>`, alg RS512,
 * with the signing key's `kid` in the protected header. The signing input is
 * `BASE64URL(header) "." BASE64URL(raw body)`.
 *
 * Pure: no I/O here. The keys come as a JWKS document, or from a
 * {@linkcode JwksResolver} (e.g. `RemoteJwks` in `remote_jwks.ts`, which
 * fetches a JWKS URL once and again only for an unknown `kid`).
 *
 * @module
 */

import { BaseError, fromBase64Url, RsaVerifier, toBase64Url } from "../core/mod.ts";

/** The signature header's name. */
export const SIGNATURE_HEADER = "Service-Webhook-Signature";

/** A public key in a JWKS document. */
export interface PublicJwk extends JsonWebKey {
  /** Key id, as in each signature's protected header. */
  kid: string;
  /** RS512 for webhook keys. */
  alg?: string;
  /** "sig" for webhook keys. */
  use?: string;
}

/** A JWKS document (`/.well-known/jwks.json`). */
export interface Jwks {
  /** The public keys. */
  keys: PublicJwk[];
}

/**
 * Where keys come from when they are not a fixed document: `keyFor` returns
 * the key with that `kid` (fetching again if it must), or `undefined`.
 */
export interface JwksResolver {
  /** The key with `kid`, or `undefined` when the key set has none. */
  keyFor(kid: string): Promise<PublicJwk | undefined>;
}

/**
 * Why a signature was refused:
 * - `missing`: no header value;
 * - `malformed`: not `<header>..<signature>` in base64url, or the protected
 *   header is not a JSON object with a string `kid`;
 * - `unsupported-alg`: the protected header's `alg` is not RS512;
 * - `unknown-kid`: no key with that `kid` in the key set;
 * - `bad-key`: the key with that `kid` is not a usable RSA key;
 * - `mismatch`: the signature does not match this body under that key;
 * - `jwks-unavailable`: the key set could not be read (see `remote_jwks.ts`).
 */
export type SignatureFailure =
  | "missing"
  | "malformed"
  | "unsupported-alg"
  | "unknown-kid"
  | "bad-key"
  | "mismatch"
  | "jwks-unavailable";

/** The outcome of {@linkcode verifyWebhookSignatureWithKeys}. */
export type SignatureCheck =
  | { ok: true; kid: string }
  | { ok: false; reason: SignatureFailure; message: string; kid?: string };

const enc = new TextEncoder();

/** A JWS part: base64url WITHOUT padding (RFC 7515 §2), so a padded one is malformed. */
function jwsPartBytes(s: string): Uint8Array {
  if (s === "" || !/^[A-Za-z0-9_-]*$/.test(s)) throw new TypeError("not base64url");
  return fromBase64Url(s);
}

function fail(reason: SignatureFailure, message: string, kid?: string): SignatureCheck {
  return kid === undefined ? { ok: false, reason, message } : { ok: false, reason, message, kid };
}

function isResolver(jwks: Jwks | JwksResolver): jwks is JwksResolver {
  return typeof (jwks as JwksResolver).keyFor === "function";
}

/**
 * What a {@linkcode JwksResolver} throws when it cannot read its key set
 * (unreachable, not JSON, no `keys` array). The verifier turns it into a
 * `jwks-unavailable` result.
 *
 * @example
 * ```ts
 * throw new JwksUnavailableError("Cannot fetch the JWKS at https://keys.example/jwks.json: 503.");
 * ```
 */
export class JwksUnavailableError extends BaseError {
  /** The class name. */
  override name = "JwksUnavailableError";
}

/**
 * Verifies a delivery's signature header against the raw body exactly as
 * received and a key set. Never throws for a bad signature: the result says
 * why (`reason`, a {@linkcode SignatureFailure}, and a one-line `message`).
 *
 * @example
 * ```ts
 * declare const jwks: Jwks;
 * async function receive(req: Request): Promise<Response> {
 *   const rawBody = new Uint8Array(await req.arrayBuffer());
 *   const check = await verifyWebhookSignatureWithKeys(rawBody, req.headers.get(SIGNATURE_HEADER), jwks);
 *   if (!check.ok) return new Response(check.message, { status: 400 });
 *   return new Response(null, { status: 204 });
 * }
 * ```
 */
export async function verifyWebhookSignatureWithKeys(
  rawBody: Uint8Array | string,
  signatureHeader: string | null | undefined,
  jwks: Jwks | JwksResolver,
): Promise<SignatureCheck> {
  if (!signatureHeader) return fail("missing", `no ${SIGNATURE_HEADER} header value`);
  const parts = signatureHeader.trim().split(".");
  if (parts.length !== 3 || parts[1] !== "") {
    return fail("malformed", "not a detached JWS: expected <header>..<signature>");
  }
  let head: unknown;
  let sig: Uint8Array;
  try {
    head = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(jwsPartBytes(parts[0])));
    sig = jwsPartBytes(parts[2]);
  } catch {
    return fail("malformed", "the JWS parts are not base64url, or its header is not JSON");
  }
  if (typeof head !== "object" || head === null || Array.isArray(head)) {
    return fail("malformed", "the JWS protected header is not a JSON object");
  }
  const { alg, kid } = head as { alg?: unknown; kid?: unknown };
  if (typeof kid !== "string" || kid === "") {
    return fail("malformed", "the JWS protected header has no kid");
  }
  if (alg !== "RS512") {
    return fail("unsupported-alg", `alg ${JSON.stringify(alg)} is not RS512`, kid);
  }
  let jwk: PublicJwk | undefined;
  try {
    jwk = isResolver(jwks) ? await jwks.keyFor(kid) : jwks.keys?.find((k) => k.kid === kid);
  } catch (e) {
    if (!(e instanceof JwksUnavailableError)) throw e;
    return fail("jwks-unavailable", (e as Error).message, kid);
  }
  if (!jwk) return fail("unknown-kid", `no key with kid ${JSON.stringify(kid)} in the JWKS`, kid);
  let key: RsaVerifier;
  try {
    if (jwk.kty !== "RSA" || typeof jwk.n !== "string" || typeof jwk.e !== "string") {
      throw new TypeError("not RSA");
    }
    key = await RsaVerifier.fromJwk({ kty: "RSA", n: jwk.n, e: jwk.e }, "RS512");
  } catch {
    return fail("bad-key", `the JWKS key ${JSON.stringify(kid)} is not a usable RSA key`, kid);
  }
  const bytes = typeof rawBody === "string" ? enc.encode(rawBody) : rawBody;
  const input = enc.encode(`${parts[0]}.${toBase64Url(bytes)}`);
  const ok = await key.verify(sig, input);
  return ok
    ? { ok: true, kid }
    : fail("mismatch", "the signature does not match this body (changed body or signature)", kid);
}
