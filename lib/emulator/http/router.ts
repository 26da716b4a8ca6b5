/**
 * Routes and their matching. Every area of the emulator declares a
 * {@linkcode RouteModule} (its routes and lifecycle); `routes.ts` lists
 * the modules in one place and the handler dispatches through
 * {@linkcode Router}.
 *
 * @module
 */

import type { Reply } from "./reply.ts";
import type { EmulatorContext } from "../context.ts";
import type { ApiUser } from "./api_user.ts";

/**
 * Who may call a route: `api` = the platform's request authentication
 * (X-API-Key + signed JWT), `admin` = the admin endpoint's key check,
 * `console` = the console's checks (loopback Host, own Origin, per-run
 * token; `console_guard.ts`; its answers are never cached), `none` = public (JWKS).
 */
export type RouteAuth = "api" | "admin" | "console" | "none";

/** The parsed request a route sees. */
export interface RouteRequest {
  /** Upper-case HTTP method. */
  method: string;
  /** Path without query. */
  path: string;
  /** Path parameters from `:name` segments (decoded). */
  params: Record<string, string>;
  /** The query string. */
  query: URLSearchParams;
  /** The body parsed as JSON, `undefined` when empty. */
  body: unknown;
  /** The request id sent back as `X-Request-ID`. */
  requestId: string;
  /** The API user who sent it (`api` and `admin` routes). */
  user?: ApiUser;
  /** `Idempotency-Key` header of a POST, if any. */
  idempotencyKey?: string;
  /**
   * Keeps `reply` as the answer to the request's `Idempotency-Key` at once, in the caller's
   * SQLite transaction (absent without a key). A route that creates something calls it in the
   * same transaction as the creation, so that a crash can keep neither or both: never a
   * creation whose key would run it again.
   */
  keep?: (reply: Reply) => void;
}

/** One route. `pattern` uses `:name` for a path segment, e.g. `/v1/vault/accounts/:id`. */
export interface Route {
  /** HTTP method. */
  method: "GET" | "POST" | "PATCH" | "PUT" | "DELETE";
  /** Path pattern, e.g. `/v1/vault/accounts/:id`. */
  pattern: string;
  /** Who may call it. */
  auth: RouteAuth;
  /**
   * The route needs the node (`--rpcUrl`): without one the handler answers
   * an error saying so and the route is not run. Default false.
   */
  node?: boolean;
  /** Answers the request (may throw `ApiError`). */
  handle(req: RouteRequest, ctx: EmulatorContext): Reply | Promise<Reply>;
}

/** An area of the emulator: routes and an optional lifecycle (its tables are its store's). */
export interface RouteModule {
  /** Short name, for logs. */
  name: string;
  /** The area's routes. */
  routes: Route[];
  /** Called once the store and context exist (e.g. to resume background work). */
  start?(ctx: EmulatorContext): void | Promise<void>;
  /** Called on shutdown, before the store closes. */
  stop?(ctx: EmulatorContext): void | Promise<void>;
}

/**
 * A route.
 *
 * @example
 * ```ts
 * import { json } from "./reply.ts";
 * route("GET", "/v1/blockchains/:id", "api", (req) => json(200, { id: req.params.id }));
 * ```
 */
export function route(
  method: Route["method"],
  pattern: string,
  auth: RouteAuth,
  handle: Route["handle"],
): Route {
  return { method, pattern, auth, handle };
}

/**
 * A platform route (`auth: "api"`) that needs the node (`node: true`).
 *
 * @example
 * ```ts
 * import { json } from "./reply.ts";
 * nodeRoute("GET", "/v1/vault/accounts/:id", (req) => json(200, { id: req.params.id }));
 * ```
 */
export function nodeRoute(
  method: Route["method"],
  pattern: string,
  handle: Route["handle"],
): Route {
  return { method, pattern, auth: "api", handle, node: true };
}

interface Compiled {
  route: Route;
  segments: string[];
}

/** The outcome of matching a path. */
export type Match =
  | { kind: "found"; route: Route; params: Record<string, string> }
  | { kind: "method"; allowed: string[] }
  | { kind: "none" };

/**
 * Matches method + path against the routes of every module. Literal segments
 * win over parameters when two routes could match (e.g.
 * `/v1/transactions/external_tx_id/:x` over `/v1/transactions/:id/...`).
 *
 * @example
 * ```ts
 * import { ROUTE_MODULES } from "./routes.ts";
 * const router = new Router(ROUTE_MODULES);
 * router.match("GET", "/v1/vault/accounts/0");
 * ```
 */
export class Router {
  readonly #routes: Compiled[];
  /** Compiles the routes of `modules`. */
  constructor(modules: readonly RouteModule[]) {
    this.#routes = modules.flatMap((m) =>
      m.routes.map((route) => ({ route, segments: route.pattern.split("/").filter(Boolean) }))
    );
    // more literal segments first
    const literals = (c: Compiled) => c.segments.filter((s) => !s.startsWith(":")).length;
    this.#routes.sort((a, b) => literals(b) - literals(a));
  }

  /** Every route, in matching order. */
  routes(): Route[] {
    return this.#routes.map((c) => c.route);
  }

  /** Finds the route of `method path`. */
  match(method: string, path: string): Match {
    let parts: string[];
    try {
      parts = path.split("/").filter(Boolean).map((p) => decodeURIComponent(p));
    } catch {
      return { kind: "none" };
    }
    const allowed: string[] = [];
    for (const c of this.#routes) {
      if (parts.length !== c.segments.length) continue;
      const params: Record<string, string> = {};
      let ok = true;
      for (let i = 0; i < parts.length; i++) {
        const s = c.segments[i];
        if (s.startsWith(":")) params[s.slice(1)] = parts[i];
        else if (s !== parts[i]) {
          ok = false;
          break;
        }
      }
      if (!ok) continue;
      if (c.route.method === method) return { kind: "found", route: c.route, params };
      allowed.push(c.route.method);
    }
    return allowed.length ? { kind: "method", allowed } : { kind: "none" };
  }
}
