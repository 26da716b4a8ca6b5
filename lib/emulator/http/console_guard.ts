/**
 * Who may use the console (`/console` and `/console/api/...`), checked like
 * the bridge's HTTP transport: the `Host` must be a loopback name (a
 * DNS-rebinding page sends its own), an `Origin`, when sent, must be the
 * console's own (a page of another site cannot act), and the per-run token
 * must be given, in the `X-Console-Token` header (the page's own requests)
 * or the `token` query parameter (the console URL printed at start). The
 * page holds no API key. A refusal is an `ApiError`, answered by the handler.
 *
 * @module
 */

import { hostnameOf, isLoopbackHost, sameText } from "../../core/mod.ts";
import { ApiError, ErrorCode } from "./reply.ts";

/** The header the console page sends its token in. */
export const CONSOLE_TOKEN_HEADER = "x-console-token";

/**
 * Throws a 403 (foreign `Host` or `Origin`) or 401 (token missing or wrong)
 * unless the request may use the console.
 *
 * @example
 * ```ts
 * import type { EmulatorContext } from "../context.ts";
 * declare const ctx: EmulatorContext, request: Request;
 * checkConsoleRequest(request.headers, new URL(request.url), ctx.consoleToken);
 * ```
 */
export function checkConsoleRequest(headers: Headers, url: URL, token: string): void {
  const host = headers.get("host");
  if (host === null || !isLoopbackHost(hostnameOf(host))) {
    throw new ApiError(
      403,
      `Refused: the console answers only to a loopback Host (got ${
        JSON.stringify((host ?? "none").slice(0, 100))
      }; a DNS-rebinding page?). Open it at 127.0.0.1.`,
      ErrorCode.forbidden,
    );
  }
  const origin = headers.get("origin");
  if (origin !== null && origin !== `http://${host}`) {
    throw new ApiError(
      403,
      `Refused: the console accepts requests from its own page only, not from Origin ${
        JSON.stringify(origin.slice(0, 200))
      }.`,
      ErrorCode.forbidden,
    );
  }
  const given = headers.get(CONSOLE_TOKEN_HEADER) ?? url.searchParams.get("token");
  if (given === null || !sameText(given, token)) {
    throw new ApiError(
      401,
      "The console needs its per-run token: open the consoleUrl that `service emulator` printed at start.",
      ErrorCode.unauthorized,
    );
  }
}
