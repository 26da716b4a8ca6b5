/**
 * The one platform client every command uses. All requests go through one
 * private path that signs them, applies the timeout, retries what is safe to
 * retry (network errors, timeouts, 5xx, 408, 429 honouring `Retry-After` with
 * a cap) with exponential backoff and full jitter, reuses one
 * `Idempotency-Key` for every retry of one logical POST, validates the answer
 * and turns failures into the typed errors of `errors.ts`.
 *
 * @module
 */

import type { Page } from "./schemas.ts";
import type { Credentials } from "./credentials.ts";
import { signRequestToken } from "./jwt.ts";
import { VERSION } from "../version.ts";
import { BodyRefused, readBody } from "../core/read_body.ts";
import { rememberSecret, rememberToken } from "../core/redact.ts";

/** Page cursors of one listing remembered to tell a cursor that comes back (a loop). */
export const MAX_CURSORS_REMEMBERED = 10_000;

/** Largest platform answer read: 16 MiB (a page of a list is a few KiB); larger is an error. */
export const MAX_ANSWER_BYTES = 16 * 1024 * 1024;
const decoder = new TextDecoder();
import {
  isRetryableStatus,
  PlatformApiError,
  PlatformResponseError,
  PlatformTimeoutError,
  PlatformUnreachableError,
} from "./errors.ts";

/** A query value; arrays become repeated keys (`statuses=A&statuses=B`). */
export type QueryValue =
  | string
  | number
  | boolean
  | undefined
  | null
  | readonly (string | number)[];

/**
 * What {@linkcode RequestOptions.schema} needs of a schema: zod's `safeParse`
 * (any zod schema of `T` fits; written out here so that the library's
 * documented types do not name zod's).
 */
export interface AnswerSchema<T> {
  /** The data as `T`, or the issues found, each with the path to the field and a message. */
  safeParse(data: unknown):
    | { success: true; data: T }
    | {
      success: false;
      error: { issues: readonly { path: readonly PropertyKey[]; message: string }[] };
    };
}

/** Options of one request. */
export interface RequestOptions<T> {
  /** What the request does, for messages: "list notifications of webhook \"w1\"". */
  operation: string;
  /** Query parameters, serialised as the SDK does. */
  query?: Record<string, QueryValue>;
  /** A JSON body, serialised once; its exact bytes are hashed into the token. */
  body?: unknown;
  /**
   * Checks a 2xx JSON answer (its first issue becomes a
   * `PlatformResponseError` naming the field: `path: message`). Without it the
   * parsed JSON (or `undefined` for an empty body) is returned.
   */
  schema?: AnswerSchema<T>;
  /** For POST: the key to send; default a fresh UUID per call, reused on every retry of it. */
  idempotencyKey?: string;
  /** Send no `Idempotency-Key` even on POST. */
  noIdempotencyKey?: boolean;
  /** Aborts the request and any wait between retries. */
  signal?: AbortSignal;
  /** Overrides the client's retry count for this call (0 = no retry). */
  retries?: number;
}

/** A successful answer. */
export interface ApiResponse<T> {
  /** HTTP status. */
  status: number;
  /** The validated body. */
  data: T;
  /** Response headers. */
  headers: Headers;
  /** `X-Request-ID` of the response. */
  requestId: string | undefined;
  /** The `Idempotency-Key` that was sent, if any. */
  idempotencyKey: string | undefined;
}

/** Options of {@linkcode PlatformClient}; every default is stated. */
export interface ClientOptions {
  /** Injected fetch; default the global `fetch`. POSTs always go over a connection that is not reused. */
  fetch?: typeof fetch;
  /** Clock in ms; default `Date.now`. */
  now?: () => number;
  /** UUID source for nonces and idempotency keys; default `crypto.randomUUID`. */
  uuid?: () => string;
  /** Sleeps ms, rejecting when the signal aborts; default a timer. */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  /** Uniform [0,1) source for jitter; default `Math.random`. */
  random?: () => number;
  /** Retries after the first attempt; default 4. */
  retries?: number;
  /** First backoff in ms; default 250 (doubling up to 8000, with full jitter). */
  backoffMs?: number;
  /** Longest `Retry-After` honoured in ms; a longer one ends retrying at once. Default 60000. */
  maxRetryAfterMs?: number;
  /** Per-attempt timeout in ms; default 30000. */
  timeoutMs?: number;
  /** Called for each retry, e.g. to log it with `--verbose`. */
  onRetry?: (info: { operation: string; attempt: number; waitMs: number; reason: string }) => void;
  /** Extra headers on every request. */
  headers?: Record<string, string>;
  /** Text added after our own `User-Agent` (`service/<version>`), e.g. `--userAgent my-ci/1.2`. */
  userAgent?: string;
}

const encoder = new TextEncoder();
/** The longest backoff between retries. */
const MAX_BACKOFF_MS = 8000;

/**
 * Waits `ms` milliseconds; rejects with the signal's reason when it aborts.
 *
 * @example
 * ```ts
 * await abortableSleep(250, AbortSignal.timeout(1000));
 * ```
 */
export function abortableSleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const t = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(t);
      reject(signal!.reason);
    };
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/**
 * A `fetch` for platform calls that never replays a POST by itself.
 *
 * Deno's `fetch` silently re-sends a request when a reused keep-alive
 * connection closes after the request was written (checked: a server that
 * reads a POST and drops the connection sees it twice). For a create that
 * means the same signed token twice (refused as a nonce replay) or, against
 * a server without idempotency, two transactions. POSTs therefore go over a
 * client without an idle pool, so a lost answer surfaces as an error that
 * the custody signer handles (look up by `externalTxId`, retry with the same
 * `Idempotency-Key`). GETs keep the pooled connections (polling is frequent).
 *
 * @example
 * ```ts
 * const f = noReplayFetch();
 * await f("http://127.0.0.1:8080/v1/transactions", { method: "POST", body: "{}" });
 * ```
 */
export function noReplayFetch(base: typeof fetch = fetch): typeof fetch {
  let client: Deno.HttpClient | undefined;
  return (input, init) => {
    const method = (init?.method ?? (input instanceof Request ? input.method : "GET"))
      .toUpperCase();
    if (method === "GET" || method === "HEAD") return base(input, init);
    client ??= Deno.createHttpClient({ poolMaxIdlePerHost: 0 });
    return base(input, { ...init, client } as unknown as RequestInit);
  };
}

/** Parses `Retry-After` (seconds or an HTTP date) to milliseconds. */
function parseRetryAfter(value: string | null, nowMs: number): number | undefined {
  if (value === null || value.trim() === "") return undefined;
  if (/^\d+(\.\d+)?$/.test(value.trim())) return Math.round(Number(value) * 1000);
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - nowMs);
}

/**
 * Serialises a query as the platform's SDK does: keys in the given order,
 * arrays as repeated keys, `undefined`/`null` left out. Returns `""` or `?a=b`.
 */
function queryString(query: Record<string, QueryValue> | undefined): string {
  if (!query) return "";
  const p = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) {
    if (v === undefined || v === null) continue;
    if (Array.isArray(v)) { for (const item of v) p.append(k, String(item)); }
    else p.append(k, String(v));
  }
  const s = p.toString();
  return s ? `?${s}` : "";
}

type Outcome =
  | { kind: "response"; response: Response; text: string }
  | { kind: "network"; error: unknown }
  | { kind: "timeout"; error: unknown };

/**
 * The platform API client.
 *
 * @example
 * ```ts
 * import { loadCredentials } from "./credentials.ts";
 * declare const apiKey: string;
 * const client = new PlatformClient(
 *   await loadCredentials({ apiKey, privateKey: "api.pem", apiBaseUrl: "http://127.0.0.1:8080" }),
 * );
 * const { data } = await client.request("GET", "/v1/webhooks", { operation: "list webhooks" });
 * ```
 */
export class PlatformClient {
  /** The normalised base URL (without `/v1`). */
  readonly baseUrl: string;
  readonly #creds: Credentials;
  readonly #o:
    & Required<Omit<ClientOptions, "onRetry" | "headers" | "userAgent">>
    & Pick<ClientOptions, "onRetry" | "headers">;
  /** The `User-Agent` sent with every request: `service/<version>` and the caller's text. */
  readonly userAgent: string;

  /** A client for these credentials; see {@linkcode ClientOptions} for the defaults. */
  constructor(credentials: Credentials, options: ClientOptions = {}) {
    this.#creds = credentials;
    rememberSecret(credentials.apiKey); // redacted wherever a printer shows the platform's words
    this.baseUrl = credentials.baseUrl;
    this.#o = {
      // Never let the runtime re-send a POST on its own (see noReplayFetch).
      fetch: noReplayFetch(options.fetch ?? ((...a) => fetch(...a))),
      now: options.now ?? Date.now,
      uuid: options.uuid ?? (() => crypto.randomUUID()),
      sleep: options.sleep ?? abortableSleep,
      random: options.random ?? Math.random,
      retries: options.retries ?? 4,
      backoffMs: options.backoffMs ?? 250,
      maxRetryAfterMs: options.maxRetryAfterMs ?? 60_000,
      timeoutMs: options.timeoutMs ?? 30_000,
      onRetry: options.onRetry,
      headers: options.headers,
    };
    const extra = options.userAgent?.replace(/[\r\n]+/g, " ").trim();
    this.userAgent = `service/${VERSION}${extra ? ` ${extra}` : ""}`;
  }

  /** A fresh idempotency key from the injected UUID source. */
  newIdempotencyKey(): string {
    return this.#o.uuid();
  }

  /**
   * Sends one logical request (with its retries) and returns the validated
   * answer, or throws a typed platform error.
   */
  async request<T = unknown>(
    method: "GET" | "POST" | "PATCH" | "PUT" | "DELETE",
    path: string,
    options: RequestOptions<T>,
  ): Promise<ApiResponse<T>> {
    const o = this.#o;
    const uri = new URL(this.baseUrl).pathname.replace(/\/+$/, "") + path +
      queryString(options.query);
    const url = new URL(this.baseUrl).origin + uri;
    const body = options.body === undefined
      ? undefined
      : encoder.encode(JSON.stringify(options.body));
    const idempotencyKey = method === "POST" && !options.noIdempotencyKey
      ? options.idempotencyKey ?? o.uuid()
      : undefined;
    const maxRetries = options.retries ?? o.retries;

    for (let attempt = 0;; attempt++) {
      options.signal?.throwIfAborted();
      const outcome = await this.#send(method, url, uri, body, idempotencyKey, options.signal);
      let waitMs: number | undefined;
      let reason: string;
      if (outcome.kind === "response") {
        const { response, text } = outcome;
        if (response.ok) return this.#success(response, text, options, idempotencyKey);
        const s = response.status;
        let retryable = isRetryableStatus(s);
        reason = `status ${s}`;
        const retryAfter = parseRetryAfter(response.headers.get("retry-after"), o.now());
        if (retryAfter !== undefined) {
          if (retryAfter > o.maxRetryAfterMs) retryable = false;
          else waitMs = retryAfter;
        }
        if (!retryable || attempt >= maxRetries) {
          throw this.#apiError(options.operation, response, text, retryAfter, url);
        }
      } else {
        reason = outcome.kind === "timeout" ? "timeout" : "network error";
        if (attempt >= maxRetries) {
          const cause = { cause: outcome.error };
          throw outcome.kind === "timeout"
            ? new PlatformTimeoutError(options.operation, o.timeoutMs, cause)
            : new PlatformUnreachableError(options.operation, this.baseUrl, cause);
        }
      }
      const backoff = Math.min(MAX_BACKOFF_MS, o.backoffMs * 2 ** attempt);
      const wait = waitMs ?? Math.round(o.random() * backoff);
      o.onRetry?.({ operation: options.operation, attempt: attempt + 1, waitMs: wait, reason });
      await o.sleep(wait, options.signal);
    }
  }

  async #send(
    method: string,
    url: string,
    uri: string,
    body: Uint8Array | undefined,
    idempotencyKey: string | undefined,
    signal: AbortSignal | undefined,
  ): Promise<Outcome> {
    const o = this.#o;
    const token = await signRequestToken(this.#creds.privateKey, {
      apiKey: this.#creds.apiKey,
      uri,
      body: body ?? "",
      nonce: o.uuid(),
      nowMs: o.now(),
    });
    rememberToken(token);
    const headers: Record<string, string> = {
      ...o.headers,
      "User-Agent": this.userAgent,
      "X-API-Key": this.#creds.apiKey,
      "Authorization": `Bearer ${token}`,
      "Accept": "application/json",
    };
    if (body) headers["Content-Type"] = "application/json";
    if (idempotencyKey) headers["Idempotency-Key"] = idempotencyKey;
    const timeout = AbortSignal.timeout(o.timeoutMs);
    const combined = signal ? AbortSignal.any([signal, timeout]) : timeout;
    try {
      const response = await o.fetch(url, {
        method,
        headers,
        body: body as BodyInit | undefined,
        signal: combined,
        redirect: "manual",
      });
      let bytes: Uint8Array;
      try {
        bytes = await readBody(response, { maxBytes: MAX_ANSWER_BYTES, timeoutMs: o.timeoutMs });
      } catch (e) {
        if (!(e instanceof BodyRefused) || e.status !== 413) throw e;
        throw new PlatformResponseError(
          `${method} ${uri.split("?")[0]}`,
          `an answer larger than ${MAX_ANSWER_BYTES} bytes`,
          { baseUrl: this.baseUrl },
        );
      }
      return { kind: "response", response, text: decoder.decode(bytes) };
    } catch (error) {
      if (error instanceof PlatformResponseError) throw error;
      if (signal?.aborted) throw signal.reason;
      if (timeout.aborted) return { kind: "timeout", error };
      return { kind: "network", error };
    }
  }

  #success<T>(
    response: Response,
    text: string,
    options: RequestOptions<T>,
    key: string | undefined,
  ): ApiResponse<T> {
    let json: unknown = undefined;
    if (text.trim() !== "") {
      try {
        json = JSON.parse(text);
      } catch {
        const type = (response.headers.get("content-type") ?? "").split(";")[0].trim();
        throw new PlatformResponseError(
          options.operation,
          /html/i.test(type) || /^\s*</.test(text)
            ? `an HTML page${type ? ` (${type})` : ""}, not JSON`
            : `the body is not JSON${type ? ` (${type})` : ""}`,
          { baseUrl: this.baseUrl },
        );
      }
    }
    if (options.schema) {
      const r = options.schema.safeParse(json);
      if (!r.success) {
        const issue = r.error.issues[0];
        throw new PlatformResponseError(
          options.operation,
          `${issue.path.map(String).join(".") || "body"}: ${issue.message}`,
          { baseUrl: this.baseUrl },
        );
      }
    }
    // The answer as the platform sent it, checked: not zod's copy, which puts the
    // known fields first (the CLI prints answers in the platform's field order).
    const data = json as T;
    return {
      status: response.status,
      data,
      headers: response.headers,
      requestId: response.headers.get("x-request-id") ?? undefined,
      idempotencyKey: key,
    };
  }

  #apiError(
    operation: string,
    response: Response,
    text: string,
    retryAfterMs: number | undefined,
    url: string,
  ): PlatformApiError {
    let location: string | undefined;
    const to = response.headers.get("location");
    if (to !== null && response.status >= 300 && response.status < 400) {
      try {
        const u = new URL(to, url);
        location = `${u.origin}${u.pathname}`; // never the query: it may carry a token
      } catch {
        location = undefined;
      }
    }
    let body: unknown = text;
    let code: number | undefined;
    let message: string | undefined;
    try {
      body = JSON.parse(text);
      if (body && typeof body === "object") {
        const b = body as Record<string, unknown>;
        if (typeof b.code === "number") code = b.code;
        if (typeof b.message === "string") message = b.message.slice(0, 300);
      }
    } catch {
      // not JSON: keep the text
    }
    return new PlatformApiError({
      operation,
      status: response.status,
      statusText: response.statusText,
      code,
      platformMessage: message,
      requestId: response.headers.get("x-request-id") ?? undefined,
      retryAfterMs,
      body,
      location,
    });
  }

  /**
   * Follows `next` cursors of a `{data, next}` list, yielding each item as it
   * arrives; stops when `next` is null, absent or empty. Only one page is held
   * at a time. `onPage` sees each page (e.g. for `total` and progress).
   *
   * Bounded against a platform that misbehaves: a page holding more items
   * than the `pageSize` asked for, or a `next` cursor already followed in this
   * listing (among the last {@linkcode MAX_CURSORS_REMEMBERED}: a loop), is a
   * {@linkcode PlatformResponseError} naming it.
   */
  async *paginate<Item>(
    path: string,
    options:
      & Omit<RequestOptions<Page<Item>>, "body">
      & {
        onPage?: (page: Page<Item>) => void;
      },
  ): AsyncGenerator<Item> {
    let cursor: string | undefined = options.query?.pageCursor as string | undefined;
    const pageSize = options.query?.pageSize;
    const followed = new Set<string>();
    const operation = options.operation;
    for (;;) {
      const { data } = await this.request("GET", path, {
        ...options,
        query: { ...options.query, pageCursor: cursor },
      });
      if (typeof pageSize === "number" && data.data.length > pageSize) {
        throw new PlatformResponseError(
          operation,
          `a page of ${data.data.length} items, more than the pageSize ${pageSize} asked for`,
          { baseUrl: this.baseUrl },
        );
      }
      options.onPage?.(data);
      for (const item of data.data) yield item;
      if (!data.next) return;
      if (data.next === cursor || followed.has(data.next)) {
        throw new PlatformResponseError(
          operation,
          `the next cursor ${
            JSON.stringify(data.next.slice(0, 100))
          } repeats one already followed: the listing would loop`,
          { baseUrl: this.baseUrl },
        );
      }
      if (cursor !== undefined) followed.add(cursor);
      if (followed.size > MAX_CURSORS_REMEMBERED) {
        followed.delete(followed.values().next().value!);
      }
      cursor = data.next;
    }
  }
}
