/**
 * The examples of `service rpc --help` run as printed: each line is given to
 * `sh -c` with `service` on PATH (a wrapper around `main.ts`), cast on PATH
 * and the environment a user would have (`SERVICE_RPC_URL` pointing at a
 * local anvil serving chain 11155111 instead of the public Sepolia node, the
 * credentials as variables). Only the fixed node address of the `--emulator`
 * example is replaced by this run's anvil; the `forge script` example names
 * the user's own script and sender (`0x...`) and is run, with a real script,
 * by `tests/e2e/rpc_clients_test.ts`.
 */
import assert from "node:assert/strict";
import { type Anvil, foundryBin, ROOT, runCli, startAnvil } from "../support/tools.ts";
import { tempPrivateKey } from "../support/rpc.ts";
import { cleanEnv, mainCommand } from "../support/main_command.ts";

let sepolia: Anvil;
let local: Anvil;
let keyPath: string;
let bin: string;
let examples: string[];

Deno.test.beforeAll(async () => {
  [sepolia, local] = await Promise.all([startAnvil(["--chain-id", "11155111"]), startAnvil()]);
  keyPath = await tempPrivateKey();
  bin = await Deno.makeTempDir({ prefix: "service-bin-" });
  await Deno.writeTextFile(
    `${bin}/service`,
    `#!/bin/sh\nexec "${Deno.execPath()}" run -A "${ROOT}main.ts" "$@"\n`,
  );
  await Deno.chmod(`${bin}/service`, 0o755);
  const help = await runCli(["rpc", "--help"]);
  assert.equal(help.code, 0);
  examples = help.stdout.split("\nExamples:\n")[1].split("\n").map((l) => l.trim()).filter(Boolean);
  assert.ok(examples.length >= 4, help.stdout);
});

Deno.test.afterAll(async () => {
  await Promise.all([sepolia?.stop(), local?.stop()]);
  await Deno.remove(keyPath).catch(() => {});
  await Deno.remove(bin, { recursive: true }).catch(() => {});
});

function env(): Record<string, string> {
  const castDir = foundryBin("cast").replace(/\/[^/]+$/, "");
  return cleanEnv({
    PATH: `${bin}:${castDir}:${Deno.env.get("PATH") ?? ""}`,
    SERVICE_RPC_URL: sepolia.url,
    SERVICE_API_KEY: "example-key",
    SERVICE_API_PRIVATE_KEY_PATH: keyPath,
    SERVICE_API_BASE_URL: "http://127.0.0.1:9",
  });
}

async function sh(line: string): Promise<{ code: number; stdout: string; stderr: string }> {
  const out = await new Deno.Command("sh", {
    args: ["-c", line],
    clearEnv: true,
    env: env(),
    stdin: "null",
    signal: AbortSignal.timeout(60_000),
  }).output();
  const dec = new TextDecoder();
  return { code: out.code, stdout: dec.decode(out.stdout), stderr: dec.decode(out.stderr) };
}

Deno.test("the Sepolia examples with a child (IPC, {} and $SERVICE_JSON_RPC_ADDRESS) succeed as printed", async () => {
  const lines = examples.filter((e) => e.startsWith("service rpc --chainId 11155111 -- "));
  assert.ok(lines.length >= 2, examples.join("\n"));
  for (const line of lines) {
    assert.ok(!line.includes("--http"), "these are the IPC examples");
    const r = await sh(line);
    assert.equal(r.code, 0, `${line}\n${r.stderr}`);
    const value = r.stdout.trim();
    if (line.includes("chain-id")) assert.equal(value, "11155111", line);
    else assert.match(value, /^\d+$/, line);
  }
});

Deno.test("the --emulator example succeeds (with this run's anvil as the node)", async () => {
  const line = examples.find((e) => e.includes("--emulator"));
  assert.ok(line);
  assert.ok(line.includes("http://127.0.0.1:8545"));
  const r = await sh(line.replace("http://127.0.0.1:8545", local.url));
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout.trim(), /^\d+$/);
});

Deno.test("the example without a child prints the address it promises and runs until a signal", async () => {
  const line = examples.find((e) => e.includes("runs until Ctrl-C"));
  assert.ok(line);
  const [command, comment] = line.split("#");
  const words = command.trim().split(/\s+/);
  assert.equal(words[0], "service");
  const child = mainCommand(words.slice(1), { env: env(), stderr: "null" }).spawn();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let out = "";
  while (!out.includes("\n")) {
    const { value, done } = await reader.read();
    if (done) break;
    out += value;
  }
  const promised = comment.match(/prints (\S+?),? /)![1]; // http://127.0.0.1:PORT/TOKEN
  const pattern = new RegExp(
    "^" + promised.replaceAll(".", "\\.").replace("PORT", "\\d+").replace("TOKEN", "[0-9a-f]{32}") +
      "$",
  );
  assert.match(out.split("\n")[0], pattern);
  child.kill("SIGINT");
  const status = await child.status;
  await reader.cancel();
  assert.equal(status.code, 0);
});
