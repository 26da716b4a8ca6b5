/**
 * The one RSA signer and verifier of the project (RS256 and RS512,
 * RSASSA-PKCS1-v1_5, on WebCrypto): the platform client signs its request
 * tokens (RS256) and the emulator its webhook deliveries (RS512); the
 * emulator checks every request token, a receiver every delivery. PKCS#1 v1.5 is deterministic: the
 * same key and data give the same bytes anywhere. Keys are not extractable:
 * nothing can read one back out.
 *
 * @module
 */

/** The JWS algorithms signed and verified here. */
export type RsaAlg = "RS256" | "RS512";

const RSA = "RSASSA-PKCS1-v1_5";

/** Imports a key for `alg` (WebCrypto's error when it is not RSA); the caller's bytes stay as they are. */
function importKey(
  format: "pkcs8" | "spki" | "jwk",
  key: Uint8Array | JsonWebKey,
  alg: RsaAlg,
  use: "sign" | "verify",
): Promise<CryptoKey> {
  const algorithm = { name: RSA, hash: alg === "RS256" ? "SHA-256" : "SHA-512" };
  return format === "jwk"
    ? crypto.subtle.importKey(format, key as JsonWebKey, algorithm, false, [use])
    : crypto.subtle.importKey(format, key as BufferSource, algorithm, false, [use]);
}

/**
 * An RSA private key that signs RS256 or RS512.
 *
 * @example
 * ```ts
 * declare const pkcs8: Uint8Array; // an RSA private key, PKCS#8 DER
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

  /** A signer for a PKCS#8 DER private key. Throws (WebCrypto's error) when it is not RSA. */
  static async fromPkcs8(pkcs8: Uint8Array, alg: RsaAlg): Promise<RsaSigner> {
    return new RsaSigner(alg, await importKey("pkcs8", pkcs8, alg, "sign"));
  }

  /** A signer for an RSA private JWK (its `alg`, `kid` and `key_ops` are ignored). */
  static async fromJwk(jwk: JsonWebKey, alg: RsaAlg): Promise<RsaSigner> {
    const { kid: _kid, ...rest } = jwk as JsonWebKey & { kid?: string };
    return new RsaSigner(
      alg,
      await importKey("jwk", { ...rest, alg, key_ops: ["sign"] }, alg, "sign"),
    );
  }

  /** Signs `data`; resolves to the signature (the key's length in bytes). */
  async sign(data: Uint8Array): Promise<Uint8Array> {
    return new Uint8Array(await crypto.subtle.sign(RSA, this.#key, data as BufferSource));
  }
}

/**
 * An RSA public key that verifies RS256 or RS512 signatures.
 *
 * @example
 * ```ts
 * declare const spki: Uint8Array; // an RSA public key, SPKI DER
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
    return new RsaVerifier(alg, await importKey("spki", spki, alg, "verify"));
  }

  /** A verifier for an RSA public JWK (its `alg` is set to `alg`). Throws when it is not RSA. */
  static async fromJwk(jwk: JsonWebKey, alg: RsaAlg): Promise<RsaVerifier> {
    return new RsaVerifier(alg, await importKey("jwk", { ...jwk, alg }, alg, "verify"));
  }

  /** True when `signature` is this key's over `data`. */
  async verify(signature: Uint8Array, data: Uint8Array): Promise<boolean> {
    return await crypto.subtle.verify(
      RSA,
      this.#key,
      signature as BufferSource,
      data as BufferSource,
    );
  }
}
