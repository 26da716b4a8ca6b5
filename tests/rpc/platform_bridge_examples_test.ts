/**
 * The examples of the platform's own bridge's `--help` (v0.2.2), run with
 * only the command name (`service-json-rpc`) and the variable prefix
 * (`SERVICE_`) changed, against a real anvil serving chain 5 and the
 * emulator as a separate process (the platform, or with `--apiBaseUrl` the
 * "sandbox workspace"). The placeholders of those examples are filled in as
 * a user would: `<key>`/`<path_or_contents>` with the emulator's
 * credentials, `<chainId>` with 5, `<rpcUrl>` with the anvil, the sandbox
 * URL with the emulator's, the `--sender` address (the example's own vault
 * account) with vault account 0, and `script/NFT.s.sol:MyScript` exists in
 * the project directory the commands run in. The public node a chain id
 * would pick is replaced by `SERVICE_RPC_URL` (no network here).
 */
import assert from "node:assert/strict";
import { foundryBin, ROOT, startAnvil } from "../support/tools.ts";
import { type EmulatorProcess, startEmulatorProcess } from "../support/emulator_process.ts";
import { IpcClient } from "../support/rpc.ts";
import { cleanEnv } from "../support/main_command.ts";
import { anvilCall, VAULT0 } from "../support/rpc_stack.ts";

let anvil: Awaited<ReturnType<typeof startAnvil>>;
let emu: EmulatorProcess;
let bin: string;
let project: string;

Deno.test.beforeAll(async () => {
  anvil = await startAnvil(["--chain-id", "5"]);
  emu = await startEmulatorProcess(anvil.url);
  bin = await Deno.makeTempDir({ prefix: "service-json-rpc-bin-" });
  // What the npm package installs: the command under the bridge's name.
  await Deno.writeTextFile(
    `${bin}/service-json-rpc`,
    `#!/bin/sh\nexec "${Deno.execPath()}" run -A "${ROOT}main.ts" rpc "$@"\n`,
  );
  await Deno.chmod(`${bin}/service-json-rpc`, 0o755);
  project = await Deno.makeTempDir({ prefix: "nft-project-" });
  const fixture = new URL("../fixtures/forge/", import.meta.url).pathname;
  await Deno.mkdir(`${project}/src`);
  await Deno.mkdir(`${project}/script`);
  await Deno.copyFile(`${fixture}src/Counter.sol`, `${project}/src/Counter.sol`);
  const script = await Deno.readTextFile(`${fixture}script/Deploy.s.sol`);
  await Deno.writeTextFile(
    `${project}/script/NFT.s.sol`,
    script.replace("contract Deploy {", "contract MyScript {"),
  );
  const solc = new URL("../../scripts/solc/solc", import.meta.url).pathname;
  await Deno.writeTextFile(
    `${project}/foundry.toml`,
    (await Deno.readTextFile(`${fixture}foundry.toml`)) + `solc = "${solc}"\n`,
  );
});

Deno.test.afterAll(async () => {
  await emu?.stop();
  await anvil?.stop();
  for (const d of [bin, project]) await Deno.remove(d, { recursive: true }).catch(() => {});
});

const KEY = () => emu.ready.apiKey;
const PEM = () => emu.ready.privateKeyPath;

/** The user's shell: tools on PATH, the node address, and `vars`. */
function env(vars: Record<string, string>): Record<string, string> {
  const dir = (tool: "cast" | "forge") => foundryBin(tool).replace(/\/[^/]+$/, "");
  return cleanEnv({
    PATH: `${bin}:${dir("cast")}:${dir("forge")}:${Deno.env.get("PATH") ?? ""}`,
    SERVICE_RPC_URL: anvil.url,
    ...vars,
  });
}

/** The environment of "with environment variables already set". */
function credentials(): Record<string, string> {
  return {
    SERVICE_API_KEY: KEY(),
    SERVICE_API_PRIVATE_KEY_PATH: PEM(),
    SERVICE_API_BASE_URL: emu.ready.apiBaseUrl,
    SERVICE_CHAIN_ID: "5",
  };
}

async function sh(line: string, vars: Record<string, string>) {
  const out = await new Deno.Command("sh", {
    args: ["-c", line],
    cwd: project,
    clearEnv: true,
    env: env(vars),
    stdin: "null",
    signal: AbortSignal.timeout(120_000),
  }).output();
  const dec = new TextDecoder();
  return { code: out.code, stdout: dec.decode(out.stdout), stderr: dec.decode(out.stderr) };
}

/** An example without a child: it serves until stopped; its first line is the socket path. */
async function serves(line: string, vars: Record<string, string>): Promise<void> {
  const child = new Deno.Command("sh", {
    // exec, so that SIGTERM reaches the bridge ("exec env" keeps a VAR=value prefix's meaning)
    args: ["-c", /^[A-Z_]+=/.test(line) ? `exec env ${line}` : `exec ${line}`],
    cwd: project,
    clearEnv: true,
    env: env(vars),
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const errText = new Response(child.stderr).text();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let buf = "";
  while (!buf.includes("\n")) {
    const { value, done } = await reader.read();
    if (done) break;
    buf += value;
  }
  try {
    const path = buf.split("\n")[0].trim();
    assert.ok(path.startsWith("/"), `${line}\nprinted ${JSON.stringify(buf)}`);
    const ipc = await IpcClient.connect(path);
    try {
      await ipc.write(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_chainId" }) + "\n");
      assert.equal(JSON.parse((await ipc.readLine())!).result, "0x5");
      await ipc.write(JSON.stringify({ jsonrpc: "2.0", id: 2, method: "eth_accounts" }) + "\n");
      const accounts = JSON.parse((await ipc.readLine())!).result as string[];
      assert.ok(accounts.map((a) => a.toLowerCase()).includes(VAULT0.toLowerCase()), line);
    } finally {
      ipc.close();
    }
  } finally {
    child.kill("SIGTERM");
    await reader.cancel().catch(() => {});
    const status = await child.status;
    const err = await errText;
    assert.equal(status.code, 0, `${line}\n${err}`);
  }
}

Deno.test("Basic usage: --apiKey <key> --privateKey <path_or_contents> --chainId <chainId> (and --rpcUrl <rpcUrl>)", async () => {
  await serves(`service-json-rpc --apiKey ${KEY()} --privateKey ${PEM()} --chainId 5`, {
    SERVICE_API_BASE_URL: emu.ready.apiBaseUrl,
  });
  await serves(`service-json-rpc --apiKey ${KEY()} --privateKey ${PEM()} --rpcUrl ${anvil.url}`, {
    SERVICE_API_BASE_URL: emu.ready.apiBaseUrl,
  });
});

Deno.test("Using environment variables: SERVICE_API_KEY=… SERVICE_API_PRIVATE_KEY_PATH=… SERVICE_CHAIN_ID=… service-json-rpc", async () => {
  await serves(
    `SERVICE_API_KEY=${KEY()} SERVICE_API_PRIVATE_KEY_PATH=${PEM()} SERVICE_CHAIN_ID=5 service-json-rpc`,
    { SERVICE_API_BASE_URL: emu.ready.apiBaseUrl },
  );
});

Deno.test("Run another tool using --: cast estimate, then forge script --sender --broadcast --unlocked", async () => {
  const estimate = await sh(
    `service-json-rpc --chainId 5 --http -- cast estimate 0x5fe5a74b7628c43514DB077d5E112cf6593ed8D3 "increment()" --rpc-url {}`,
    credentials(),
  );
  assert.equal(estimate.code, 0, estimate.stderr);
  assert.match(estimate.stdout.trim(), /^\d+$/);
  assert.ok(BigInt(estimate.stdout.trim()) >= 21000n);

  // --slow (one transaction at a time), as README shows; the example as written (no --slow, the
  // transactions broadcast at once) is the next test.
  const forge = await sh(
    `service-json-rpc --http -- forge script script/NFT.s.sol:MyScript --sender "${VAULT0}" --broadcast --unlocked --slow --rpc-url {}`,
    credentials(),
  );
  assert.equal(forge.code, 0, forge.stdout + forge.stderr);
  assert.match(forge.stdout, /ONCHAIN EXECUTION COMPLETE & SUCCESSFUL/);
  const run = JSON.parse(
    await Deno.readTextFile(`${project}/broadcast/NFT.s.sol/5/run-latest.json`),
  );
  assert.equal(run.receipts.length, 3);
  for (const r of run.receipts) assert.equal(r.status, "0x1");
  // they went through the platform: the emulator has the transactions
  const listed = await emu.api<{ txHash?: string }[]>("GET", "/v1/transactions", {
    query: { limit: 50 },
  });
  for (const r of run.receipts) {
    assert.ok(listed.data.some((t) => t.txHash === r.transactionHash), r.transactionHash);
  }
});

Deno.test("Run another tool using --: forge script --broadcast --unlocked as written (no --slow), 4 runs: every transaction lands with the nonce forge asked for", async () => {
  // forge broadcasts the script's 3 transactions at once with nonces n, n+1, n+2; they may reach
  // the bridge in any order, and custody numbers an account's transactions in creation order.
  for (let i = 0; i < 4; i++) {
    const forge = await sh(
      `service-json-rpc --http -- forge script script/NFT.s.sol:MyScript --sender "${VAULT0}" --broadcast --unlocked --rpc-url {}`,
      credentials(),
    );
    assert.equal(forge.code, 0, `run ${i + 1}: ${forge.stdout}${forge.stderr}`);
    assert.match(forge.stdout, /ONCHAIN EXECUTION COMPLETE & SUCCESSFUL/);
    const run = JSON.parse(
      await Deno.readTextFile(`${project}/broadcast/NFT.s.sol/5/run-latest.json`),
    ) as {
      transactions: { hash: string; contractAddress?: string; transaction: { nonce: string } }[];
      receipts: { status: string; transactionHash: string }[];
    };
    assert.equal(run.receipts.length, 3);
    for (const [k, t] of run.transactions.entries()) {
      const receipt = run.receipts.find((r) => r.transactionHash === t.hash);
      assert.equal(receipt?.status, "0x1", `run ${i + 1}, transaction ${k}`);
      const onChain = await anvilCall(anvil.url, "eth_getTransactionByHash", [
        receipt!.transactionHash,
      ]);
      assert.equal(BigInt((onChain as { nonce: string }).nonce), BigInt(t.transaction.nonce));
    }
    // the deploy landed at the nonce forge computed its address from, and the calls reached it
    const number = await anvilCall(anvil.url, "eth_call", [
      { to: run.transactions[0].contractAddress, data: "0x8381f58a" }, // number()
      "latest",
    ]);
    assert.equal(BigInt(number as string), 42n);
  }
});

Deno.test("Print requests and responses using --verbose: the same cast estimate, with the bridge's log on stderr", async () => {
  const r = await sh(
    `service-json-rpc --verbose --http -- cast estimate 0x5fe5a74b7628c43514DB077d5E112cf6593ed8D3 "increment()" --rpc-url {}`,
    credentials(),
  );
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout.trim(), /^\d+$/);
  assert.match(r.stderr, /serving chain 5 \(ETH_TEST_5\)/);
});

Deno.test("Using a sandbox workspace with --apiBaseUrl (the emulator stands in for the sandbox)", async () => {
  await serves(
    `service-json-rpc --apiBaseUrl ${emu.ready.apiBaseUrl} --apiKey ${KEY()} --privateKey ${PEM()} --chainId 5`,
    {},
  );
});
