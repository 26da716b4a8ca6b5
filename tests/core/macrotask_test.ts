/**
 * `nextMacrotask` lets a signal's listener run in the middle of a long
 * computation (the delivery-log reader yields with it), where awaiting
 * microtasks alone never does. A real signal to this process: SIGUSR2, as
 * `deno test` takes SIGINT for itself (every signal's listeners run the same way).
 */
import assert from "node:assert/strict";
import { nextMacrotask } from "../../lib/core/macrotask.ts";

Deno.test("a signal that came during a computation is heard at its next macrotask turn", async () => {
  let heard = false;
  const listener = () => heard = true;
  Deno.addSignalListener("SIGUSR2", listener);
  try {
    Deno.kill(Deno.pid, "SIGUSR2");
    const start = performance.now();
    while (performance.now() - start < 200) { /* a computation that does not await */ }
    for (let i = 0; i < 50; i++) await Promise.resolve();
    assert.equal(heard, false, "microtasks alone never let the listener run");
    await nextMacrotask();
    assert.equal(heard, true, "one macrotask turn does");
  } finally {
    Deno.removeSignalListener("SIGUSR2", listener);
  }
});
