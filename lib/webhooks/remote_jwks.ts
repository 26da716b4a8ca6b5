/**
 * A JWKS read from a URL for {@linkcode verifyWebhookSignatureWithKeys}: fetched once,
 * on first use, and fetched again only when a signature names a `kid` the
 * cached set lacks (a key rotation), at most once per `cooldownMs` so that
 * forged `kid`s cannot make a receiver hammer the key server. A redirect is
 * refused, not followed (as the platform client refuses them). `fetch` is
 * injected (default: the global one); nothing else here does I/O.
 *
 * @module
 */

import {
  type Jwks,
  type JwksResolver,
  JwksUnavailableError,
  type PublicJwk,
  type SignatureCheck,
  verifyWebhookSignatureWithKeys,
} from "./signature.ts";
import { BodyRefused, readBody } from "../core/read_body.ts";

/** Largest JWKS read: 1 MiB (a key set is a few KiB); larger is refused. */
export const MAX_JWKS_BYTES = 1024 * 1024;

/** Options of {@linkcode RemoteJwks}. */
export interface RemoteJwksOptions {
  /** The fetch to use; default `globalThis.fetch`. */
  fetch?: typeof fetch;
  /** Least time between two fetches caused by unknown `kid`s, ms. Default 30 000. */
  cooldownMs?: number;
  /** Clock, ms; default `Date.now`. */
  now?: () => number;
  /** Timeout of one fetch, ms. Default 10 000. */
  timeoutMs?: number;
}

/** Checks a parsed JWKS document's shape. */
export function asJwks(doc: unknown, where: string): Jwks {
  const keys = (doc as { keys?: unknown } | null)?.keys;
  if (!Array.isArray(keys)) {
    throw new JwksUnavailableError(`The JWKS at ${where} has no "keys" array.`);
  }
  return { keys: keys.filter((k): k is PublicJwk => typeof k?.kid === "string") };
}

/**
 * A JWKS URL as a {@linkcode JwksResolver}.
 *
 * @example
 * ```ts
 * import { verifyWebhookSignatureWithKeys } from "./signature.ts";
 * declare const rawBody: Uint8Array, header: string | null;
 * const keys = new RemoteJwks("http://127.0.0.1:40123/.well-known/jwks.json");
 * const check = await verifyWebhookSignatureWithKeys(rawBody, header, keys);
 * ```
 */
export class RemoteJwks implements JwksResolver {
  /** The URL read. */
  readonly url: string;
  readonly #fetch: typeof fetch;
  readonly #cooldownMs: number;
  readonly #now: () => number;
  readonly #timeoutMs: number;
  #keys: Jwks | undefined;
  #inflight: Promise<Jwks> | undefined;
  #lastFetch = -Infinity;
  /** How many times the URL was fetched (for tests and `--verbose`). */
  fetches = 0;

  /** `url`: http(s) URL of a JWKS document. */
  constructor(url: string | URL, options: RemoteJwksOptions = {}) {
    this.url = String(url);
    this.#fetch = options.fetch ?? globalThis.fetch;
    this.#cooldownMs = options.cooldownMs ?? 30_000;
    this.#now = options.now ?? Date.now;
    this.#timeoutMs = options.timeoutMs ?? 10_000;
  }

  /** The key with `kid`, fetching the set the first time and again for an unknown `kid`. */
  async keyFor(kid: string): Promise<PublicJwk | undefined> {
    if (!this.#keys) this.#keys = await this.#load();
    let key = this.#keys.keys.find((k) => k.kid === kid);
    if (!key && this.#now() - this.#lastFetch >= this.#cooldownMs) {
      this.#keys = await this.#load();
      key = this.#keys.keys.find((k) => k.kid === kid);
    }
    return key;
  }

  #load(): Promise<Jwks> {
    this.#inflight ??= this.#get().finally(() => this.#inflight = undefined);
    return this.#inflight;
  }

  async #get(): Promise<Jwks> {
    this.#lastFetch = this.#now();
    this.fetches++;
    let res: Response;
    try {
      res = await this.#fetch(this.url, {
        headers: { accept: "application/json" },
        // Not followed, as the platform client does not: whoever answers a redirect must not
        // choose the keys that deliveries are trusted by.
        redirect: "manual",
        signal: AbortSignal.timeout(this.#timeoutMs),
      });
    } catch (e) {
      throw new JwksUnavailableError(`Cannot fetch the JWKS at ${this.url}.`, { cause: e });
    }
    if (res.status >= 300 && res.status < 400) {
      await res.body?.cancel();
      const location = res.headers.get("location");
      throw new JwksUnavailableError(
        `The JWKS at ${this.url} redirects${
          location ? ` to ${location.slice(0, 200)}` : ""
        }: redirects are not followed. Give the keys' own address as --jwks if you trust it.`,
      );
    }
    if (!res.ok) {
      await res.body?.cancel();
      throw new JwksUnavailableError(`Cannot fetch the JWKS at ${this.url}: HTTP ${res.status}.`);
    }
    const bytes = await readBody(res, { maxBytes: MAX_JWKS_BYTES, timeoutMs: this.#timeoutMs })
      .catch((e) => {
        throw new JwksUnavailableError(
          e instanceof BodyRefused && e.status === 413
            ? `The JWKS at ${this.url} is larger than ${MAX_JWKS_BYTES} bytes: not a key set.`
            : `Cannot read the JWKS at ${this.url}.`,
          { cause: e },
        );
      });
    let doc: unknown;
    try {
      doc = JSON.parse(new TextDecoder().decode(bytes));
    } catch (e) {
      throw new JwksUnavailableError(`The JWKS at ${this.url} is not JSON.`, { cause: e });
    }
    return asJwks(doc, this.url);
  }
}

const shared = new Map<string, RemoteJwks>();

/**
 * {@linkcode verifyWebhookSignatureWithKeys} that also takes a JWKS URL (a `URL`, or a
 * string starting with `http://` or `https://`): one {@linkcode RemoteJwks}
 * per URL is kept for the life of the process, so the URL is fetched once
 * and again only for an unknown `kid`. The library surface exports it
 * (`mod.ts`); the CLI, which has its keys in hand, calls
 * {@linkcode verifyWebhookSignatureWithKeys}.
 *
 * @example
 * ```ts
 * declare const rawBody: Uint8Array, header: string | null;
 * const check = await verifyWebhookSignature(rawBody, header, "https://keys.example/.well-known/jwks.json");
 * ```
 */
export function verifyWebhookSignature(
  rawBody: Uint8Array | string,
  signatureHeader: string | null | undefined,
  jwks: Jwks | JwksResolver | URL | string,
): Promise<SignatureCheck> {
  if (typeof jwks === "string" || jwks instanceof URL) {
    const href = String(jwks);
    if (!/^https?:\/\//i.test(href)) {
      throw new TypeError(`The JWKS must be a document or an http(s) URL, got ${href}.`);
    }
    let remote = shared.get(href);
    if (!remote) shared.set(href, remote = new RemoteJwks(href));
    return verifyWebhookSignatureWithKeys(rawBody, signatureHeader, remote);
  }
  return verifyWebhookSignatureWithKeys(rawBody, signatureHeader, jwks);
}
