/**
 * std-style assertions over `node:assert/strict` (JSR's @std/assert is not
 * reachable here).
 *
 * @module
 */

import nodeAssert from "node:assert/strict";

/** Asserts a truthy value. */
export function assert(value: unknown, message?: string): asserts value {
  nodeAssert.ok(value, message);
}

/** Deep strict equality. */
export function assertEquals<T>(actual: T, expected: T, message?: string): void {
  nodeAssert.deepStrictEqual(actual, expected, message);
}

/** Asserts that the text matches the pattern. */
export function assertMatch(actual: string, re: RegExp, message?: string): void {
  nodeAssert.match(actual, re, message);
}

/** Asserts that `text` does not contain `needle`. */
export function assertNotIncludes(text: string, needle: string, message?: string): void {
  nodeAssert.ok(
    !text.includes(needle),
    message ?? `unexpected ${JSON.stringify(needle)} in output`,
  );
}

/** Awaits `fn`, asserts it rejects (with an instance of `ErrorClass` when given) and returns the error. */
export async function assertRejects<E extends Error = Error>(
  fn: () => Promise<unknown>,
  // deno-lint-ignore no-explicit-any
  ErrorClass?: new (...args: any[]) => E,
): Promise<E> {
  try {
    await fn();
  } catch (e) {
    if (ErrorClass && !(e instanceof ErrorClass)) {
      throw new Error(
        `expected ${ErrorClass.name}, got ${(e as Error)?.name}: ${(e as Error)?.message}`,
      );
    }
    return e as E;
  }
  throw new Error("expected the call to reject, it resolved");
}
