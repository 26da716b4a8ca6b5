/**
 * One turn of the event loop for a long computation that must stay
 * stoppable: what is due (a signal's listener, an abort, an answer) runs
 * before it goes on. A message through a fresh `MessageChannel` is that
 * turn in about 0.1 ms; `setTimeout(r, 0)` waits about 2 ms in Deno 2.9
 * (its Node-layer timers), which a reader yielding every 50 ms paid as 4%
 * of its time (`scripts/bench/breaker_simulate.ts`).
 *
 * @module
 */

/**
 * Resolves after one macrotask turn (microtasks alone never let a signal's
 * listener run).
 *
 * @example
 * ```ts
 * for (let i = 0; i < 1e9; i++) {
 *   if (i % 1e6 === 0) await nextMacrotask(); // Ctrl-C is heard
 * }
 * ```
 */
export function nextMacrotask(): Promise<void> {
  return new Promise((resolve) => {
    const { port1, port2 } = new MessageChannel();
    port1.onmessage = () => {
      port1.close();
      resolve();
    };
    port2.postMessage(null);
    port2.close();
  });
}
