/**
 * The emulator's request handler, `(Request) => Promise<Response>`: the one
 * place where every request is given its `X-Request-ID`, the request-level
 * faults are applied (it calls `../faults/apply.ts`, which decides them),
 * the body is read within the limit, the route is found, authentication is
 * checked, the caller's role is checked against the permission table
 * (`permissions.ts`: 403 when it may not), JSON is parsed, `Idempotency-Key` is honoured, and any error
 * becomes `{message, code}`: the one place where errors become HTTP
 * ({@linkcode errorReplyOf}). The domain errors of `lib/core` are answered
 * 400 (bad request, conflict) or 404 (not found); any other error is a bug,
 * answered 500 with the request id and logged with its stack. Nothing a
 * client sends can crash it.
 *
 * @module
 */

import { BadRequestError, ConflictError, NotFoundError } from "../../core/mod.ts";
import { ApiError, DROP_HEADER, ErrorCode, type Reply } from "./reply.ts";
import type { Route, RouteModule, RouteRequest } from "./router.ts";
import { Router } from "./router.ts";
import { notServed } from "./not_served.ts";
import { verifyRequest } from "./auth.ts";
import type { ApiUser } from "./api_user.ts";
import { type Permission, permissionOf, refusal } from "./permissions.ts";
import { checkConsoleRequest } from "./console_guard.ts";
import { NonceCache } from "./nonce_cache.ts";
import { Idempotency } from "./idempotency.ts";
import type { EmulatorContext } from "../context.ts";
import { dropResponse, RequestFaults } from "../faults/apply.ts";
import { BodyRefused, readBody as readBounded } from "../../core/read_body.ts";
import { DEFAULT_BODY_TIMEOUT_MS } from "../../core/bounded_server.ts";

const dec = new TextDecoder();

function toResponse(reply: Reply, requestId: string): Response {
  const headers = new Headers(reply.headers);
  headers.set("X-Request-ID", requestId);
  if (reply.text) {
    headers.set("Content-Type", reply.text.contentType);
    return new Response(reply.text.value, { status: reply.status, headers });
  }
  if (reply.body === undefined) return new Response(null, { status: reply.status, headers });
  headers.set("Content-Type", "application/json; charset=utf-8");
  return new Response(JSON.stringify(reply.body), { status: reply.status, headers });
}

/** The domain errors of `lib/core` and their answers: status and code. */
const DOMAIN_ERRORS = [
  [BadRequestError, 400, ErrorCode.badRequest],
  [NotFoundError, 404, ErrorCode.notFound],
  [ConflictError, 400, ErrorCode.conflict],
] as const;

function errorReply(e: ApiError): Reply {
  return { status: e.status, body: { message: e.message, code: e.code }, headers: e.headers };
}

/**
 * The answer to a thrown value: an {@linkcode ApiError} as it says; a
 * domain error as 400 (bad request; a conflict too, with its own code, as
 * the platform answers a reused `externalTxId`) or 404; anything else is
 * unexpected: logged by `log` with its stack, answered 500 with the request
 * id (never 400: a bug is not the client's fault).
 */
function errorReplyOf(
  e: unknown,
  where: string,
  requestId: string,
  log: (line: string) => void,
): Reply {
  if (e instanceof ApiError) return errorReply(e);
  for (const [type, status, code] of DOMAIN_ERRORS) {
    if (e instanceof type) return errorReply(new ApiError(status, e.message, code));
  }
  log(`internal error on ${where} (request ${requestId}): ${(e as Error)?.stack ?? e}`);
  return errorReply(
    new ApiError(
      500,
      `Internal error of the emulator (request ${requestId}); its log has the details.`,
      ErrorCode.internal,
    ),
  );
}

/** The body, at most `max` bytes and within the server's body timeout (408 and closed after). */
async function readBody(request: Request, max: number): Promise<Uint8Array> {
  try {
    return await readBounded(request, { maxBytes: max, timeoutMs: DEFAULT_BODY_TIMEOUT_MS });
  } catch (e) {
    if (!(e instanceof BodyRefused)) throw e;
    if (e.status !== 413) {
      throw new ApiError(e.status, e.message, ErrorCode.badRequest, { Connection: "close" });
    }
    throw new ApiError(413, `The request body is larger than ${max} bytes.`, ErrorCode.tooLarge);
  }
}

/**
 * Builds the handler over the route modules.
 *
 * @example
 * ```ts
 * import type { EmulatorContext } from "../context.ts";
 * import { ROUTE_MODULES } from "./routes.ts";
 * declare const ctx: EmulatorContext;
 * const handle = createHandler(ctx, ROUTE_MODULES);
 * const res = await handle(new Request("http://x/v1/vault/accounts_paged"));
 * ```
 */
export function createHandler(
  ctx: EmulatorContext,
  modules: readonly RouteModule[],
): (request: Request) => Promise<Response> {
  const router = new Router(modules);
  // every platform route has its row in the one permission table: checked once, at start
  const permissions = new Map<Route, Permission>();
  for (const r of router.routes()) {
    if (r.auth !== "api") continue;
    const p = permissionOf(r.method, r.pattern);
    if (!p) throw new Error(`${r.method} ${r.pattern} has no row in the permission table`);
    permissions.set(r, p);
  }
  const users = new Map(ctx.apiUsers.map((u) => [u.apiKey, u]));
  // with a state file, nonces are kept across restarts (see NonceCache)
  const nonces = new NonceCache(ctx.store.path ? ctx.store.db : undefined);
  const faults = new RequestFaults(ctx);
  const idempotency = new Idempotency(ctx.store.db, () => ctx.now());

  async function authenticate(
    route: Route,
    request: Request,
    uri: string,
    body: Uint8Array,
  ): Promise<ApiUser | undefined> {
    if (route.auth === "none") return;
    if (route.auth === "console") {
      checkConsoleRequest(request.headers, new URL(request.url), ctx.consoleToken);
      return;
    }
    if (route.auth === "admin") {
      // the emulator's own controls: the key of an ADMIN user
      const user = users.get(request.headers.get("x-api-key") ?? "");
      if (user?.role !== "ADMIN") {
        throw new ApiError(
          401,
          "The admin endpoint needs the X-API-Key header with the key of an ADMIN API user " +
            "(the ready line's apiKey).",
          ErrorCode.unauthorized,
        );
      }
      return user;
    }
    const user = await verifyRequest({
      userOf: (key) => users.get(key),
      headers: request.headers,
      uri,
      body,
      nowMs: ctx.now(),
      nonces,
    });
    const why = refusal(permissions.get(route)!, user);
    if (why) throw new ApiError(403, why, ErrorCode.forbidden);
    return user;
  }

  async function run(route: Route, rr: RouteRequest): Promise<Reply> {
    try {
      const reply = await route.handle(rr, ctx);
      if (route.auth !== "console") return reply;
      // a console answer is never cached
      return { ...reply, headers: { ...reply.headers, "cache-control": "no-store" } };
    } catch (e) {
      return errorReplyOf(e, `${rr.method} ${rr.path}`, rr.requestId, (l) => ctx.log(l));
    }
  }

  async function inner(request: Request, requestId: string): Promise<Response> {
    const url = new URL(request.url);
    const path = url.pathname;
    const method = request.method.toUpperCase();
    const uri = path + url.search;
    const authorization = request.headers.get("authorization");
    const early = await faults.before(method, path, authorization);
    if (early === "drop") return dropResponse();
    if (early) return toResponse(errorReply(early), requestId);
    const body = await readBody(request, ctx.config.maxBodyBytes);
    const match = router.match(method, path);
    if (match.kind !== "found" && path.startsWith("/v1/")) {
      throw notServed(method, path, router.routes());
    }
    if (match.kind === "none") {
      throw new ApiError(404, `Not found: ${method} ${path}.`, ErrorCode.notFound);
    }
    if (match.kind === "method") {
      throw new ApiError(
        405,
        `Method ${method} is not allowed on ${path}; allowed: ${match.allowed.join(", ")}.`,
        ErrorCode.methodNotAllowed,
        { Allow: match.allowed.join(", ") },
      );
    }
    const user = await authenticate(match.route, request, uri, body);
    if (match.route.node && !ctx.chain) {
      throw new ApiError(
        400,
        `${method} ${path} needs a node: this emulator was started without --rpcUrl ` +
          "(webhooks only). Restart it with --rpcUrl <node URL> (e.g. anvil's " +
          "http://127.0.0.1:8545) to serve transactions and vault accounts.",
        ErrorCode.nodeNeeded,
      );
    }
    let parsed: unknown = undefined;
    const text = dec.decode(body);
    if (text.trim() !== "") {
      try {
        parsed = JSON.parse(text);
      } catch {
        throw new ApiError(400, "The request body is not valid JSON.", ErrorCode.badRequest);
      }
    }
    const drop = faults.takeDrop(method, path);
    const idem = request.headers.get("idempotency-key") ?? undefined;
    const rr: RouteRequest = {
      method,
      path,
      params: match.params,
      query: url.searchParams,
      body: parsed,
      requestId,
      user,
      idempotencyKey: method === "POST" && match.route.auth === "api" && idem ? idem : undefined,
    };
    const reply = await idempotency.run(
      rr.idempotencyKey,
      method,
      path,
      (keep) => run(match.route, rr.idempotencyKey ? { ...rr, keep } : rr),
      { user: request.headers.get("x-api-key") ?? "", body },
    );
    if (drop) return faults.dropped(method, path, reply.status, authorization);
    return toResponse(reply, requestId);
  }

  return async function handle(request: Request): Promise<Response> {
    const requestId = ctx.uuid();
    const started = ctx.config.logRequests ? performance.now() : 0;
    let response: Response;
    try {
      response = await inner(request, requestId);
    } catch (e) {
      const where = `${request.method} ${new URL(request.url).pathname}`;
      response = toResponse(errorReplyOf(e, where, requestId, (l) => ctx.log(l)), requestId);
    }
    if (ctx.config.logRequests) {
      // the path only: no header, query or body (nothing secret) is logged
      const path = new URL(request.url).pathname;
      ctx.log(
        `${request.method} ${path} -> ${
          response.headers.get(DROP_HEADER) ? "dropped" : response.status
        } (${(performance.now() - started).toFixed(1)} ms, ${requestId})`,
      );
    }
    return response;
  };
}
