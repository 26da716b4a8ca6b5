/**
 * `service rpc` as a user runs it: configuration errors, the child's
 * environment and arguments, exit codes, signals. Real anvil, real cast.
 */
import assert from "node:assert/strict";
import { type Anvil, foundryBin, ROOT, runCli, startAnvil } from "../support/tools.ts";
import { tempPrivateKey } from "../support/rpc.ts";
import { cleanEnv, mainCommand } from "../support/main_command.ts";
import { waitFor } from "../support/wait_for.ts";
import { assertPeer, hasCommand, skipWithout } from "../support/required.ts";

let anvil: Anvil;
let keyPath: string;

Deno.test.beforeAll(async () => {
  anvil = await startAnvil();
  keyPath = await tempPrivateKey();
});

Deno.test.afterAll(async () => {
  await anvil?.stop();
  await Deno.remove(keyPath).catch(() => {});
});

const creds = () => ({
  SERVICE_API_KEY: "secret-api-key-123",
  SERVICE_API_PRIVATE_KEY_PATH: keyPath,
  SERVICE_API_BASE_URL: "http://127.0.0.1:9",
});

/** `service rpc` on the test's anvil (asset ETH) with `flags`, around `child`. */
function bridgeArgs(child: string[], flags: string[] = []): string[] {
  return ["rpc", "--rpcUrl", anvil.url, "--assetId", "ETH", ...flags, "--", ...child];
}

/** Runs the bridge around `child` with the test's credentials in the environment. */
function runBridge(child: string[], flags: string[] = []) {
  return runCli(bridgeArgs(child, flags), { env: creds() });
}

/**
 * Spawns the bridge around `child` (a shell command that prints a pid first) and reads that
 * pid; the caller signals `bridge` and then calls `done()`.
 */
async function spawnBridgeReadingPid(script: string) {
  const bridge = mainCommand(bridgeArgs(["sh", "-c", script]), { env: creds() }).spawn();
  const reader = bridge.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let out = "";
  while (!out.includes("\n")) {
    const { value, done } = await reader.read();
    if (done) break;
    out += value;
  }
  const pid = Number(out.trim());
  assert.ok(pid > 0, out);
  const done = async () => {
    await reader.cancel();
    await bridge.stderr.cancel();
  };
  return { bridge, pid, done };
}

Deno.test("missing chain configuration exits 2 with one line, never 0", async () => {
  const r = await runCli(["rpc", "--http", "--", "true"], { env: creds() });
  assert.equal(r.code, 2);
  assert.match(r.stderr, /Missing chain: give --rpcUrl/);
  assert.equal(r.stderr.trim().split("\n").length, 1);
});

Deno.test("an unknown chain without --rpcUrl, a chain id mismatch, missing credentials: exit 2", async () => {
  const unknown = await runCli(["rpc", "--chainId", "999999", "--", "true"], { env: creds() });
  assert.equal(unknown.code, 2);
  assert.match(unknown.stderr, /no built-in public node: give --rpcUrl/);
  const mismatch = await runCli(
    ["rpc", "--chainId", "1", "--rpcUrl", anvil.url, "--assetId", "ETH", "--", "true"],
    { env: creds() },
  );
  assert.equal(mismatch.code, 2);
  assert.match(mismatch.stderr, /does not match .* chain 31337/);
  const nocreds = await runCli(["rpc", "--rpcUrl", anvil.url, "--", "true"]);
  assert.equal(nocreds.code, 2);
  const badFlag = await runCli(["rpc", "--rpcUrl", anvil.url, "--port", "8545", "--", "true"], {
    env: creds(),
  });
  assert.equal(badFlag.code, 2);
  assert.match(badFlag.stderr, /--port needs --http/);
  const remote = await runCli(
    ["rpc", "--rpcUrl", anvil.url, "--http", "--host", "0.0.0.0", "--", "true"],
    { env: creds() },
  );
  assert.equal(remote.code, 2);
  assert.match(remote.stderr, /--allowRemote/);
  // a browser takes *.localhost for loopback; binding it binds what the resolver says
  const named = await runCli(
    ["rpc", "--rpcUrl", anvil.url, "--http", "--host", "app.localhost", "--", "true"],
    { env: creds() },
  );
  assert.equal(named.code, 2, named.stderr);
  assert.match(named.stderr, /--host app\.localhost is not a loopback address.*--allowRemote/);
});

Deno.test("a bad key file with a node that is down reports the key (exit 2), not the node", async () => {
  // The chain id is asked while the key is read: the credentials mistake must still be the answer.
  const down = await runCli(
    ["rpc", "--http", "--rpcUrl", "http://127.0.0.1:9", "--", "true"],
    { env: { ...creds(), SERVICE_API_PRIVATE_KEY_PATH: `${keyPath}.missing` } },
  );
  assert.equal(down.code, 2);
  assert.match(down.stderr, /Cannot read the private key file .*: no such file/);
  assert.doesNotMatch(down.stderr, /chain id/);
  assert.equal(down.stderr.trim().split("\n").length, 1);
});

Deno.test("the exit code is the child's", async () => {
  const r = await runBridge(["sh", "-c", "exit 7"]);
  assert.equal(r.code, 7);
});

Deno.test("a missing child program is a clear error and exit 127", async () => {
  const r = await runBridge(["no-such-program-xyz", "a"]);
  assert.equal(r.code, 127);
  assert.match(r.stderr, /Cannot run "no-such-program-xyz": no such program/);
  assert.ok(!r.stderr.includes("ENOENT") && !r.stderr.includes("    at "));
});

Deno.test("every {} in every argument is replaced, {}{} twice", async () => {
  const r = await runBridge(["echo", "{}{}", "x={}"], ["--http"]);
  assert.equal(r.code, 0);
  const m = r.stdout.trim().match(/^(http:\/\/127\.0\.0\.1:\d+\/[0-9a-f]{32})\1 x=\1$/);
  assert.ok(m, r.stdout);
});

Deno.test("IPC mode: every {} is the socket path, the same as SERVICE_JSON_RPC_ADDRESS", async () => {
  const r = await runBridge([
    "sh",
    "-c",
    'echo "$1"; echo "$SERVICE_JSON_RPC_ADDRESS"',
    "sh",
    "{}{} x={}",
  ]);
  assert.equal(r.code, 0, r.stderr);
  const [args, env] = r.stdout.trim().split("\n");
  assert.match(env, /^\/.+\/rpc\.ipc$/);
  assert.equal(args, `${env}${env} x=${env}`);
  // and a client given {} reaches the node through it
  const cast = await runBridge([foundryBin("cast"), "chain-id", "--rpc-url", "{}"]);
  assert.equal(cast.code, 0, cast.stderr);
  assert.equal(cast.stdout.trim(), "31337");
});

Deno.test("no secret in the child's environment or arguments; the address is given", async () => {
  const r = await runBridge(["env"], ["--http"]);
  assert.equal(r.code, 0);
  assert.ok(!r.stdout.includes("SERVICE_API_KEY"));
  assert.ok(!r.stdout.includes("SERVICE_API_PRIVATE_KEY_PATH"));
  assert.ok(!r.stdout.includes("secret-api-key-123"));
  assert.ok(!r.stdout.includes(keyPath));
  assert.match(r.stdout, /^SERVICE_JSON_RPC_ADDRESS=http:\/\/127\.0\.0\.1:\d+\/[0-9a-f]{32}$/m);
  // the key given as a flag does not reach the child either
  const flagged = await runCli(
    bridgeArgs(["sh", "-c", 'env; echo "ARGS $0 $@"', "{}"], [
      "--apiKey",
      "flag-key-456",
      "--privateKey",
      keyPath,
      "--apiBaseUrl",
      "http://127.0.0.1:9",
      "--http",
    ]),
  );
  assert.equal(flagged.code, 0);
  assert.ok(!flagged.stdout.includes("flag-key-456"));
});

Deno.test("cast reaches the node through the bridge over IPC and HTTP; the socket is removed after", async () => {
  const cast = foundryBin("cast");
  const overIpc = await runBridge([
    "sh",
    "-c",
    `"${cast}" chain-id --rpc-url "$SERVICE_JSON_RPC_ADDRESS" && echo "$SERVICE_JSON_RPC_ADDRESS"`,
  ]);
  assert.equal(overIpc.code, 0, overIpc.stderr);
  const [chain, path] = overIpc.stdout.trim().split("\n");
  assert.equal(chain, "31337");
  await assert.rejects(Deno.lstat(path));
  const overHttp = await runBridge([cast, "block-number", "--rpc-url", "{}"], ["--http"]);
  assert.equal(overHttp.code, 0, overHttp.stderr);
  assert.match(overHttp.stdout.trim(), /^\d+$/);
});

Deno.test("SIGTERM to the bridge is forwarded: the child dies and the exit code is 143", async () => {
  const { bridge, pid, done } = await spawnBridgeReadingPid("echo $$; exec sleep 30");
  bridge.kill("SIGTERM");
  const status = await bridge.status;
  await done();
  assert.equal(status.code, 143);
  assert.equal(status.signal, null, "the bridge exits by itself with the child's 128+N");
  // the child is gone (no orphan)
  const alive = await new Deno.Command("kill", { args: ["-0", String(pid)], stderr: "null" })
    .output();
  assert.equal(alive.code, 1);
});

Deno.test("a child killed by a signal gives 128+N", async () => {
  const r = await runBridge(["sh", "-c", "kill -KILL $$"]);
  assert.equal(r.code, 137);
});

const procFs = await Deno.stat("/proc/self/stat").then(() => true, () => false);
const haveScript = await hasCommand("script", ["-V"]);

/** True while `pid` runs (a zombie counts as gone: nothing is left of it but its status). */
async function running(pid: number): Promise<boolean> {
  if (!procFs) {
    try {
      Deno.kill(pid, "SIGCONT"); // harmless probe; throws once the process is gone
      return true;
    } catch {
      return false;
    }
  }
  try {
    const stat = await Deno.readTextFile(`/proc/${pid}/stat`);
    return stat.slice(stat.lastIndexOf(")") + 2)[0] !== "Z";
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return false;
    throw e;
  }
}

/** Waits until `pid` is gone; false if it still runs after `ms`. */
function gone(pid: number, ms = 5_000): Promise<boolean> {
  return waitFor(`pid ${pid} to end`, async () => !(await running(pid)), ms, 20)
    .catch(() => false);
}

Deno.test("SIGTERM to the bridge stops the child's whole tree: no grandchild survives", async () => {
  const { bridge, pid: grandchild, done } = await spawnBridgeReadingPid(
    "sleep 97 & echo $!; wait",
  );
  assert.ok(await running(grandchild), "the grandchild runs before the signal");
  bridge.kill("SIGTERM");
  const status = await bridge.status;
  await done();
  assert.equal(status.code, 143, "cli.md: the child's 128+N");
  assert.equal(status.signal, null);
  const ok = await gone(grandchild);
  if (!ok) Deno.kill(grandchild, "SIGKILL"); // leave nothing behind, then fail
  assert.ok(ok, `sleep 97 (pid ${grandchild}) outlived the bridge`);
});

Deno.test({
  name: "on a terminal the child keeps it as its controlling terminal (same job as the bridge)",
  ignore: skipWithout(haveScript),
  fn: terminalKept,
});

async function terminalKept() {
  // `script` (util-linux) gives the bridge a pseudo-terminal as stdin/stdout/stderr.
  assertPeer("script (util-linux)", haveScript);
  const inner = [Deno.execPath(), "run", "-A", `${ROOT}main.ts`]
    .concat(bridgeArgs(["sh", "-c", "ps -o tty= -p $$"]))
    .map((a) => `'${a}'`).join(" ");
  const r = await new Deno.Command("script", {
    args: ["-qec", inner, "/dev/null"],
    clearEnv: true,
    env: cleanEnv(creds()),
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder().decode(r.stdout).trim();
  assert.equal(r.code, 0, text + new TextDecoder().decode(r.stderr));
  assert.match(text, /^pts\/\d+$/m, "the child has the terminal (a new session would show ?)");
}

Deno.test("without a terminal the child leads a process group of its own", async () => {
  const r = await runBridge([
    "sh",
    "-c",
    'ps -o pid=,pgid= -p $$; echo "$PPID"; ps -o pgid= -p "$PPID"',
  ]);
  assert.equal(r.code, 0, r.stderr);
  const [ids, _bridgePid, bridgePgid] = r.stdout.trim().split("\n").map((l) => l.trim());
  const [pid, pgid] = ids.split(/\s+/);
  assert.equal(pgid, pid, "the child leads its own process group");
  assert.notEqual(bridgePgid, pgid);
});
