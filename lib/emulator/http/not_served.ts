/**
 * The answer to a platform call the emulator does not serve: one error that
 * names the call, says the emulator does not serve it, and lists the calls
 * it serves in the same area (`/v1/<area>/...`), so a client never reads a
 * 405 that took a path for an id. The served list comes from the route
 * table, as does the "Served" list of docs/emulator.md (checked by a test).
 *
 * @module
 */

import { ApiError, ErrorCode } from "./reply.ts";
import type { Route, RouteModule } from "./router.ts";

/**
 * The platform calls of `routes` (auth `api`, under `/v1/`), as
 * `METHOD /v1/path/{param}` lines, in table order.
 *
 * @example
 * ```ts
 * import { ROUTE_MODULES } from "./routes.ts";
 * const routes = ROUTE_MODULES.flatMap((m) => m.routes);
 * servedCalls(routes); // ["GET /v1/vault/accounts_paged", ...]
 * ```
 */
export function servedCalls(routes: readonly Route[]): string[] {
  return routes.filter((r) => r.auth === "api" && r.pattern.startsWith("/v1/")).map((r) =>
    `${r.method} ${r.pattern.replace(/:([A-Za-z]+)/g, "{$1}")}`
  );
}

/**
 * The error answered for `method path` when no route serves it: 404 with
 * code 1404 (`notServed`).
 *
 * @example
 * ```ts
 * import { ROUTE_MODULES } from "./routes.ts";
 * const routes = ROUTE_MODULES.flatMap((m) => m.routes);
 * throw notServed("GET", "/v1/staking/chains", routes);
 * ```
 */
export function notServed(method: string, path: string, routes: readonly Route[]): ApiError {
  const area = path.split("/").filter(Boolean).slice(0, 2).join("/");
  const near = servedCalls(routes).filter((c) => c.split(" ")[1].startsWith(`/${area}`));
  const list = near.length
    ? `It serves, under /${area}: ${near.join(", ")}.`
    : 'See the "Served" list of docs/emulator.md for the calls it serves.';
  return new ApiError(
    404,
    `The emulator does not serve ${method} ${path}: it stands in for part of the platform API only. ${list}`,
    ErrorCode.notServed,
  );
}

/**
 * The "Served" list of docs/emulator.md, made from the route table: one bullet per
 * platform call with its area, and "needs the node" for the calls that
 * need `--rpcUrl`. `scripts/readme_served.ts` writes it into docs/emulator.md
 * and a test checks that the file holds exactly this (one short line per
 * call, so `deno fmt` leaves it as it is).
 *
 * @example
 * ```ts
 * import { ROUTE_MODULES } from "./routes.ts";
 * servedListMarkdown(ROUTE_MODULES); // "- `GET /v1/vault/accounts_paged` (vault, needs the node)\n..."
 * ```
 */
export function servedListMarkdown(modules: readonly RouteModule[]): string {
  return modules.flatMap((m) =>
    m.routes.filter((r) => r.auth === "api" && r.pattern.startsWith("/v1/")).map((r) =>
      `- \`${servedCalls([r])[0]}\` (${m.name}${r.node ? ", needs the node" : ""})`
    )
  ).join("\n");
}
