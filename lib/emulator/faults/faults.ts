/**
 * Fault injection for tests, set at start (`--fault`) or at run time through
 * the admin endpoint (`routes.ts`). Kinds:
 *
 * - `status`: answer the next `count` matching requests with `status`
 *   (5xx or 429; 429/503 carry `Retry-After: retryAfter` seconds when given);
 * - `latency`: delay matching requests by `ms` (for `count` requests, or
 *   all when `count` is absent);
 * - `drop`: process the next `count` matching requests (the work is done and
 *   committed) and then close the connection without any answer;
 * - `hold`: the next `count` transactions (all when absent) wait in
 *   PENDING_AUTHORIZATION until approved or rejected through the admin endpoint;
 * - `finalStatus`: the next `count` transactions end in `status`
 *   (REJECTED, BLOCKED, CANCELLED, TIMEOUT or FAILED) with `subStatus`,
 *   before anything is signed.
 *
 * `path` is a pattern where `*` matches any characters (default `*`);
 * `method` is optional (any). Only the platform's API (`/v1/...`) is
 * affected, never the admin endpoint or the console. This file
 * keeps the rules; `apply.ts` is where they take effect.
 *
 * @module
 */

import { bad } from "../http/params.ts";
import { FORCEABLE_STATUSES, type ForceableStatus } from "../transactions/status.ts";

/** A fault rule as given (without its id). */
export type FaultSpec =
  | {
    kind: "status";
    status: number;
    count?: number;
    path?: string;
    method?: string;
    retryAfter?: number;
  }
  | { kind: "latency"; ms: number; count?: number; path?: string; method?: string }
  | { kind: "drop"; count?: number; path?: string; method?: string }
  | { kind: "hold"; count?: number }
  | {
    kind: "finalStatus";
    status: ForceableStatus;
    subStatus?: string;
    count?: number;
  };

/** A fault rule in force: its spec, an id, and what remains of its count. */
export type Fault = FaultSpec & { id: string; remaining: number | null };

/**
 * Checks a fault spec from JSON or from `key=value,key=value` text; throws
 * `BadRequestError` with a one-line reason.
 *
 * @example
 * ```ts
 * parseFaultSpec("kind=status,status=503,count=2,path=/v1/transactions*");
 * ```
 */
export function parseFaultSpec(input: unknown): FaultSpec {
  let o: Record<string, unknown>;
  if (typeof input === "string") {
    const t = input.trim();
    if (t.startsWith("{")) {
      try {
        o = JSON.parse(t);
      } catch {
        bad(`fault ${JSON.stringify(input)} is not valid JSON`);
      }
    } else {
      o = {};
      for (const part of t.split(",")) {
        const i = part.indexOf("=");
        if (i <= 0) bad(`fault part ${JSON.stringify(part)} is not key=value`);
        const k = part.slice(0, i).trim();
        const v = part.slice(i + 1).trim();
        o[k] = /^\d+$/.test(v) ? Number(v) : v;
      }
    }
  } else if (input && typeof input === "object" && !Array.isArray(input)) {
    o = input as Record<string, unknown>;
  } else bad('a fault must be an object such as {"kind":"status","status":503,"count":1}');
  const count = o.count === undefined ? undefined : Number(o.count);
  if (count !== undefined && (!Number.isInteger(count) || count < 1)) {
    bad("fault count must be a positive integer");
  }
  const path = o.path === undefined ? undefined : String(o.path);
  if (path !== undefined && !path.startsWith("/") && path !== "*") {
    bad(`fault path ${JSON.stringify(path)} must start with "/" (use * as a wildcard)`);
  }
  const method = o.method === undefined ? undefined : String(o.method).toUpperCase();
  switch (o.kind) {
    case "status": {
      const status = Number(o.status);
      if (!Number.isInteger(status) || !(status === 429 || (status >= 500 && status <= 599))) {
        bad("a status fault needs status 429 or 500-599");
      }
      const retryAfter = o.retryAfter === undefined ? undefined : Number(o.retryAfter);
      if (retryAfter !== undefined && !(retryAfter >= 0)) bad("retryAfter must be seconds >= 0");
      return { kind: "status", status, count: count ?? 1, path, method, retryAfter };
    }
    case "latency": {
      const ms = Number(o.ms);
      if (!(ms >= 0 && ms <= 600_000)) bad("a latency fault needs ms between 0 and 600000");
      return { kind: "latency", ms, count, path, method };
    }
    case "drop":
      return { kind: "drop", count: count ?? 1, path, method: method ?? "POST" };
    case "hold":
      return { kind: "hold", count };
    case "finalStatus": {
      const status = String(o.status ?? "").toUpperCase();
      if (!(FORCEABLE_STATUSES as readonly string[]).includes(status)) {
        bad(`a finalStatus fault needs status ${FORCEABLE_STATUSES.join("|")}`);
      }
      return {
        kind: "finalStatus",
        status: status as ForceableStatus,
        subStatus: o.subStatus === undefined ? undefined : String(o.subStatus),
        count: count ?? 1,
      };
    }
    default:
      bad(
        `unknown fault kind ${
          JSON.stringify(o.kind)
        }: expected status, latency, drop, hold or finalStatus`,
      );
  }
}

function globToRegExp(glob: string): RegExp {
  const esc = glob.replace(/[.+?^${}()|[\]\\]/g, "\\$&").replace(/\*/g, ".*");
  return new RegExp(`^${esc}$`);
}

/**
 * The fault rules in force.
 *
 * @example
 * ```ts
 * const faults = new Faults();
 * faults.add({ kind: "status", status: 503, count: 2, path: "/v1/transactions" });
 * ```
 */
export class Faults {
  #rules: Fault[] = [];
  #seq = 0;

  /** Adds a rule; returns it with its id. */
  add(spec: FaultSpec): Fault {
    const f = { ...spec, id: `f${++this.#seq}`, remaining: spec.count ?? null } as Fault;
    this.#rules.push(f);
    return f;
  }

  /** Removes one rule (true if it existed). */
  remove(id: string): boolean {
    const n = this.#rules.length;
    this.#rules = this.#rules.filter((r) => r.id !== id);
    return this.#rules.length !== n;
  }

  /** Removes every rule. */
  clear(): void {
    this.#rules = [];
  }

  /** The rules in force. */
  list(): Fault[] {
    return this.#rules.map((r) => ({ ...r }));
  }

  /**
   * The first rule of `kind` for a request `method path` (a transaction's
   * rules, `hold` and `finalStatus`, have neither), consumed.
   */
  take<K extends Fault["kind"]>(
    kind: K,
    method?: string,
    path = "",
  ): Extract<Fault, { kind: K }> | undefined {
    for (const r of this.#rules) {
      if (r.kind !== kind) continue;
      const f = r as Extract<Fault, { kind: K }> & { path?: string; method?: string };
      if (method !== undefined && f.method && f.method !== method) continue;
      if (method !== undefined && !globToRegExp(f.path ?? "*").test(path)) continue;
      if (f.remaining !== null) {
        f.remaining--;
        if (f.remaining <= 0) this.remove(f.id);
      }
      return f;
    }
    return undefined;
  }
}
