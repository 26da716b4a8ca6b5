/**
 * The whole stack for end-to-end `rpc` tests: a real anvil, the emulator
 * (the platform stand-in, in this process) with fresh credentials, and
 * bridges started as a user starts them (`main.ts rpc`, no child).
 *
 * @module
 */

import { type Anvil, startAnvil } from "./tools.ts";
import { type BridgeProcess, startBridgeProcess } from "./rpc.ts";
import { waitFor } from "./wait_for.ts";
import { startEmulator } from "../../lib/emulator/mod.ts";

/** anvil's first funded account: the emulator's vault account 0 (default mnemonic). */
export const VAULT0 = "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266";
/** anvil's second account: vault account 1. */
export const VAULT1 = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";

/** A running stack. */
export interface Stack {
  anvil: Anvil;
  emulator: Awaited<ReturnType<typeof startEmulator>>;
  /** The bridge's connection flags for this emulator and anvil. */
  flags: string[];
  /** Environment with the credentials as variables (for child-env checks). */
  env: Record<string, string>;
  /** Starts a bridge with extra flags (no child). */
  bridge(extra?: string[]): Promise<BridgeProcess>;
  stop(): Promise<void>;
}

/** Starts anvil + emulator (`emulator`: more of its options, e.g. custody delays). */
export async function startStack(
  anvilArgs: string[] = [],
  emulatorOptions: Partial<Parameters<typeof startEmulator>[0]> = {},
): Promise<Stack> {
  const anvil = await startAnvil(anvilArgs);
  const emulator = await startEmulator({ rpcUrl: anvil.url, log: () => {}, ...emulatorOptions });
  const flags = [
    "--apiKey",
    emulator.apiKey,
    "--privateKey",
    emulator.privateKeyPath,
    "--apiBaseUrl",
    emulator.apiBaseUrl,
    "--rpcUrl",
    anvil.url,
  ];
  const bridges: BridgeProcess[] = [];
  return {
    anvil,
    emulator,
    flags,
    env: {
      SERVICE_API_KEY: emulator.apiKey,
      SERVICE_API_PRIVATE_KEY_PATH: emulator.privateKeyPath,
      SERVICE_API_BASE_URL: emulator.apiBaseUrl,
      SERVICE_RPC_URL: anvil.url,
    },
    async bridge(extra = []) {
      const b = await startBridgeProcess([...flags, ...extra]);
      bridges.push(b);
      return b;
    },
    async stop() {
      await Promise.all(bridges.map((b) => b.stop()));
      await emulator.stop();
      await anvil.stop();
    },
  };
}

/** Calls anvil directly. */
export async function anvilCall(url: string, method: string, params: unknown[] = []) {
  const r = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
  });
  const j = await r.json();
  if (j.error) throw new Error(`${method}: ${j.error.message}`);
  return j.result;
}

/**
 * `promise`, with one block mined on the anvil at `anvilUrl` if it has not settled within 3 s.
 * ethers' `wait()` (and `waitForDeployment()`) checks the receipt once, then waits for the next
 * block: when its check came in the moment between anvil accepting the transaction and mining
 * it, a node that mines only on demand (anvil here; a real chain mines on) gives no next block,
 * and `wait()` never returns (seen in CI: a run stuck for minutes, the receipt on chain).
 */
export async function nextBlockIfStuck<T>(anvilUrl: string, promise: Promise<T>): Promise<T> {
  let mined: Promise<unknown> | undefined;
  const timer = setTimeout(() => mined = anvilCall(anvilUrl, "evm_mine", []), 3_000);
  try {
    return await promise;
  } finally {
    clearTimeout(timer);
    await mined;
  }
}

/**
 * The transaction `hash` as anvil knows it, waiting (up to 15 s) until it is there: the bridge
 * answers a send with the hash once the platform has signed it (BROADCASTING), which may be a
 * moment before the platform's broadcast reaches the node — as on the real platform, whose
 * nodes are not the caller's. Throws when it never appears.
 */
export function anvilTransaction(url: string, hash: string) {
  return waitFor(
    `transaction ${hash} to reach the node`,
    async () => await anvilCall(url, "eth_getTransactionByHash", [hash]) ?? undefined,
    15_000,
    20,
  );
}
