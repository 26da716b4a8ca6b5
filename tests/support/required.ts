/**
 * Tests that need a peer the machine may lack (a browser, `xmllint`, ...).
 * On a developer machine without it such a test is skipped, and
 * `deno task test` names it in its closing lines. Under `.ci/run`, which
 * sets `SERVICE_REQUIRE_ALL=1`, nothing may be skipped: the test runs and
 * fails, saying what is missing.
 *
 * @module
 */

/** True when every test must run: `SERVICE_REQUIRE_ALL=1` (set by `.ci/run` and the Linux CI job). */
export function requireAll(): boolean {
  return Deno.env.get("SERVICE_REQUIRE_ALL") === "1";
}

/**
 * Whether to skip a test that needs `what`: only when it is absent and
 * skips are allowed. When it is absent but skips are not allowed, the test
 * should run and call {@linkcode assertPeer} first.
 *
 * @example
 * ```ts
 * const have = await hasCommand("xmllint");
 * Deno.test({ name: "...", ignore: skipWithout(have), fn() { assertPeer("xmllint", have); } });
 * ```
 */
export function skipWithout(present: boolean): boolean {
  return !present && !requireAll();
}

/** Fails the running test when the peer it needs is absent. */
export function assertPeer(what: string, present: boolean): void {
  if (!present) {
    throw new Error(
      `${what} is not installed, and this run may not skip the test (SERVICE_REQUIRE_ALL=1 or CI)`,
    );
  }
}

/** True when `command` can be started (it is on PATH, or is a path to an executable). */
export async function hasCommand(command: string, args = ["--version"]): Promise<boolean> {
  try {
    await new Deno.Command(command, { args, stdout: "null", stderr: "null" }).output();
    return true;
  } catch (e) {
    if (e instanceof Deno.errors.NotFound || e instanceof Deno.errors.PermissionDenied) {
      return false;
    }
    throw e;
  }
}
