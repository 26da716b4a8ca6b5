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

import { toBase64Url } from "../../../core/mod.ts";
import { ffiGranted, firstLine } from "../../../core/openssl_library.ts";
import type { OpenSslSigner } from "../../../core/openssl_signer.ts";
import { RsaSigner } from "../../../core/rsa_signer.ts";
import { BatchSignPool } from "./batch_sign_pool.ts";
import type { Jwks, PublicJwk } from "../../../webhooks/signature.ts";
import { SignPool } from "./workers.ts";

export { SIGNATURE_HEADER } from "../../../webhooks/signature.ts";
export type { Jwks, PublicJwk } from "../../../webhooks/signature.ts";

const enc = new TextEncoder();
const ALG = { name: "RSASSA-PKCS1-v1_5", hash: "SHA-512" } as const;

/** Options of {@linkcode WebhookSigner.useFastSigning}. */
export interface FastSigningOptions {
  /** WebCrypto worker threads used when OpenSSL is not. Default 2; 0 signs on the main thread. */
  workers?: number;
  /**
   * OpenSSL worker threads that sign batches ({@linkcode BatchSignPool}) once
   * signatures queue up. Default: the number of CPU cores; 0: never (every
   * signature is a call on Deno's blocking thread pool). Not used with `openOpenSsl`.
   */
  opensslWorkers?: number;
  /**
   * Signatures waiting or in flight on the blocking thread pool that start
   * the OpenSSL workers. Default {@linkcode BATCH_START_BACKLOG}; 0 starts them now.
   */
  batchStartBacklog?: number;
  /** Where the one line naming the signer in use goes (and a later fallback's line). */
  log?: (line: string) => void;
  /** libcrypto names or paths tried in order; default the OS's usual ones. `[]` skips OpenSSL. */
  libcryptoPaths?: readonly string[];
  /** Opens the OpenSSL signer; default `OpenSslSigner.open` (`lib/core/openssl_signer.ts`). A test seam. */
  openOpenSsl?: (
    pkcs8: Uint8Array,
    opts: { paths?: readonly string[]; hash: "SHA-256" | "SHA-512" },
  ) => OpenSslSigner;
}

/**
 * Signatures in flight through OpenSSL on the blocking thread pool at which
 * the OpenSSL signing workers start: a burst of deliveries, not the odd one
 * (a light load never starts the threads, and the emulator starts as fast).
 */
export const BATCH_START_BACKLOG = 16;

/** How signatures are made: OpenSSL via FFI, WebCrypto on workers, or WebCrypto here. */
export type SigningMode = "openssl" | "workers" | "main-thread";

/**
 * Holds the emulator's webhook signing key pair. Signatures are made by the
 * project's one RSA signer (`lib/core/rsa_signer.ts`: OpenSSL through FFI,
 * else WebCrypto), with WebCrypto on worker threads as this engine's own
 * fallback so that the event loop never signs. Under a burst of deliveries
 * (signatures queue up) they move to OpenSSL worker threads that sign in
 * batches ({@linkcode BatchSignPool}): one thread hand-off per batch.
 *
 * @example
 * ```ts
 * const signer = await WebhookSigner.generate();
 * const header = await signer.sign('{"id":"n1"}');
 * const check = await verifyWebhookSignature('{"id":"n1"}', header, signer.jwks()); // lib/webhooks/signature.ts
 * ```
 */
export class WebhookSigner {
  #privateKey: CryptoKey;
  #publicJwk: PublicJwk;
  #privateJwk: JsonWebKey & { kid: string };
  #protectedHeader: string;
  #pool: SignPool | undefined;
  #rsa: RsaSigner | undefined;
  #batch: BatchSignPool | undefined;
  /** How to start the OpenSSL workers once signatures queue up (undefined: never, or started). */
  #batchPlan: { size: number; paths?: readonly string[]; backlog: number } | undefined;
  #batchStarting: Promise<void> | undefined;
  /** Signatures in flight through `#rsa`. */
  #rsaInFlight = 0;
  #log: (line: string) => void = () => {};
  #fallbackWorkers = 0;

  private constructor(privateKey: CryptoKey, publicJwk: PublicJwk, privateJwk: JsonWebKey) {
    this.#privateKey = privateKey;
    this.#publicJwk = publicJwk;
    this.#privateJwk = { ...privateJwk, kid: publicJwk.kid };
    this.#protectedHeader = toBase64Url(JSON.stringify({ alg: "RS512", kid: publicJwk.kid }));
  }

  /** Makes a fresh RSA-2048 key pair with a random `kid`. */
  static async generate(): Promise<WebhookSigner> {
    const pair = await crypto.subtle.generateKey(
      { ...ALG, modulusLength: 2048, publicExponent: new Uint8Array([1, 0, 1]) },
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
    const privateKey = await crypto.subtle.importKey(
      "jwk",
      { ...rest, alg: "RS512", key_ops: ["sign"] },
      ALG,
      false,
      ["sign"],
    );
    const publicJwk: PublicJwk = { kty: "RSA", n: jwk.n, e: jwk.e, kid, alg: "RS512", use: "sig" };
    return new WebhookSigner(privateKey, publicJwk, rest);
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

  /**
   * Signs on `workers` worker threads from now on (Deno's WebCrypto signs on
   * the calling thread, 1–2 ms per RS512 signature). Falls back to the
   * calling thread when workers cannot start. Call {@linkcode WebhookSigner.close} at the end.
   */
  async useWorkers(workers: number): Promise<void> {
    if (workers < 1 || this.#pool) return;
    try {
      this.#pool = await SignPool.start(this.#privateJwk, workers);
    } catch {
      this.#pool = undefined;
    }
  }

  /**
   * Picks the fastest way to sign that works here and logs one line naming
   * it: OpenSSL's libcrypto through FFI (several times faster than Deno's
   * RSA) when it loads, reads the key and makes a signature byte-identical
   * to WebCrypto's, in batches on `opensslWorkers` worker threads where
   * they start (else on Deno's blocking thread pool); otherwise WebCrypto on
   * `workers` worker threads (or on the calling thread). Should an OpenSSL
   * signature later fail, that signature and every later one are made by
   * WebCrypto, with one log line. Call {@linkcode WebhookSigner.close} at the end.
   */
  async useFastSigning(opts: FastSigningOptions = {}): Promise<SigningMode> {
    this.#log = opts.log ?? (() => {});
    this.#fallbackWorkers = opts.workers ?? 2;
    if (this.#rsa) return "openssl";
    const rsa = await RsaSigner.fromJwk(this.#privateJwk, "RS512", {
      libcryptoPaths: opts.libcryptoPaths,
      openOpenSsl: opts.openOpenSsl,
      onFallback: (why) => this.#dropOpenSsl(why),
    });
    if (await rsa.useOpenSsl() === "openssl") {
      this.#rsa = rsa;
      const size = opts.opensslWorkers ?? navigator.hardwareConcurrency ?? 1;
      const later = size > 0 && !opts.openOpenSsl && ffiGranted();
      this.#log(
        `webhook signatures: RS512 by OpenSSL (${rsa.library}) through FFI` +
          (later ? `; in batches on ${size} worker thread(s) once signatures queue up` : ""),
      );
      if (later) {
        const backlog = opts.batchStartBacklog ?? BATCH_START_BACKLOG;
        this.#batchPlan = { size, paths: opts.libcryptoPaths, backlog };
        if (backlog <= 0) await this.#startBatch();
      }
      return "openssl";
    }
    const why = rsa.whyNotOpenSsl;
    rsa.close();
    await this.useWorkers(this.#fallbackWorkers);
    const where = this.#pool ? `${this.#fallbackWorkers} worker thread(s)` : "the main thread";
    this.#log(`webhook signatures: RS512 by WebCrypto on ${where} (OpenSSL not used: ${why})`);
    return this.#pool ? "workers" : "main-thread";
  }

  /** Whether signatures go to the OpenSSL signing workers now. */
  get batching(): boolean {
    return this.#batch !== undefined;
  }

  /** Resolves once the OpenSSL workers, if asked for, have started (or failed to). */
  async batchStarted(): Promise<void> {
    await this.#batchStarting;
  }

  /** Which way signatures are made now. */
  get mode(): SigningMode {
    if (this.#batch || this.#rsa?.mode === "openssl") return "openssl";
    return this.#pool ? "workers" : "main-thread";
  }

  /** Stops the signing workers and frees OpenSSL's copy of the key, if any. */
  close(): void {
    this.#batchPlan = undefined;
    this.#batch?.close();
    this.#batch = undefined;
    this.#rsa?.close();
    this.#rsa = undefined;
    this.#pool?.close();
    this.#pool = undefined;
  }

  /** Signs the raw body; returns the header value `<header>..<signature>`. */
  async sign(body: Uint8Array | string): Promise<string> {
    const batch = this.#batch;
    if (batch) {
      try {
        return `${this.#protectedHeader}..${await batch.sign(body)}`;
      } catch (e) {
        // this signature and later ones on the blocking thread pool
        if (this.#batch === batch) this.#dropBatch(firstLine(e));
      }
    }
    const bytes = typeof body === "string" ? enc.encode(body) : body;
    const input = `${this.#protectedHeader}.${toBase64Url(bytes)}`;
    const rsa = this.#rsa;
    if (rsa?.mode === "openssl") {
      const plan = this.#batchPlan;
      if (plan && this.#rsaInFlight >= plan.backlog) this.#startBatch();
      this.#rsaInFlight++;
      try {
        // should OpenSSL fail, the shared signer makes this very signature with WebCrypto
        return `${this.#protectedHeader}..${toBase64Url(await rsa.sign(enc.encode(input)))}`;
      } finally {
        this.#rsaInFlight--;
      }
    }
    if (this.#pool) return `${this.#protectedHeader}..${await this.#pool.sign(input)}`;
    const sig = new Uint8Array(await crypto.subtle.sign(ALG, this.#privateKey, enc.encode(input)));
    return `${this.#protectedHeader}..${toBase64Url(sig)}`;
  }

  /**
   * Starts the OpenSSL signing workers and checks one signature of theirs
   * against WebCrypto's for the same body; throws (workers stopped) otherwise.
   */
  async #startBatchPool(size: number, paths?: readonly string[]): Promise<BatchSignPool> {
    const { kid: _kid, ...jwk } = this.#privateJwk;
    const extractable = await crypto.subtle.importKey(
      "jwk",
      { ...jwk, alg: "RS512", key_ops: ["sign"] },
      ALG,
      true,
      ["sign"],
    );
    const pkcs8 = new Uint8Array(await crypto.subtle.exportKey("pkcs8", extractable));
    let pool: BatchSignPool;
    try {
      pool = await BatchSignPool.start(pkcs8, this.#protectedHeader, { size, paths });
    } finally {
      pkcs8.fill(0);
    }
    try {
      const probe = '{"probe":"webhook signer self-check"}';
      const input = enc.encode(`${this.#protectedHeader}.${toBase64Url(probe)}`);
      const [ours, theirs] = await Promise.all([
        pool.sign(probe),
        crypto.subtle.sign(ALG, this.#privateKey, input),
      ]);
      if (ours !== toBase64Url(new Uint8Array(theirs))) {
        throw new Error("its signature differs from WebCrypto's");
      }
      return pool;
    } catch (e) {
      pool.close();
      throw e;
    }
  }

  /**
   * Starts the OpenSSL workers once (in the background of the signature that
   * asked); signatures go to them when they are ready and checked, and stay
   * on the blocking thread pool, with one log line, when they cannot start.
   */
  #startBatch(): Promise<void> {
    const plan = this.#batchPlan;
    this.#batchPlan = undefined;
    if (!plan) return this.#batchStarting ?? Promise.resolve();
    this.#batchStarting = this.#startBatchPool(plan.size, plan.paths).then(
      (pool) => {
        if (this.#rsa) this.#batch = pool;
        else pool.close(); // closed (or OpenSSL dropped) meanwhile
      },
      (e) => this.#log(`webhook signatures: OpenSSL signing workers not started (${firstLine(e)})`),
    );
    return this.#batchStarting;
  }

  /** After a failed signature of the OpenSSL workers: the blocking thread pool from now on. */
  #dropBatch(why: string): void {
    this.#batch?.close();
    this.#batch = undefined;
    this.#log(
      `webhook signatures: OpenSSL signing workers failed (${why}); ` +
        `RS512 on the blocking thread pool from now on`,
    );
  }

  /** After a failed OpenSSL signature: WebCrypto from now on (workers once they start). */
  #dropOpenSsl(why: string): void {
    this.#batchPlan = undefined;
    this.#batch?.close();
    this.#batch = undefined;
    this.#log(`webhook signatures: OpenSSL failed (${why}); RS512 by WebCrypto from now on`);
    this.useWorkers(this.#fallbackWorkers).catch(() => {});
  }
}
