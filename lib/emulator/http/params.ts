/**
 * Checks of what a request carries, shared by every area: `bad` (the 400
 * answer), the query parameters (whole numbers, epoch milliseconds, lists,
 * one of a set) and a JSON body object. Each failure is a
 * `BadRequestError` that names the value and what is expected.
 *
 * @module
 */

import { BadRequestError } from "../../core/mod.ts";

/**
 * Throws the 400 answer with `message`.
 *
 * @example
 * ```ts
 * bad("resourceId is required.");
 * ```
 */
export function bad(message: string): never {
  throw new BadRequestError(message);
}

/**
 * A whole-number query parameter within [min, max], `def` when absent.
 *
 * @example
 * ```ts
 * const query = new URLSearchParams("pageSize=50");
 * intParam(query, "pageSize", 10, 1, 100);
 * ```
 */
export function intParam(
  q: URLSearchParams,
  name: string,
  def: number,
  min: number,
  max: number,
): number {
  const v = q.get(name);
  if (v === null || v === "") return def;
  const n = Number(v);
  if (!Number.isInteger(n) || n < min || n > max) {
    bad(`${name} must be an integer from ${min} to ${max}, got ${JSON.stringify(v)}.`);
  }
  return n;
}

/**
 * An epoch-milliseconds query parameter, `undefined` when absent.
 *
 * @example
 * ```ts
 * const query = new URLSearchParams("startTime=1767225600000");
 * timeParam(query, "startTime");
 * ```
 */
export function timeParam(q: URLSearchParams, name: string): number | undefined {
  const v = q.get(name);
  if (v === null || v === "") return undefined;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0) {
    bad(`${name} must be epoch milliseconds (a whole number), got ${JSON.stringify(v)}.`);
  }
  return n;
}

/**
 * A list query parameter: repeated keys, also accepting one comma-separated value.
 *
 * @example
 * ```ts
 * listParam(new URLSearchParams("events=a,b&events=c"), "events"); // ["a", "b", "c"]
 * ```
 */
export function listParam(q: URLSearchParams, name: string): string[] {
  return q.getAll(name).flatMap((v) => v.split(",")).map((s) => s.trim()).filter(Boolean);
}

/**
 * The JSON body as an object (`{}` when there was none).
 *
 * @example
 * ```ts
 * import type { RouteRequest } from "../http/router.ts";
 * declare const req: RouteRequest;
 * const b = bodyObject(req.body, "create webhook");
 * ```
 */
export function bodyObject(body: unknown, what: string): Record<string, unknown> {
  if (body === undefined || body === null) return {};
  if (typeof body !== "object" || Array.isArray(body)) {
    bad(`${what}: the body must be a JSON object.`);
  }
  return body as Record<string, unknown>;
}

/**
 * A query parameter that must be one of `allowed`, `undefined` when absent.
 *
 * @example
 * ```ts
 * oneOf(new URLSearchParams("orderBy=createdAt"), "orderBy", ["createdAt", "lastUpdated"]);
 * ```
 */
export function oneOf<T extends string>(
  q: URLSearchParams,
  name: string,
  allowed: readonly T[],
): T | undefined {
  const v = q.get(name);
  if (v === null || v === "") return undefined;
  if (!(allowed as readonly string[]).includes(v)) {
    bad(`${name} must be one of ${allowed.join(", ")}, got ${JSON.stringify(v)}.`);
  }
  return v as T;
}
