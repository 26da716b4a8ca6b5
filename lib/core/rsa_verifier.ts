/**
 * The one RSA verifier (RS256 and RS512, RSASSA-PKCS1-v1_5, on WebCrypto),
 * the companion of `rsa_signer.ts`: the emulator checks every request token
 * with it.
 *
 * @module
 */

import { hashOf, type RsaAlg } from "./rsa_signer.ts";

/**
 * An RSA public key that verifies RS256 or RS512 signatures.
 *
 * @example
 * ```ts
 * import { RsaVerifier } from "./rsa_verifier.ts";
 *
 * const pair = await crypto.subtle.generateKey(
 *   { name: "RSASSA-PKCS1-v1_5", hash: "SHA-256", modulusLength: 2048, publicExponent: new Uint8Array([1, 0, 1]) },
 *   true,
 *   ["sign", "verify"],
 * );
 * const spki = new Uint8Array(await crypto.subtle.exportKey("spki", pair.publicKey));
 * const v = await RsaVerifier.fromSpki(spki, "RS256");
 * await v.verify(new Uint8Array(256), new TextEncoder().encode("header.payload")); // false
 * ```
 */
export class RsaVerifier {
  /** The algorithm of the signatures checked. */
  readonly alg: RsaAlg;
  #key: CryptoKey;

  private constructor(alg: RsaAlg, key: CryptoKey) {
    this.alg = alg;
    this.#key = key;
  }

  /** A verifier for a public key in SPKI DER. Throws (WebCrypto's error) when it is not RSA. */
  static async fromSpki(spki: Uint8Array, alg: RsaAlg): Promise<RsaVerifier> {
    const key = await crypto.subtle.importKey(
      "spki",
      spki as BufferSource,
      { name: "RSASSA-PKCS1-v1_5", hash: hashOf(alg) },
      false,
      ["verify"],
    );
    return new RsaVerifier(alg, key);
  }

  /** True when `signature` is this key's over `data`. */
  async verify(signature: Uint8Array, data: Uint8Array): Promise<boolean> {
    return await crypto.subtle.verify(
      "RSASSA-PKCS1-v1_5",
      this.#key,
      signature as BufferSource,
      data as BufferSource,
    );
  }
}
