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
  const r = await runCli(
    ["rpc", "--rpcUrl", anvil.url, "--assetId", "ETH", "--", "sh", "-c", "exit 7"],
    { env: creds() },
  );
  assert.equal(r.code, 7);
});

Deno.test("a missing child program is a clear error and exit 127", async () => {
  const r = await runCli(
    ["rpc", "--rpcUrl", anvil.url, "--assetId", "ETH", "--", "no-such-program-xyz", "a"],
    { env: creds() },
  );
  assert.equal(r.code, 127);
  assert.match(r.stderr, /Cannot run "no-such-program-xyz": no such program/);
  assert.ok(!r.stderr.includes("ENOENT") && !r.stderr.includes("    at "));
});

Deno.test("every {} in every argument is replaced, {}{} twice", async () => {
  const r = await runCli(
    ["rpc", "--http", "--rpcUrl", anvil.url, "--assetId", "ETH", "--", "echo", "{}{}", "x={}"],
    { env: creds() },
  );
  assert.equal(r.code, 0);
  const m = r.stdout.trim().match(/^(http:\/\/127\.0\.0\.1:\d+\/[0-9a-f]{32})\1 x=\1$/);
  assert.ok(m, r.stdout);
});

Deno.test("IPC mode: every {} is the socket path, the same as SERVICE_JSON_RPC_ADDRESS", async () => {
  const r = await runCli(
    [
      "rpc",
      "--rpcUrl",
      anvil.url,
      "--assetId",
      "ETH",
      "--",
      "sh",
      "-c",
      'echo "$1"; echo "$SERVICE_JSON_RPC_ADDRESS"',
      "sh",
      "{}{} x={}",
    ],
    { env: creds() },
  );
  assert.equal(r.code, 0, r.stderr);
  const [args, env] = r.stdout.trim().split("\n");
  assert.match(env, /^\/.+\/rpc\.ipc$/);
  assert.equal(args, `${env}${env} x=${env}`);
  // and a client given {} reaches the node through it
  const cast = await runCli(
    [
      "rpc",
      "--rpcUrl",
      anvil.url,
      "--assetId",
      "ETH",
      "--",
      foundryBin("cast"),
      "chain-id",
      "--rpc-url",
      "{}",
    ],
    { env: creds() },
  );
  assert.equal(cast.code, 0, cast.stderr);
  assert.equal(cast.stdout.trim(), "31337");
});

Deno.test("no secret in the child's environment or arguments; the address is given", async () => {
  const r = await runCli(
    ["rpc", "--http", "--rpcUrl", anvil.url, "--assetId", "ETH", "--", "env"],
    { env: creds() },
  );
  assert.equal(r.code, 0);
  assert.ok(!r.stdout.includes("SERVICE_API_KEY"));
  assert.ok(!r.stdout.includes("SERVICE_API_PRIVATE_KEY_PATH"));
  assert.ok(!r.stdout.includes("secret-api-key-123"));
  assert.ok(!r.stdout.includes(keyPath));
  assert.match(r.stdout, /^SERVICE_JSON_RPC_ADDRESS=http:\/\/127\.0\.0\.1:\d+\/[0-9a-f]{32}$/m);
  // the key given as a flag does not reach the child either
  const flagged = await runCli(
    [
      "rpc",
      "--apiKey",
      "flag-key-456",
      "--privateKey",
      keyPath,
      "--apiBaseUrl",
      "http://127.0.0.1:9",
      "--rpcUrl",
      anvil.url,
      "--assetId",
      "ETH",
      "--http",
      "--",
      "sh",
      "-c",
      'env; echo "ARGS $0 $@"',
      "{}",
    ],
  );
  assert.equal(flagged.code, 0);
  assert.ok(!flagged.stdout.includes("flag-key-456"));
});

Deno.test("cast reaches the node through the bridge over IPC and HTTP; the socket is removed after", async () => {
  const cast = foundryBin("cast");
  const overIpc = await runCli(
    [
      "rpc",
      "--rpcUrl",
      anvil.url,
      "--assetId",
      "ETH",
      "--",
      "sh",
      "-c",
      `"${cast}" chain-id --rpc-url "$SERVICE_JSON_RPC_ADDRESS" && echo "$SERVICE_JSON_RPC_ADDRESS"`,
    ],
    { env: creds() },
  );
  assert.equal(overIpc.code, 0, overIpc.stderr);
  const [chain, path] = overIpc.stdout.trim().split("\n");
  assert.equal(chain, "31337");
  await assert.rejects(Deno.lstat(path));
  const overHttp = await runCli(
    [
      "rpc",
      "--http",
      "--rpcUrl",
      anvil.url,
      "--assetId",
      "ETH",
      "--",
      cast,
      "block-number",
      "--rpc-url",
      "{}",
    ],
    { env: creds() },
  );
  assert.equal(overHttp.code, 0, overHttp.stderr);
  assert.match(overHttp.stdout.trim(), /^\d+$/);
});

Deno.test("SIGTERM to the bridge is forwarded: the child dies and the exit code is 143", async () => {
  const child = mainCommand(
    [
      "rpc",
      "--rpcUrl",
      anvil.url,
      "--assetId",
      "ETH",
      "--",
      "sh",
      "-c",
      "echo $$; exec sleep 30",
    ],
    { env: creds() },
  ).spawn();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let out = "";
  while (!out.includes("\n")) {
    const { value, done } = await reader.read();
    if (done) break;
    out += value;
  }
  const pid = Number(out.trim());
  assert.ok(pid > 0);
  child.kill("SIGTERM");
  const status = await child.status;
  await reader.cancel();
  await child.stderr.cancel();
  assert.equal(status.code, 143);
  assert.equal(status.signal, null, "the bridge exits by itself with the child's 128+N");
  // the child is gone (no orphan)
  const alive = await new Deno.Command("kill", { args: ["-0", String(pid)], stderr: "null" })
    .output();
  assert.equal(alive.code, 1);
});

Deno.test("a child killed by a signal gives 128+N", async () => {
  const r = await runCli(
    ["rpc", "--rpcUrl", anvil.url, "--assetId", "ETH", "--", "sh", "-c", "kill -KILL $$"],
    { env: creds() },
  );
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
  const child = mainCommand(
    [
      "rpc",
      "--rpcUrl",
      anvil.url,
      "--assetId",
      "ETH",
      "--",
      "sh",
      "-c",
      "sleep 97 & echo $!; wait",
    ],
    { env: creds() },
  ).spawn();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let out = "";
  while (!out.includes("\n")) {
    const { value, done } = await reader.read();
    if (done) break;
    out += value;
  }
  const grandchild = Number(out.trim());
  assert.ok(grandchild > 0, out);
  assert.ok(await running(grandchild), "the grandchild runs before the signal");
  child.kill("SIGTERM");
  const status = await child.status;
  await reader.cancel();
  await child.stderr.cancel();
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
  const inner = [Deno.execPath(), "run", "-A", `${ROOT}main.ts`, "rpc", "--rpcUrl", anvil.url]
    .concat(["--assetId", "ETH", "--", "sh", "-c", "ps -o tty= -p $$"])
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
  const r = await runCli(
    [
      "rpc",
      "--rpcUrl",
      anvil.url,
      "--assetId",
      "ETH",
      "--",
      "sh",
      "-c",
      'ps -o pid=,pgid= -p $$; echo "$PPID"; ps -o pgid= -p "$PPID"',
    ],
    { env: creds() },
  );
  assert.equal(r.code, 0, r.stderr);
  const [ids, _bridgePid, bridgePgid] = r.stdout.trim().split("\n").map((l) => l.trim());
  const [pid, pgid] = ids.split(/\s+/);
  assert.equal(pgid, pid, "the child leads its own process group");
  assert.notEqual(bridgePgid, pgid);
});
