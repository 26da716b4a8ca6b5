/**
 * Webhook signatures: a detached JWS (RFC 7515 appendix F) with alg RS512 and
 * a `kid`, over the raw request body, sent in the header
 * `Service-Webhook-Signature: <b64url protected header>..<b64url signature>`.
 * The signing input is the usual `BASE64URL(header) "." BASE64URL(body)`; the
 * payload part is left out of the header value. Receivers verify it against
 * the emulator's JWKS (`/.well-known/jwks.json`), as they would against the
 * platform's, with the one verifier in `lib/webhooks/signature.ts`.
 *
 * @module
 */

import { RsaSigner, toBase64Url } from "../../core/mod.ts";
import type { Jwks, PublicJwk } from "../../webhooks/signature.ts";

export { SIGNATURE_HEADER } from "../../webhooks/signature.ts";
export type { Jwks, PublicJwk } from "../../webhooks/signature.ts";

const enc = new TextEncoder();

/**
 * Holds the emulator's webhook signing key pair; signatures are made by the
 * project's one RSA signer (`lib/core/rsa.ts`, WebCrypto).
 *
 * @example
 * ```ts
 * import { WebhookSigner } from "./signer.ts";
 * import { verifyWebhookSignatureWithKeys } from "../../webhooks/signature.ts";
 *
 * const signer = await WebhookSigner.generate();
 * const header = await signer.sign('{"id":"n1"}');
 * const check = await verifyWebhookSignatureWithKeys('{"id":"n1"}', header, signer.jwks()); // { ok: true, kid }
 * ```
 */
export class WebhookSigner {
  #rsa: RsaSigner;
  #publicJwk: PublicJwk;
  #privateJwk: JsonWebKey & { kid: string };
  #protectedHeader: string;

  private constructor(rsa: RsaSigner, publicJwk: PublicJwk, privateJwk: JsonWebKey) {
    this.#rsa = rsa;
    this.#publicJwk = publicJwk;
    this.#privateJwk = { ...privateJwk, kid: publicJwk.kid };
    this.#protectedHeader = toBase64Url(JSON.stringify({ alg: "RS512", kid: publicJwk.kid }));
  }

  /** Makes a fresh RSA-2048 key pair with a random `kid`. */
  static async generate(): Promise<WebhookSigner> {
    const pair = await crypto.subtle.generateKey(
      {
        name: "RSASSA-PKCS1-v1_5",
        hash: "SHA-512",
        modulusLength: 2048,
        publicExponent: new Uint8Array([1, 0, 1]),
      },
      true,
      ["sign", "verify"],
    ) as CryptoKeyPair;
    const kid = `emulator-${crypto.randomUUID()}`;
    const priv = await crypto.subtle.exportKey("jwk", pair.privateKey);
    return WebhookSigner.fromPrivateJwk({ ...priv, kid });
  }

  /** Restores a signer from {@linkcode WebhookSigner.toPrivateJwk}'s output (kept in `--state`). */
  static async fromPrivateJwk(jwk: JsonWebKey & { kid: string }): Promise<WebhookSigner> {
    if (typeof jwk.kid !== "string" || jwk.kty !== "RSA" || !jwk.d) {
      throw new TypeError("The stored webhook signing key is not an RSA private JWK with a kid.");
    }
    const { kid, ...rest } = jwk;
    const rsa = await RsaSigner.fromJwk(rest, "RS512");
    const publicJwk: PublicJwk = { kty: "RSA", n: jwk.n, e: jwk.e, kid, alg: "RS512", use: "sig" };
    return new WebhookSigner(rsa, publicJwk, rest);
  }

  /** The private key as a JWK with its `kid`, for persisting. A secret: never log it. */
  toPrivateJwk(): JsonWebKey & { kid: string } {
    return { ...this.#privateJwk };
  }

  /** The key id in every signature's protected header. */
  get kid(): string {
    return this.#publicJwk.kid;
  }

  /** The JWKS document with the public key. */
  jwks(): Jwks {
    return { keys: [{ ...this.#publicJwk }] };
  }

  /** Signs the raw body; returns the header value `<header>..<signature>`. */
  async sign(body: Uint8Array | string): Promise<string> {
    const bytes = typeof body === "string" ? enc.encode(body) : body;
    const input = enc.encode(`${this.#protectedHeader}.${toBase64Url(bytes)}`);
    return `${this.#protectedHeader}..${toBase64Url(await this.#rsa.sign(input))}`;
  }
}
