/**
 * RS256 and RS512 signature checks through the system's OpenSSL `libcrypto`
 * (`openssl_library.ts`): about 45 µs a check against about 0.7 ms
 * with WebCrypto's RSA here. The one verifier, `RsaVerifier`
 * (`rsa_verifier.ts`), uses it where it loads, else WebCrypto.
 *
 * @module
 */

import {
  defaultLibcryptoPaths,
  digestFor,
  type Lib,
  loadLibcrypto,
  readDerKey,
} from "./openssl_library.ts";

/**
 * An RS256 or RS512 verifier holding one public key inside OpenSSL. A
 * verification takes tens of microseconds, so it runs on the calling thread.
 *
 * @example
 * ```ts
 * const v = OpenSslVerifier.open(spkiDer, { hash: "SHA-256" });
 * v.verify(signature, new TextEncoder().encode("header.payload")); // true or false
 * v.close();
 * ```
 */
export class OpenSslVerifier {
  #lib: Lib;
  #pkey: Deno.PointerObject;
  #md: Deno.PointerObject;
  #closed = false;
  /** The library that was loaded (name or path as given). */
  readonly library: string;

  private constructor(lib: Lib, library: string, pkey: Deno.PointerObject, md: Deno.PointerObject) {
    this.#lib = lib;
    this.library = library;
    this.#pkey = pkey;
    this.#md = md;
  }

  /** Loads `libcrypto` and the public key (SPKI DER). Throws an Error saying what failed. */
  static open(
    spki: Uint8Array,
    opts: { paths?: readonly string[]; hash?: "SHA-256" | "SHA-512" } = {},
  ): OpenSslVerifier {
    const { lib, library } = loadLibcrypto(opts.paths ?? defaultLibcryptoPaths());
    const der = new Uint8Array(spki);
    const pkey = readDerKey(lib, der, "d2i_PUBKEY_bio");
    if (!pkey) {
      lib.symbols.ERR_clear_error();
      throw new Error("libcrypto could not read the public key (SPKI DER)");
    }
    return new OpenSslVerifier(lib, library, pkey, digestFor(lib, opts.hash, pkey));
  }

  /** True when `signature` is this key's over `data`; false for any other signature. */
  verify(signature: Uint8Array, data: Uint8Array): boolean {
    if (this.#closed) throw new Error("OpenSSL verifier closed");
    const s = this.#lib.symbols;
    const ctx = s.EVP_MD_CTX_new();
    if (!ctx) throw new Error("EVP_MD_CTX_new failed");
    try {
      if (s.EVP_DigestVerifyInit(ctx, null, this.#md, null, this.#pkey) !== 1) {
        throw new Error("EVP_DigestVerifyInit failed");
      }
      const r = s.EVP_DigestVerify(
        ctx,
        signature,
        BigInt(signature.length),
        data,
        BigInt(data.length),
      );
      return r === 1;
    } finally {
      s.EVP_MD_CTX_free(ctx);
      s.ERR_clear_error(); // a bad signature leaves an error on the thread's queue
    }
  }

  /** Frees the key. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#lib.symbols.EVP_PKEY_free(this.#pkey);
  }
}
