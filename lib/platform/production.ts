/**
 * The platform's production addresses, a setting of the build: empty in a
 * checkout, and in any build made without them. The release workflow passes
 * them to `deno task compile`/`pack` (`--apiBaseUrl`, `--jwksUrl`, or the
 * variables `SERVICE_BUILD_API_BASE_URL`, `SERVICE_BUILD_JWKS_URL`), which
 * write them into the bundle in place of the markers below
 * (`scripts/bundle.ts`). This project names no default address of its own:
 * a command that would reach the platform without an address from a flag,
 * a variable, a profile or the build refuses to start (exit 2).
 *
 * @module
 */

/** Replaced in the bundle by the build's production API address (`scripts/bundle.ts`). */
const API_BASE_URL: string = "__SERVICE_BUILD_API_BASE_URL__";
/** Replaced in the bundle by the build's production JWKS address (`scripts/bundle.ts`). */
const JWKS_URL: string = "__SERVICE_BUILD_JWKS_URL__";

/** A marker the build did not replace: no address. */
const unset = (v: string) => v.startsWith("__SERVICE_BUILD_") ? "" : v;

/**
 * The production API address this build carries, without `/v1`; `""` when it carries none.
 *
 * @example
 * ```ts
 * const base = buildApiBaseUrl() || undefined; // undefined in a checkout
 * ```
 */
export function buildApiBaseUrl(): string {
  return unset(API_BASE_URL);
}

/**
 * The production JWKS address (the keys that sign webhooks) this build carries; `""` when none.
 *
 * @example
 * ```ts
 * const jwks = buildJwksUrl() || undefined; // undefined in a checkout
 * ```
 */
export function buildJwksUrl(): string {
  return unset(JWKS_URL);
}

/** The one line a command that would reach the platform without an address stops with (exit 2). */
export const NO_ADDRESS: string =
  "No platform address: give --apiBaseUrl URL, set SERVICE_API_BASE_URL, or save one in a profile " +
  "(service config set --profile NAME --apiBaseUrl URL); this build carries no production address.";
