/**
 * The one polling wait of the tests: ask a condition again and again until it
 * holds, instead of sleeping for a time and hoping it held by then.
 *
 * @module
 */

/**
 * Polls `fn` every `everyMs` until it returns a truthy value, which is
 * returned; throws naming `what` once `timeoutMs` has passed without one
 * (`what` may be a function, called then, to say what was seen last).
 */
export async function waitFor<T>(
  what: string | (() => string),
  fn: () => Promise<T> | T,
  timeoutMs = 30_000,
  everyMs = 50,
): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v as NonNullable<T>;
    if (Date.now() > deadline) {
      const said = typeof what === "string" ? what : what();
      throw new Error(`Timed out after ${timeoutMs} ms waiting for ${said}`);
    }
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
