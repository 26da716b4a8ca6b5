/**
 * The one RSA verifier (RS256 and RS512, RSASSA-PKCS1-v1_5), the companion of
 * `rsa_signer.ts`: the emulator checks every request token with it. Deno's
 * WebCrypto takes about 0.7 ms for an RSA-2048 verification here, OpenSSL
 * (`openssl_verifier.ts`, FFI) tens of microseconds, and both give the same
 * answer. It verifies through OpenSSL where that works and WebCrypto
 * otherwise; the first verification is made both ways and OpenSSL is kept
 * only when the answers agree (the self-check). Nothing is loaded before the
 * first verification.
 *
 * @module
 */

import { ffiGranted, firstLine } from "./openssl_library.ts";
import { OpenSslVerifier } from "./openssl_verifier.ts";
import { hashOf, type RsaAlg } from "./rsa_signer.ts";

/** Options of {@linkcode RsaVerifier.fromSpki}. */
export interface RsaVerifierOptions {
  /** Try OpenSSL at all; default true. */
  openssl?: boolean;
  /** libcrypto names or paths tried in order; default the OS's usual ones. `[]` skips OpenSSL. */
  libcryptoPaths?: readonly string[];
}

/**
 * An RSA public key that verifies RS256 or RS512 signatures.
 *
 * @example
 * ```ts
 * const v = await RsaVerifier.fromSpki(spkiDer, "RS256");
 * await v.verify(signature, new TextEncoder().encode("header.payload")); // true or false
 * ```
 */
export class RsaVerifier {
  /** The algorithm of the signatures checked. */
  readonly alg: RsaAlg;
  #key: CryptoKey;
  #algorithm: { name: "RSASSA-PKCS1-v1_5"; hash: "SHA-256" | "SHA-512" };
  #spki: Uint8Array | undefined;
  #paths: readonly string[] | undefined;
  #openssl: OpenSslVerifier | undefined;
  #checked = false;
  #why = "";

  private constructor(alg: RsaAlg, key: CryptoKey, spki: Uint8Array, opts: RsaVerifierOptions) {
    this.alg = alg;
    this.#key = key;
    this.#algorithm = {
      name: "RSASSA-PKCS1-v1_5",
      hash: hashOf(alg),
    };
    this.#paths = opts.libcryptoPaths;
    if (opts.openssl !== false && ffiGranted()) this.#spki = spki;
    else {
      this.#checked = true;
      this.#why = opts.openssl === false ? "not asked for" : "no --allow-ffi";
    }
  }

  /** A verifier for a public key in SPKI DER. Throws (WebCrypto's error) when it is not RSA. */
  static async fromSpki(
    spki: Uint8Array,
    alg: RsaAlg,
    opts: RsaVerifierOptions = {},
  ): Promise<RsaVerifier> {
    const der = new Uint8Array(spki);
    const key = await crypto.subtle.importKey(
      "spki",
      der as BufferSource,
      { name: "RSASSA-PKCS1-v1_5", hash: hashOf(alg) },
      false,
      ["verify"],
    );
    return new RsaVerifier(alg, key, der, opts);
  }

  /** `"openssl"`, `"webcrypto"`, or `"unchecked"` before the first verification. */
  get mode(): "openssl" | "webcrypto" | "unchecked" {
    return this.#openssl ? "openssl" : this.#checked ? "webcrypto" : "unchecked";
  }

  /** Why OpenSSL does not verify (one line), when it does not. */
  get whyNotOpenSsl(): string {
    return this.#why;
  }

  /** True when `signature` is this key's over `data`. */
  async verify(signature: Uint8Array, data: Uint8Array): Promise<boolean> {
    const openssl = this.#openssl;
    if (openssl) {
      try {
        return openssl.verify(signature, data);
      } catch (e) {
        this.#openssl = undefined;
        this.#why = `OpenSSL failed: ${firstLine(e)}`;
        openssl.close();
      }
    }
    const answer = await this.verifyWithWebCrypto(signature, data);
    if (!this.#checked) this.#check(signature, data, answer);
    return answer;
  }

  /** Verifies with WebCrypto, whatever the mode (the reference). */
  async verifyWithWebCrypto(signature: Uint8Array, data: Uint8Array): Promise<boolean> {
    return await crypto.subtle.verify(
      this.#algorithm,
      this.#key,
      signature as BufferSource,
      data as BufferSource,
    );
  }

  /** Frees OpenSSL's copy of the key. */
  close(): void {
    this.#checked = true;
    this.#spki = undefined;
    this.#openssl?.close();
    this.#openssl = undefined;
  }

  /** Opens OpenSSL and keeps it when it gives WebCrypto's `answer` for this signature. */
  #check(signature: Uint8Array, data: Uint8Array, answer: boolean): void {
    const spki = this.#spki;
    this.#spki = undefined;
    this.#checked = true;
    if (!spki) return;
    let v: OpenSslVerifier;
    try {
      v = OpenSslVerifier.open(spki, { paths: this.#paths, hash: this.#algorithm.hash });
    } catch (e) {
      this.#why = firstLine(e);
      return;
    }
    try {
      if (v.verify(signature, data) !== answer) {
        this.#why = "its answer differs from WebCrypto's";
      } else if (answer && v.verify(signature, new Uint8Array([...data, 0x20]))) {
        this.#why = "it accepts a signature over other data"; // a good one must fail elsewhere
      } else {
        this.#openssl = v;
        return;
      }
    } catch (e) {
      this.#why = firstLine(e);
    }
    v.close();
  }
}
