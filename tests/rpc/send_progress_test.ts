/**
 * The progress lines of a send that waits for custody (`send_progress.ts`), on a clock the
 * test moves: nothing for a quick send, then a calm cadence, the client's departure, the
 * outcome. The same lines from a real bridge are checked in tests/e2e/rpc_slow_custody_test.ts.
 */
import assert from "node:assert/strict";
import { SendProgress } from "../../lib/rpc/send_progress.ts";
import { addressFlags, resumeHint } from "../../lib/rpc/mod.ts";

function progress() {
  let now = 0;
  const lines: string[] = [];
  const p = new SendProgress("nonce 0 from 0xabc", {
    write: (l) => lines.push(l),
    now: () => now,
    resumeHint: () => "run it again",
  });
  return { p, lines, at: (ms: number) => now = ms };
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

Deno.test("the client leaves: said at once with the hint; the outcome says nobody waited", () => {
  const { p, lines, at } = progress();
  p.created("tx-2");
  at(2000);
  p.status("PENDING_AUTHORIZATION");
  at(45_000);
  p.allGone();
  at(50_000);
  p.failed("Platform transaction tx-2 ended REJECTED.");
  assert.deepEqual(lines, [
    "platform transaction tx-2 (nonce 0 from 0xabc): the client stopped waiting after 45 s; the transaction continues (waiting for approval) and its hash will be printed here; run it again.",
    "platform transaction tx-2 (nonce 0 from 0xabc): Platform transaction tx-2 ended REJECTED. (no client was waiting for it)",
  ]);
});

Deno.test("a send still under way when the bridge stops: one line saying it continues", () => {
  const { p, at } = progress();
  p.created("tx-3");
  at(3000);
  p.status("PENDING_AUTHORIZATION");
  at(240_000);
  assert.equal(
    p.unfinished(),
    "platform transaction tx-3 (nonce 0 from 0xabc) is still waiting for approval after 240 s as the bridge stops: it continues on the platform; run it again.",
  );
});

Deno.test("forge --resume needs the same address: the hint gives the flags that fix it", () => {
  const forge = ["forge", "script", "S.s.sol", "--broadcast", "--rpc-url", "{}"];
  const random = addressFlags("http", { port: 0 }, new Set(), "http://127.0.0.1:41234/abc123");
  assert.equal(random, "--port 41234 --httpPath /abc123");
  assert.match(
    resumeHint(forge, random),
    /--resume added to forge script's arguments, with --port 41234 --httpPath \/abc123 added to the bridge's flags/,
  );
  const fixed = addressFlags(
    "http",
    { port: 8545, httpPath: "/x" },
    new Set(),
    "http://127.0.0.1:8545/x",
  );
  assert.equal(fixed, "");
  assert.doesNotMatch(resumeHint(forge, fixed), /--port/);
  assert.equal(addressFlags("ipc", {}, new Set(), "/tmp/service-rpc-1/rpc.sock"), null);
  assert.match(
    resumeHint(forge, null),
    /give --ipcPath FILE, or --port and --httpPath, to both runs/,
  );
  assert.equal(addressFlags("ipc", { ipcPath: "/w/b.sock" }, new Set(), "/w/b.sock"), "");
});

Deno.test("the resume hint names forge script --resume for a forge script child", () => {
  assert.match(
    resumeHint(["/usr/bin/forge", "script", "S.s.sol", "--broadcast", "--rpc-url", "{}"]),
    /--resume/,
  );
  assert.doesNotMatch(resumeHint(["cast", "send"]), /--resume/);
  assert.doesNotMatch(resumeHint(undefined), /--resume/);
});
