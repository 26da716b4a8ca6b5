/**
 * The seed's Foundry example as a user runs it: a copy of tests/fixtures/forge
 * in a temporary directory and the command line
 * `forge script script/Deploy.s.sol --broadcast --unlocked --slow --sender <vault 0> --rpc-url {}`
 * (solc is the project's solcjs shim; forge cannot download one here).
 *
 * @module
 */

import { foundryBin, ROOT } from "./tools.ts";
import { VAULT0 } from "./rpc_stack.ts";

/** A temporary copy of the forge fixture. */
export interface ForgeProject {
  /** The project's directory (forge's working directory). */
  dir: string;
  /**
   * The forge command line (program first), `extra` before its last two arguments,
   * `--rpc-url {}` (or `rpcUrl`: another address than the bridge's own).
   */
  command(extra?: string[], rpcUrl?: string): string[];
  /** forge's record of the last broadcast (`broadcast/Deploy.s.sol/31337/run-latest.json`). */
  lastRun(): Promise<{
    transactions: { hash: string; contractAddress?: string; transaction: { nonce: string } }[];
    receipts: { status: string; from: string }[];
  }>;
  /** Removes the directory. */
  remove(): Promise<void>;
}

/** Copies the fixture to a fresh temporary directory. */
export async function forgeProject(): Promise<ForgeProject> {
  const fixture = `${ROOT}tests/fixtures/forge/`;
  const dir = await Deno.makeTempDir({ prefix: "forge-" });
  for (const p of ["foundry.toml", "src/Counter.sol", "script/Deploy.s.sol"]) {
    await Deno.mkdir(`${dir}/${p.split("/").slice(0, -1).join("/")}`, { recursive: true });
    await Deno.copyFile(`${fixture}${p}`, `${dir}/${p}`);
  }
  return {
    dir,
    command: (extra = [], rpcUrl = "{}") => [
      foundryBin("forge"),
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
      ...extra,
      "--rpc-url",
      rpcUrl,
    ],
    async lastRun() {
      return JSON.parse(
        await Deno.readTextFile(`${dir}/broadcast/Deploy.s.sol/31337/run-latest.json`),
      );
    },
    remove: () => Deno.remove(dir, { recursive: true }).catch(() => {}),
  };
}
