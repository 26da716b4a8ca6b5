/**
 * Checks of the JSON the platform answers with: strings, numbers, booleans,
 * arrays, loose objects (fields not named are kept as sent), optional and
 * nullable fields, enums and unions — all the platform client needs, as a
 * few small classes. It replaced zod, which cost every command that talks to
 * the platform about 2.5 MB of heap and ~20 ms at start for the same checks.
 * A check returns the value it was given (not a copy) when it fits, or the
 * first problem with its path.
 *
 * @example
 * ```ts
 * import * as s from "./shape.ts";
 * const Account = s.looseObject({ id: s.string(), name: s.string().optional() });
 * Account.safeParse({ id: "0", extra: 1 }); // { success: true, data: { id: "0", extra: 1 } }
 * Account.safeParse({ name: 2 }); // { success: false, error: { issues: [{ path: ["id"], ... }] } }
 * ```
 *
 * @module
 */

import type { Schema } from "./schemas.ts";

/** One problem found: where (keys and indexes from the top) and what. */
export interface Issue {
  /** Keys and array indexes leading to the value. */
  path: PropertyKey[];
  /** What was wrong, e.g. `expected string, received number`. */
  message: string;
}

/** The result of {@linkcode Shape.safeParse}. */
export type ParseResult<T> =
  | { success: true; data: T }
  | { success: false; error: { issues: Issue[] } };

/** The type a shape checks for. */
export type Infer<S> = S extends Shape<infer T> ? T : never;

/** An issue at (a copy of) `path`. */
function issueAt(path: readonly PropertyKey[], message: string): Issue {
  return { path: [...path], message };
}

function kindOf(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  return typeof value;
}

/** A check of an unknown value into a `T`. */
export abstract class Shape<T> {
  /**
   * The first problem of `value` at `path`, or undefined when it fits.
   * `path` is the caller's own array, extended and restored as checks go
   * deeper: an issue takes a copy ({@linkcode issueAt}), a fitting value
   * costs no allocation.
   */
  abstract check(value: unknown, path: PropertyKey[]): Issue | undefined;

  /** Checks `value`: the value itself when it fits, else the problem found. */
  safeParse(value: unknown): ParseResult<T> {
    const issue = this.check(value, []);
    return issue
      ? { success: false, error: { issues: [issue] } }
      : { success: true, data: value as T };
  }

  /** The same check, also accepting a missing field (`undefined`). */
  optional(): OptionalShape<T | undefined> {
    return new OptionalShape<T | undefined>(this, false);
  }

  /** The same check, also accepting `null` and a missing field. */
  nullish(): OptionalShape<T | null | undefined> {
    return new OptionalShape<T | null | undefined>(this, true);
  }
}

/** A shape that also accepts `undefined` (and `null` when nullish): its field may be absent. */
export class OptionalShape<T> extends Shape<T> {
  readonly #inner: Shape<unknown>;
  readonly #nullable: boolean;

  /** Use `.optional()` or `.nullish()`. */
  constructor(inner: Shape<unknown>, nullable: boolean) {
    super();
    this.#inner = inner;
    this.#nullable = nullable;
  }

  /** See {@linkcode Shape.check}. */
  check(value: unknown, path: PropertyKey[]): Issue | undefined {
    if (value === undefined || (this.#nullable && value === null)) return undefined;
    return this.#inner.check(value, path);
  }
}

class Primitive<T> extends Shape<T> {
  constructor(readonly kind: "string" | "number" | "boolean") {
    super();
  }

  check(value: unknown, path: PropertyKey[]): Issue | undefined {
    if (typeof value === this.kind && !(this.kind === "number" && Number.isNaN(value))) {
      return undefined;
    }
    return issueAt(path, `expected ${this.kind}, received ${kindOf(value)}`);
  }
}

/** A string. */
export function string(): Shape<string> {
  return new Primitive<string>("string");
}

/** A number (not NaN). */
export function number(): Shape<number> {
  return new Primitive<number>("number");
}

/** A boolean. */
export function boolean(): Shape<boolean> {
  return new Primitive<boolean>("boolean");
}

/** One of `values` (strings). */
export function enumOf<const V extends readonly string[]>(values: V): Shape<V[number]> {
  const allowed = new Set<string>(values);
  return new (class extends Shape<V[number]> {
    check(value: unknown, path: PropertyKey[]): Issue | undefined {
      if (typeof value === "string" && allowed.has(value)) return undefined;
      return issueAt(
        path,
        `expected one of ${values.map((v) => JSON.stringify(v)).join(", ")}, received ${
          typeof value === "string" ? JSON.stringify(value.slice(0, 50)) : kindOf(value)
        }`,
      );
    }
  })();
}

/** Any of `shapes` (the first that fits). */
export function union<const S extends readonly Shape<unknown>[]>(
  shapes: S,
): Shape<Infer<S[number]>> {
  return new (class extends Shape<Infer<S[number]>> {
    check(value: unknown, path: PropertyKey[]): Issue | undefined {
      let first: Issue | undefined;
      for (const s of shapes) {
        const issue = s.check(value, path);
        if (!issue) return undefined;
        first ??= issue;
      }
      return issueAt(path, `no alternative fits (${first?.message ?? "none given"})`);
    }
  })();
}

/** An array whose every item fits `item`. */
export function array<T>(item: Shape<T>): Shape<T[]> {
  return new (class extends Shape<T[]> {
    check(value: unknown, path: PropertyKey[]): Issue | undefined {
      if (!Array.isArray(value)) {
        return issueAt(path, `expected array, received ${kindOf(value)}`);
      }
      for (let i = 0; i < value.length; i++) {
        path.push(i);
        const issue = item.check(value[i], path);
        path.pop();
        if (issue) return issue;
      }
      return undefined;
    }
  })();
}

type Fields = Record<string, Shape<unknown>>;
type OptionalKeys<F extends Fields> = {
  [K in keyof F]: F[K] extends OptionalShape<unknown> ? K : never;
}[keyof F];
type RequiredKeys<F extends Fields> = Exclude<keyof F, OptionalKeys<F>>;
/** What {@linkcode looseObject} checks for: its fields, plus any others as sent. */
export type LooseObject<F extends Fields> =
  & { [K in RequiredKeys<F>]: Infer<F[K]> }
  & { [K in OptionalKeys<F>]?: Infer<F[K]> }
  & { [extra: string]: unknown };

/**
 * An object (not an array, not null) whose named fields fit their shapes;
 * other fields are kept as they are.
 */
export function looseObject<F extends Fields>(fields: F): Shape<LooseObject<F>> {
  const entries = Object.entries(fields);
  return new (class extends Shape<LooseObject<F>> {
    check(value: unknown, path: PropertyKey[]): Issue | undefined {
      if (typeof value !== "object" || value === null || Array.isArray(value)) {
        return issueAt(path, `expected object, received ${kindOf(value)}`);
      }
      const record = value as Record<string, unknown>;
      for (const [key, shape] of entries) {
        path.push(key);
        const issue = shape.check(record[key], path);
        path.pop();
        if (issue) return issue;
      }
      return undefined;
    }
  })();
}

/** A shape from any `Schema`-like check (its first issue, under the path it is at). */
export function fromSchema<T>(schema: Schema<T>): Shape<T> {
  if (schema instanceof Shape) return schema as Shape<T>;
  return new (class extends Shape<T> {
    check(value: unknown, path: PropertyKey[]): Issue | undefined {
      const r = schema.safeParse(value);
      if (r.success) return undefined;
      const issue = r.error.issues[0];
      return issueAt([...path, ...(issue?.path ?? [])], issue?.message ?? "invalid");
    }
  })();
}
