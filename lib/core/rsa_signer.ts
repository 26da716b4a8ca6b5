/**
 * The one RSA signer of the project (RS256 and RS512, RSASSA-PKCS1-v1_5): the
 * platform client signs its request tokens with it (RS256) and the emulator
 * its webhook deliveries (RS512). It signs through OpenSSL's `libcrypto`
 * (`openssl_signer.ts`, FFI, about ten times faster than Deno's RSA here) where
 * that works, and through WebCrypto otherwise; the bytes are the same either
 * way (PKCS#1 v1.5 is deterministic).
 *
 * Before it trusts OpenSSL it makes one signature both ways and compares the
 * bytes (the self-check): on the first {@linkcode RsaSigner.sign} (with that
 * call's own data, the two made in parallel, so the first signature costs no
 * more than WebCrypto's alone) or when {@linkcode RsaSigner.useOpenSsl} is
 * called. Any failure (no library, no `--allow-ffi`, an old OpenSSL, bytes
 * that differ, a signature that fails later) means WebCrypto from then on.
 * Nothing is loaded before the first signature: `--help` stays light.
 *
 * @module
 */

import { ffiGranted, firstLine } from "./openssl_library.ts";
import { OpenSslSigner } from "./openssl_signer.ts";

/** The JWS algorithms this signer makes. */
export type RsaAlg = "RS256" | "RS512";

/** How signatures are made now. `unchecked`: OpenSSL not tried yet. */
export type RsaSignerMode = "openssl" | "webcrypto" | "unchecked";

/** Options of {@linkcode RsaSigner.fromPkcs8} and {@linkcode RsaSigner.fromJwk}. */
export interface RsaSignerOptions {
  /** Try OpenSSL at all; default true. */
  openssl?: boolean;
  /** libcrypto names or paths tried in order; default the OS's usual ones. `[]` skips OpenSSL. */
  libcryptoPaths?: readonly string[];
  /** Opens the OpenSSL signer; default {@linkcode OpenSslSigner.open}. A seam for tests. */
  openOpenSsl?: (
    pkcs8: Uint8Array,
    opts: { paths?: readonly string[]; hash: "SHA-256" | "SHA-512" },
  ) => OpenSslSigner;
  /** Told once when a working OpenSSL signer later fails (WebCrypto from then on). */
  onFallback?: (why: string) => void;
}

const enc = new TextEncoder();

/**
 * The hash of an RSA algorithm.
 *
 * @example
 * ```ts
 * hashOf("RS512"); // "SHA-512"
 * ```
 */
export function hashOf(alg: RsaAlg): "SHA-256" | "SHA-512" {
  return alg === "RS256" ? "SHA-256" : "SHA-512";
}

/**
 * An RSA private key that signs RS256 or RS512, through OpenSSL where it
 * works and WebCrypto otherwise.
 *
 * @example
 * ```ts
 * const signer = await RsaSigner.fromPkcs8(pkcs8Der, "RS256");
 * const sig = await signer.sign(new TextEncoder().encode("header.payload"));
 * signer.close();
 * ```
 */
export class RsaSigner {
  /** The algorithm of every signature. */
  readonly alg: RsaAlg;
  #key: CryptoKey;
  #algorithm: { name: "RSASSA-PKCS1-v1_5"; hash: "SHA-256" | "SHA-512" };
  #der: Uint8Array | undefined;
  #opts: RsaSignerOptions;
  #openssl: OpenSslSigner | undefined;
  #check: Promise<void> | undefined;
  #why = "";
  #closed = false;

  private constructor(alg: RsaAlg, key: CryptoKey, der: Uint8Array, opts: RsaSignerOptions) {
    this.alg = alg;
    this.#key = key;
    this.#algorithm = { name: "RSASSA-PKCS1-v1_5", hash: hashOf(alg) };
    this.#opts = opts;
    const tryOpenSsl = opts.openssl !== false && (opts.openOpenSsl !== undefined || ffiGranted());
    if (tryOpenSsl) this.#der = der;
    else {
      der.fill(0);
      this.#why = opts.openssl === false ? "not asked for" : "no --allow-ffi";
      this.#check = Promise.resolve();
    }
  }

  /**
   * A signer for a PKCS#8 DER private key. Throws (WebCrypto's error) when the
   * bytes are not an RSA key. The caller's bytes are not kept or changed.
   */
  static async fromPkcs8(
    pkcs8: Uint8Array,
    alg: RsaAlg,
    opts: RsaSignerOptions = {},
  ): Promise<RsaSigner> {
    const der = new Uint8Array(pkcs8);
    const key = await crypto.subtle.importKey(
      "pkcs8",
      der as BufferSource,
      { name: "RSASSA-PKCS1-v1_5", hash: hashOf(alg) },
      false,
      ["sign"],
    );
    return new RsaSigner(alg, key, der, opts);
  }

  /** A signer for an RSA private JWK (its `alg`, `kid` and `key_ops` are ignored). */
  static async fromJwk(
    jwk: JsonWebKey,
    alg: RsaAlg,
    opts: RsaSignerOptions = {},
  ): Promise<RsaSigner> {
    const { kid: _kid, ...rest } = jwk as JsonWebKey & { kid?: string };
    const algorithm = { name: "RSASSA-PKCS1-v1_5", hash: hashOf(alg) } as const;
    const extractable = await crypto.subtle.importKey(
      "jwk",
      { ...rest, alg, key_ops: ["sign"] },
      algorithm,
      true,
      ["sign"],
    );
    const der = new Uint8Array(await crypto.subtle.exportKey("pkcs8", extractable));
    const key = await crypto.subtle.importKey(
      "jwk",
      { ...rest, alg, key_ops: ["sign"] },
      algorithm,
      false,
      ["sign"],
    );
    return new RsaSigner(alg, key, der, opts);
  }

  /** Which way signatures are made now. */
  get mode(): RsaSignerMode {
    if (this.#openssl) return "openssl";
    return this.#check ? "webcrypto" : "unchecked";
  }

  /** The libcrypto loaded (name or path as tried), when OpenSSL signs. */
  get library(): string | undefined {
    return this.#openssl?.library;
  }

  /** Why OpenSSL does not sign (one line), when it does not. */
  get whyNotOpenSsl(): string {
    return this.#why;
  }

  /**
   * Tries OpenSSL now (once; later calls return the first answer): loads it,
   * signs a probe both ways and compares the bytes. Resolves to the mode.
   */
  async useOpenSsl(): Promise<RsaSignerMode> {
    if (!this.#check) {
      this.#check = this.#tryOpenSsl(enc.encode("rsa signer self-check")).then(() => {});
    }
    await this.#check;
    return this.mode;
  }

  /** Signs `data`; resolves to the signature (the key's length in bytes). */
  async sign(data: Uint8Array): Promise<Uint8Array> {
    if (this.#closed) throw new Error("RSA signer closed");
    if (!this.#check) {
      // the first signature doubles as the self-check
      let result: Uint8Array | undefined;
      this.#check = this.#tryOpenSsl(data).then((sig) => {
        result = sig;
      });
      await this.#check;
      if (result) return result;
    } else await this.#check;
    const openssl = this.#openssl;
    if (openssl) {
      try {
        return await openssl.sign(data);
      } catch (e) {
        if (this.#openssl === openssl) this.#drop(e);
      }
    }
    return this.signWithWebCrypto(data);
  }

  /** Signs on the calling thread's WebCrypto, whatever the mode (the reference). */
  async signWithWebCrypto(data: Uint8Array): Promise<Uint8Array> {
    return new Uint8Array(
      await crypto.subtle.sign(this.#algorithm, this.#key, data as BufferSource),
    );
  }

  /** Frees OpenSSL's copy of the key (after the signatures in flight) and forgets the bytes. */
  close(): void {
    this.#closed = true;
    this.#der?.fill(0);
    this.#der = undefined;
    this.#openssl?.close();
    this.#openssl = undefined;
  }

  /**
   * Opens OpenSSL and signs `probe` both ways; keeps OpenSSL when the bytes
   * match. Resolves to WebCrypto's signature of `probe` (undefined if even
   * that failed, then the caller signs again and sees the error).
   */
  async #tryOpenSsl(probe: Uint8Array): Promise<Uint8Array | undefined> {
    const der = this.#der;
    this.#der = undefined;
    if (!der) return undefined;
    let signer: OpenSslSigner;
    try {
      const opts = { paths: this.#opts.libcryptoPaths, hash: hashOf(this.alg) };
      signer = this.#opts.openOpenSsl
        ? this.#opts.openOpenSsl(der, opts)
        : OpenSslSigner.open(der, opts);
    } catch (e) {
      this.#why = firstLine(e);
      return undefined;
    } finally {
      der.fill(0);
    }
    const [ours, theirs] = await Promise.allSettled([
      signer.sign(probe),
      this.signWithWebCrypto(probe),
    ]);
    if (theirs.status === "rejected") {
      signer.close();
      this.#why = `WebCrypto failed: ${firstLine(theirs.reason)}`;
      return undefined;
    }
    const ref = theirs.value;
    if (ours.status === "rejected") this.#why = firstLine(ours.reason);
    else if (ours.value.length !== ref.length || ours.value.some((b, i) => b !== ref[i])) {
      this.#why = "its signature differs from WebCrypto's";
    } else if (this.#closed) this.#why = "closed";
    else {
      this.#openssl = signer;
      return ref;
    }
    signer.close();
    return ref;
  }

  /** After a failed OpenSSL signature: WebCrypto from now on. */
  #drop(e: unknown): void {
    this.#openssl?.close();
    this.#openssl = undefined;
    this.#why = `OpenSSL failed: ${firstLine(e)}`;
    this.#opts.onFallback?.(firstLine(e));
  }
}
