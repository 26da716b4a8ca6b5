/**
 * The one RSA signer of the project (RS256 and RS512, RSASSA-PKCS1-v1_5, on
 * WebCrypto): the platform client signs its request tokens with it (RS256)
 * and the emulator its webhook deliveries (RS512). PKCS#1 v1.5 is
 * deterministic: the same key and data give the same bytes anywhere.
 *
 * @module
 */

/** The JWS algorithms this signer makes. */
export type RsaAlg = "RS256" | "RS512";

/**
 * The hash of an RSA algorithm.
 *
 * @example
 * ```ts
 * import { hashOf } from "./rsa_signer.ts";
 *
 * hashOf("RS512"); // "SHA-512"
 * ```
 */
export function hashOf(alg: RsaAlg): "SHA-256" | "SHA-512" {
  return alg === "RS256" ? "SHA-256" : "SHA-512";
}

/**
 * An RSA private key that signs RS256 or RS512. The key is not extractable:
 * nothing can read it back out of the signer.
 *
 * @example
 * ```ts
 * import { RsaSigner } from "./rsa_signer.ts";
 *
 * const pair = await crypto.subtle.generateKey(
 *   { name: "RSASSA-PKCS1-v1_5", hash: "SHA-256", modulusLength: 2048, publicExponent: new Uint8Array([1, 0, 1]) },
 *   true,
 *   ["sign", "verify"],
 * );
 * const pkcs8 = new Uint8Array(await crypto.subtle.exportKey("pkcs8", pair.privateKey));
 * const signer = await RsaSigner.fromPkcs8(pkcs8, "RS256");
 * const sig = await signer.sign(new TextEncoder().encode("header.payload")); // 256 bytes
 * ```
 */
export class RsaSigner {
  /** The algorithm of every signature. */
  readonly alg: RsaAlg;
  #key: CryptoKey;

  private constructor(alg: RsaAlg, key: CryptoKey) {
    this.alg = alg;
    this.#key = key;
  }

  /**
   * A signer for a PKCS#8 DER private key. Throws (WebCrypto's error) when the
   * bytes are not an RSA key. The caller's bytes are not kept or changed.
   */
  static async fromPkcs8(pkcs8: Uint8Array, alg: RsaAlg): Promise<RsaSigner> {
    const key = await crypto.subtle.importKey(
      "pkcs8",
      pkcs8 as BufferSource,
      { name: "RSASSA-PKCS1-v1_5", hash: hashOf(alg) },
      false,
      ["sign"],
    );
    return new RsaSigner(alg, key);
  }

  /** A signer for an RSA private JWK (its `alg`, `kid` and `key_ops` are ignored). */
  static async fromJwk(jwk: JsonWebKey, alg: RsaAlg): Promise<RsaSigner> {
    const { kid: _kid, ...rest } = jwk as JsonWebKey & { kid?: string };
    const key = await crypto.subtle.importKey(
      "jwk",
      { ...rest, alg, key_ops: ["sign"] },
      { name: "RSASSA-PKCS1-v1_5", hash: hashOf(alg) },
      false,
      ["sign"],
    );
    return new RsaSigner(alg, key);
  }

  /** Signs `data`; resolves to the signature (the key's length in bytes). */
  async sign(data: Uint8Array): Promise<Uint8Array> {
    return new Uint8Array(
      await crypto.subtle.sign("RSASSA-PKCS1-v1_5", this.#key, data as BufferSource),
    );
  }
}
