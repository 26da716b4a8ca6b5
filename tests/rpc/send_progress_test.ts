/**
 * The progress lines of a send that waits for custody (`send_progress.ts`), on a clock the
 * test moves: nothing for a quick send, then a calm cadence, the client's departure, the
 * outcome. The same lines from a real bridge are checked in tests/e2e/rpc_slow_custody_test.ts.
 */
import assert from "node:assert/strict";
import { type SendMode, SendProgress } from "../../lib/rpc/send_progress.ts";
import { addressFlags, resumeHint } from "../../lib/rpc/mod.ts";

const NONCE: SendMode = { nonce: true, joins: true, platformInProcess: false };

function progress(mode: SendMode = NONCE) {
  let now = 0;
  const lines: string[] = [];
  const timers: (() => void)[] = [];
  const p = new SendProgress(`${mode.nonce ? "nonce 0 " : ""}from 0xabc`, {
    write: (l) => lines.push(l),
    now: () => now,
    mode,
    later: (f) => {
      timers.push(f);
      return () => timers.splice(timers.indexOf(f) >>> 0, 1);
    },
  });
  // runs the timers due (the test's clock does not move them: each is the quiet time passing)
  const quiet = () => {
    for (const f of timers.splice(0)) f();
  };
  return { p, lines, at: (ms: number) => now = ms, quiet };
}

Deno.test("a send that completes within the first seconds prints nothing", () => {
  const { p, lines, at } = progress();
  p.created("tx-1");
  at(1000);
  p.status("PENDING_SIGNATURE");
  at(4000);
  p.status("BROADCASTING");
  p.finished("0xhash");
  assert.deepEqual(lines, []);
});

Deno.test("a long wait: first line after 5 s, then every 30 s or at a status change, then the hash", () => {
  const { p, lines, at } = progress();
  p.created("tx-1");
  for (let t = 0; t <= 70_000; t += 2000) {
    at(t);
    p.status(t < 60_000 ? "PENDING_AUTHORIZATION" : "PENDING_SIGNATURE");
  }
  at(72_000);
  p.finished("0xhash");
  assert.deepEqual(lines, [
    "platform transaction tx-1 (nonce 0 from 0xabc): waiting for approval, 6 s",
    "platform transaction tx-1 (nonce 0 from 0xabc): waiting for approval, 36 s",
    "platform transaction tx-1 (nonce 0 from 0xabc): signing, 60 s",
    "platform transaction tx-1 (nonce 0 from 0xabc): done after 72 s: 0xhash",
  ]);
});

Deno.test("the client leaves: said after the quiet time, as true in its mode; the outcome says nobody waited", () => {
  const { p, lines, at, quiet } = progress();
  p.created("tx-2");
  at(2000);
  p.status("PENDING_AUTHORIZATION");
  at(45_000);
  p.allGone();
  assert.deepEqual(lines, [], "not yet: a repeat may join at once");
  quiet();
  at(50_000);
  p.failed("Platform transaction tx-2 ended REJECTED.");
  assert.deepEqual(lines, [
    "platform transaction tx-2 (nonce 0 from 0xabc): the client stopped waiting after 45 s; the transaction continues (waiting for approval) and its hash will be printed here; the same request (same nonce, destination, value and data) joins it, through this bridge or a new one.",
    "platform transaction tx-2 (nonce 0 from 0xabc): Platform transaction tx-2 ended REJECTED. (no client was waiting for it)",
  ]);
});

Deno.test("each mode's line says what a repeat does there", () => {
  const said = (mode: SendMode) => {
    const { p, lines, quiet } = progress(mode);
    p.created("tx");
    p.allGone();
    quiet();
    return lines[0];
  };
  assert.match(
    said({ ...NONCE, nonce: false }),
    /sent again to this bridge joins it once \(a new bridge cannot tell it from a new send: give a nonce to be exact\)\.$/,
  );
  assert.match(
    said({ ...NONCE, nonce: false, joins: false }),
    /sending it again makes a second transaction \(--joinRetries false\)\.$/,
  );
  assert.match(
    said({ ...NONCE, platformInProcess: true }),
    /continues while this bridge runs \(its emulator stops with it\).*joins it while this bridge runs\.$/,
  );
});

Deno.test("a repeat that joins at once (forge's own retry) silences the departure line", () => {
  const { p, lines, at, quiet } = progress();
  p.created("tx-4");
  at(6000);
  p.status("PENDING_AUTHORIZATION");
  at(45_000);
  p.allGone();
  at(45_200);
  p.joined();
  quiet();
  assert.deepEqual(lines, [
    "platform transaction tx-4 (nonce 0 from 0xabc): waiting for approval, 6 s",
    "platform transaction tx-4 (nonce 0 from 0xabc): a repeat of the request joined it after 45 s",
  ]);
});

Deno.test("a send still under way when the bridge stops: one line, as true in its mode, instead of the departure line", () => {
  const { p, lines, at, quiet } = progress();
  p.created("tx-3");
  at(3000);
  p.status("PENDING_AUTHORIZATION");
  at(240_000);
  p.allGone();
  assert.equal(
    p.unfinished(),
    "platform transaction tx-3 (nonce 0 from 0xabc) is still waiting for approval after 240 s as the bridge stops: it continues on the platform; the same request (same nonce, destination, value and data) joins it, through this bridge or a new one.",
  );
  quiet();
  assert.deepEqual(lines, [], "the departure line is not said as well");
  const none = progress({ ...NONCE, nonce: false });
  none.p.created("tx-5");
  assert.match(
    none.p.unfinished(),
    /it continues on the platform; a repeat through a new bridge would be a second transaction: check tx-5 on the platform before sending again\.$/,
  );
  const inProcess = progress({ ...NONCE, platformInProcess: true });
  inProcess.p.created("tx-6");
  assert.match(
    inProcess.p.unfinished(),
    /the emulator in this process stops with the bridge, so it will not complete/,
  );
});

Deno.test("forge --resume needs the same address: the hint gives the flags that fix it", () => {
  const forge = ["forge", "script", "S.s.sol", "--broadcast", "--rpc-url", "{}"];
  const random = addressFlags("http", { port: 0 }, new Set(), "http://127.0.0.1:41234/abc123");
  assert.equal(random, "--port 41234 --httpPath /abc123");
  assert.match(
    resumeHint(forge, random, "tx-9")!,
    /^to pick the script up again, wait until platform transaction tx-9 has landed .*, then run the same command with --resume added to forge script's arguments, with --port 41234 --httpPath \/abc123 added to the bridge's flags/,
  );
  const fixed = addressFlags(
    "http",
    { port: 8545, httpPath: "/x" },
    new Set(),
    "http://127.0.0.1:8545/x",
  );
  assert.equal(fixed, "");
  assert.doesNotMatch(resumeHint(forge, fixed)!, /--port|wait until/);
  assert.equal(addressFlags("ipc", {}, new Set(), "/tmp/service-rpc-1/rpc.sock"), null);
  assert.match(
    resumeHint(forge, null)!,
    /give --ipcPath FILE, or --port and --httpPath, to both runs/,
  );
  assert.equal(addressFlags("ipc", { ipcPath: "/w/b.sock" }, new Set(), "/w/b.sock"), "");
});

Deno.test("the resume hint names forge script --resume for a forge script child", () => {
  assert.match(
    resumeHint(["/usr/bin/forge", "script", "S.s.sol", "--broadcast", "--rpc-url", "{}"])!,
    /--resume/,
  );
  assert.equal(resumeHint(["cast", "send"]), undefined);
  assert.equal(resumeHint(undefined), undefined);
});
