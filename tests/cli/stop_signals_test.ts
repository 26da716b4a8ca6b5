/**
 * `stopSignals`: how SIGINT/SIGTERM/SIGHUP reach a command. The host is a
 * recording stand-in for `Deno.addSignalListener` (signals cannot be sent to
 * one test alone); the real processes are in tests/package/npm_package_test.ts
 * (Ctrl-C on a pseudo-terminal through the npm launcher) and the e2e tests.
 */
import assert from "node:assert/strict";
import { type StopRequest, stopSignals } from "../../lib/cli/stop_signals.ts";

function host() {
  const handlers = new Map<Deno.Signal, () => void>();
  const raised: Deno.Signal[] = [];
  return {
    handlers,
    raised,
    host: {
      listen: (s: Deno.Signal, h: () => void) => void handlers.set(s, h),
      unlisten: (s: Deno.Signal) => void handlers.delete(s),
      raise: (s: Deno.Signal) => void raised.push(s),
    },
  };
}

Deno.test("a stop signal nobody has taken keeps its default action", () => {
  const h = host();
  const stop = stopSignals(h.host);
  h.handlers.get("SIGINT")!();
  assert.deepEqual(h.raised, ["SIGINT"]);
  assert.deepEqual(stop.signal.aborted, false);
});

Deno.test("a taken signal stops the command; the same signal again after release is absorbed", () => {
  const h = host();
  const stop = stopSignals(h.host);
  const seen: Deno.Signal[] = [];
  const release = stop.take(["SIGINT", "SIGTERM"], (s) => seen.push(s));
  h.handlers.get("SIGINT")!(); // the terminal's Ctrl-C
  assert.deepEqual(seen, ["SIGINT"]);
  assert.deepEqual((stop.signal.reason as StopRequest).signal, "SIGINT");
  release(); // the command has stopped and returns its code
  h.handlers.get("SIGINT")!(); // the launcher (or deno task) passes the same Ctrl-C on
  assert.deepEqual(h.raised, [], "no death by SIGINT after a clean stop");
});
