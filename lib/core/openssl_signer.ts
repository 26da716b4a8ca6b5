/**
 * RS256 and RS512 (RSASSA-PKCS1-v1_5 with SHA-256 or SHA-512) signatures
 * through the system's OpenSSL `libcrypto`, loaded with `Deno.dlopen`. Deno's
 * own RSA (WebCrypto and `node:crypto` alike) is several times slower than
 * OpenSSL's on the same machine; the emulator signs every webhook delivery and
 * the platform client every request, so this is their hot path.
 *
 * PKCS#1 v1.5 signatures are deterministic: for one key and one message this
 * signer's output is byte-identical to WebCrypto's. The one signer both use,
 * `RsaSigner` (`rsa_signer.ts`), checks that once before it trusts this one,
 * and falls back to WebCrypto on any failure (no library, no `--allow-ffi`,
 * an old OpenSSL, bytes that differ, a failed signature).
 *
 * A signature is the body's digest (`EVP_Digest`, on the calling thread)
 * signed with `EVP_PKEY_sign` on a key context made once and reused (about
 * a fifth cheaper than `EVP_DigestSign`, which sets up a context for every
 * signature). {@linkcode OpenSslSigner.sign} makes it on Deno's blocking
 * thread pool (a `nonblocking` foreign call), so the event loop never waits
 * for it; {@linkcode OpenSslSigner.signSync} on the calling thread (for a
 * worker that signs batches). OpenSSL 1.1, which lacks
 * `EVP_PKEY_CTX_set_signature_md` as a function, signs with `EVP_DigestSign`.
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

/** Options of {@linkcode OpenSslSigner.open}. */
export interface OpenSslSignerOptions {
  /** Library names or paths tried in order; default {@linkcode defaultLibcryptoPaths}. */
  paths?: readonly string[];
  /**
   * Signatures computed at once on the blocking thread pool; more wait their
   * turn (unbounded, they would crowd out the event loop's thread). Default:
   * the number of CPU cores.
   */
  parallel?: number;
  /** The digest: `"SHA-512"` (RS512, the default) or `"SHA-256"` (RS256). */
  hash?: "SHA-256" | "SHA-512";
}

/**
 * An RS512 or RS256 signer holding one private key inside OpenSSL.
 *
 * @example
 * ```ts
 * const signer = OpenSslSigner.open(pkcs8Der);
 * const sig = await signer.sign(new TextEncoder().encode("header.payload"));
 * signer.close();
 * ```
 */
export class OpenSslSigner {
  #lib: Lib;
  #pkey: Deno.PointerObject;
  #md: Deno.PointerObject;
  #digestSize: number;
  #sigSize: number;
  /** Key contexts ready for a signature (one per signature at a time); all of them, to free. */
  #idle: Deno.PointerObject[] = [];
  #contexts: Deno.PointerObject[] = [];
  /** OpenSSL 3: a reusable key context and a digest; 1.1: EVP_DigestSign. */
  #reusable: boolean;
  #inFlight = 0;
  #closing = false;
  #parallel = 1;
  #running = 0;
  #waiting: (() => void)[] = [];
  /** The library that was loaded (name or path as given). */
  readonly library: string;

  private constructor(
    lib: Lib,
    library: string,
    pkey: Deno.PointerObject,
    md: Deno.PointerObject,
    digestSize: number,
  ) {
    this.#lib = lib;
    this.library = library;
    this.#pkey = pkey;
    this.#md = md;
    this.#digestSize = digestSize;
    this.#sigSize = 0;
    this.#reusable = lib.symbols.EVP_PKEY_CTX_set_signature_md !== null;
  }

  /**
   * Loads `libcrypto` and the private key (PKCS#8 DER). Throws an Error
   * saying what failed; the caller falls back. The key bytes are not kept.
   */
  static open(pkcs8: Uint8Array, opts: OpenSslSignerOptions = {}): OpenSslSigner {
    const { lib, library } = loadLibcrypto(opts.paths ?? defaultLibcryptoPaths());
    const der = new Uint8Array(pkcs8); // a copy that can be wiped
    try {
      const pkey = readDerKey(lib, der, "d2i_PrivateKey_bio");
      if (!pkey) throw new Error("libcrypto could not read the private key (PKCS#8 DER)");
      const md = digestFor(lib, opts.hash, pkey);
      const signer = new OpenSslSigner(lib, library, pkey, md, opts.hash === "SHA-256" ? 32 : 64);
      signer.#parallel = Math.max(
        1,
        Math.floor(opts.parallel ?? navigator.hardwareConcurrency ?? 1),
      );
      try {
        signer.#sigSize = signer.#signatureSize();
      } catch (e) {
        signer.close();
        throw e;
      }
      return signer;
    } catch (e) {
      lib.symbols.ERR_clear_error();
      throw e;
    } finally {
      der.fill(0);
    }
  }

  /** OpenSSL 1.1: a fresh digest-and-sign context for the digest and the key; the caller frees it. */
  #digestContext(): Deno.PointerObject {
    const s = this.#lib.symbols;
    const ctx = s.EVP_MD_CTX_new();
    if (!ctx) throw new Error("EVP_MD_CTX_new failed");
    if (s.EVP_DigestSignInit(ctx, null, this.#md, null, this.#pkey) !== 1) {
      s.EVP_MD_CTX_free(ctx);
      s.ERR_clear_error();
      throw new Error("EVP_DigestSignInit failed");
    }
    return ctx;
  }

  /** OpenSSL 3: an idle key context set up for signing digests (made once, then reused). */
  #takeKeyContext(): Deno.PointerObject {
    const idle = this.#idle.pop();
    if (idle) return idle;
    const s = this.#lib.symbols;
    const ctx = s.EVP_PKEY_CTX_new(this.#pkey, null);
    if (!ctx) throw new Error("EVP_PKEY_CTX_new failed");
    if (
      s.EVP_PKEY_sign_init(ctx) !== 1 || s.EVP_PKEY_CTX_set_signature_md!(ctx, this.#md) !== 1
    ) {
      s.EVP_PKEY_CTX_free(ctx);
      s.ERR_clear_error();
      throw new Error("EVP_PKEY_sign_init failed");
    }
    this.#contexts.push(ctx);
    return ctx;
  }

  /** The digest of `data` (what `EVP_PKEY_sign` signs). */
  #digest(data: Uint8Array): Uint8Array {
    const out = new Uint8Array(this.#digestSize);
    if (this.#lib.symbols.EVP_Digest(data, BigInt(data.length), out, null, this.#md, null) !== 1) {
      this.#lib.symbols.ERR_clear_error();
      throw new Error("EVP_Digest failed");
    }
    return out;
  }

  /** Asks OpenSSL for the signature's length (no signature is made). */
  #signatureSize(): number {
    const s = this.#lib.symbols;
    const len = new BigUint64Array(1);
    let ok: number;
    if (this.#reusable) {
      const ctx = this.#takeKeyContext();
      ok = s.EVP_PKEY_sign(
        ctx,
        null,
        len,
        new Uint8Array(this.#digestSize),
        BigInt(this.#digestSize),
      );
      this.#idle.push(ctx);
    } else {
      const ctx = this.#digestContext();
      ok = s.EVP_DigestSign(ctx, null, len, new Uint8Array(1), 0n);
      s.EVP_MD_CTX_free(ctx);
    }
    if (ok !== 1) {
      s.ERR_clear_error();
      throw new Error("EVP_PKEY_sign (length) failed");
    }
    const n = Number(len[0]);
    if (n < 64 || n > 2048) throw new Error(`unexpected signature length ${n}`);
    return n;
  }

  /** Signs on the calling thread (blocks it for the signature's time). */
  signSync(data: Uint8Array): Uint8Array {
    if (this.#closing) throw new Error("OpenSSL signer closed");
    const s = this.#lib.symbols;
    const sig = new Uint8Array(this.#sigSize);
    const len = new BigUint64Array([BigInt(sig.length)]);
    let ok: number;
    if (this.#reusable) {
      const digest = this.#digest(data);
      const ctx = this.#takeKeyContext();
      ok = s.EVP_PKEY_sign(ctx, sig, len, digest, BigInt(digest.length));
      this.#idle.push(ctx);
    } else {
      const ctx = this.#digestContext();
      ok = s.EVP_DigestSign(ctx, sig, len, data, BigInt(data.length));
      s.EVP_MD_CTX_free(ctx);
    }
    if (ok !== 1) {
      s.ERR_clear_error();
      throw new Error("EVP_PKEY_sign failed");
    }
    return sig.subarray(0, Number(len[0]));
  }

  /** Signs on Deno's blocking thread pool; the event loop goes on meanwhile. */
  async sign(data: Uint8Array): Promise<Uint8Array> {
    if (this.#closing) throw new Error("OpenSSL signer closed");
    this.#inFlight++;
    if (this.#running < this.#parallel) this.#running++;
    else await new Promise<void>((r) => this.#waiting.push(r)); // the slot is handed over
    let keyCtx: Deno.PointerObject | undefined;
    let mdCtx: Deno.PointerObject | undefined;
    try {
      if (this.#closing) throw new Error("OpenSSL signer closed");
      const s = this.#lib.symbols;
      const sig = new Uint8Array(this.#sigSize);
      const len = new BigUint64Array([BigInt(sig.length)]);
      // the buffers stay referenced here until the call returns
      let ok: number;
      if (this.#reusable) {
        const digest = this.#digest(data);
        keyCtx = this.#takeKeyContext();
        ok = await s.EVP_PKEY_signAsync(keyCtx, sig, len, digest, BigInt(digest.length));
      } else {
        mdCtx = this.#digestContext();
        ok = await s.EVP_DigestSignAsync(mdCtx, sig, len, data, BigInt(data.length));
      }
      if (ok !== 1) {
        s.ERR_clear_error();
        throw new Error("EVP_PKEY_sign failed");
      }
      return sig.subarray(0, Number(len[0]));
    } finally {
      if (keyCtx) this.#idle.push(keyCtx);
      if (mdCtx) this.#lib.symbols.EVP_MD_CTX_free(mdCtx);
      const next = this.#waiting.shift();
      if (next) next();
      else this.#running--;
      this.#inFlight--;
      if (this.#closing && this.#inFlight === 0) this.#release();
    }
  }

  /** Frees the key (after the signatures in flight end). */
  close(): void {
    if (this.#closing) return;
    this.#closing = true;
    if (this.#inFlight === 0) this.#release();
  }

  #release(): void {
    for (const ctx of this.#contexts) this.#lib.symbols.EVP_PKEY_CTX_free(ctx);
    this.#contexts = [];
    this.#idle = [];
    this.#lib.symbols.EVP_PKEY_free(this.#pkey);
  }
}
