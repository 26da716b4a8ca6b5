/**
 * Which platform address the API key goes to, and where that address came from. A build
 * without a production address never assumes one: the command stops before any network use.
 *
 * @module
 */

import { UsageError } from "./errors.ts";
import { buildApiBaseUrl, NO_ADDRESS } from "../platform/production.ts";

/** An address the key goes to, and where it came from (for `whoami` and `rpc`'s banner). */
export interface PlatformAddress {
  /** The base URL as given (normalised by the client). */
  url: string;
  /** `--apiBaseUrl`, `SERVICE_API_BASE_URL (environment)`, `--apiBaseUrl (profile NAME)`, `this build (production)`. */
  from: string;
}

/**
 * The address of the platform: `apiBaseUrl` (from the command line, or from the source
 * `origins` names), else the build's production address; else a {@linkcode UsageError}
 * (exit 2) saying what to set.
 *
 * @example
 * ```ts
 * platformAddress("http://127.0.0.1:8080", new Map()); // { url: "http://127.0.0.1:8080", from: "--apiBaseUrl" }
 * ```
 */
export function platformAddress(
  apiBaseUrl: string | undefined,
  origins?: ReadonlyMap<string, string>,
): PlatformAddress {
  if (apiBaseUrl !== undefined && apiBaseUrl !== "") {
    return { url: apiBaseUrl, from: origins?.get("apiBaseUrl") ?? "--apiBaseUrl" };
  }
  const built = buildApiBaseUrl();
  if (built !== "") return { url: built, from: "this build (production)" };
  throw new UsageError(NO_ADDRESS);
}
