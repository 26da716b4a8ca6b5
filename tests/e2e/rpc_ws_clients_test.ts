/**
 * Real push-channel clients against anvil + the emulator + the bridge, over
 * the bridge's WebSocket address and its IPC socket: viem's `webSocket()`
 * transport (getBlockNumber, watchBlocks, watchContractEvent on a contract
 * it deployed through the bridge, sendTransaction), ethers 6
 * `WebSocketProvider` and `IpcSocketProvider` (on("block"), a contract event
 * listener, a send), web3.js over WebSocket, and cast with a ws:// URL. Every
 * transaction is checked to have gone through the platform (the emulator's
 * transaction list grows) and to come from the vault address on chain.
 */
import assert from "node:assert/strict";
import { foundryBin, runCli } from "../support/tools.ts";
import type { BridgeProcess } from "../support/rpc.ts";
import {
  anvilCall,
  anvilTransaction,
  nextBlockIfStuck,
  type Stack,
  startStack,
  VAULT0,
  VAULT1,
} from "../support/rpc_stack.ts";
import { waitFor } from "../support/wait_for.ts";
import { loadCredentials, PlatformClient } from "../../lib/platform/mod.ts";

const COUNTER = JSON.parse(
  await Deno.readTextFile(new URL("../fixtures/contracts/Counter.json", import.meta.url)),
);

let stack: Stack;
let http: BridgeProcess;
let ipc: BridgeProcess;
let ws: string;
let platform: PlatformClient;

Deno.test.beforeAll(async () => {
  stack = await startStack();
  [http, ipc] = await Promise.all([
    // --verbose: the trace shows when a client's eth_subscribe has been answered
    stack.bridge(["--http", "--vaultAccountIds", "0", "--verbose"]),
    stack.bridge(["--vaultAccountIds", "0", "--verbose"]),
  ]);
  ws = http.address.replace(/^http:/, "ws:");
  platform = new PlatformClient(
    await loadCredentials({
      apiKey: stack.emulator.apiKey,
      privateKey: stack.emulator.privateKeyPath,
      apiBaseUrl: stack.emulator.apiBaseUrl,
    }),
  );
});

Deno.test.afterAll(async () => {
  await stack?.stop();
});

/** How many transactions the platform (the emulator) has created. */
async function platformTransactions(): Promise<number> {
  const { data } = await platform.request("GET", "/v1/transactions", {
    operation: "list transactions",
    query: { limit: 500 },
  });
  return (Array.isArray(data) ? data : (data as { data?: unknown[] }).data ?? []).length;
}

async function fromOnChain(hash: string): Promise<string> {
  const tx = await anvilTransaction(stack.anvil.url, hash);
  return String(tx.from).toLowerCase();
}

/** How many eth_subscribe calls `bridge` has answered with a subscription id (from its trace). */
function subscriptions(bridge: BridgeProcess): number {
  return bridge.stderr().split("\n").filter((l) =>
    l.startsWith("<- ") && /"result":"0x[0-9a-f]{32}"/.test(l)
  ).length;
}

/**
 * A callback awaited as an event: `resolve` is the callback, `wait()` its first value; an event
 * that does not come within 60 s fails the test (a lost subscription must not hang the suite).
 */
function signal<T>(): { wait: () => Promise<T>; resolve: (v: T) => void } {
  let resolve!: (v: T) => void;
  const promise = new Promise<T>((r) => resolve = r);
  const wait = async () => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error("the event did not come within 60 s")), 60_000);
    });
    try {
      return await Promise.race([promise, late]);
    } finally {
      clearTimeout(timer);
    }
  };
  return { wait, resolve };
}

Deno.test("viem webSocket(): getBlockNumber, deploy, watchBlocks, watchContractEvent, sendTransaction", async () => {
  const viem = await import("viem");
  const { foundry } = await import("viem/chains");
  const transport = viem.webSocket(ws);
  const pub = viem.createPublicClient({ chain: foundry, transport });
  const wallet = viem.createWalletClient({ account: VAULT0, chain: foundry, transport });
  const platformBefore = await platformTransactions();
  try {
    assert.equal(
      await pub.getBlockNumber({ cacheTime: 0 }),
      BigInt(await anvilCall(stack.anvil.url, "eth_blockNumber")),
    );
    // deploy through the bridge (custody signs)
    const deployHash = await wallet.deployContract({
      abi: COUNTER.abi,
      bytecode: COUNTER.bytecode,
    });
    const deployed = await pub.waitForTransactionReceipt({ hash: deployHash });
    const address = deployed.contractAddress!;
    assert.equal(await fromOnChain(deployHash), VAULT0.toLowerCase());

    // watchBlocks over eth_subscribe newHeads: the next two blocks, in order
    const subscribed = subscriptions(http);
    const blocks: bigint[] = [];
    const twoBlocks = signal<void>();
    const unwatchBlocks = pub.watchBlocks({
      onBlock: (b) => {
        blocks.push(b.number!);
        if (blocks.length === 2) twoBlocks.resolve();
      },
    });
    // watchContractEvent over eth_subscribe logs
    const event = signal<{ by: string; number: bigint }>();
    const unwatchEvent = pub.watchContractEvent({
      address,
      abi: COUNTER.abi,
      eventName: "Incremented",
      onLogs: (logs) =>
        event.resolve((logs[0] as unknown as { args: { by: string; number: bigint } }).args),
    });
    // viem gives no callback for its eth_subscribe calls: the bridge's trace shows them answered
    await waitFor("viem's two eth_subscribe calls answered", () => {
      return subscriptions(http) >= subscribed + 2;
    });
    const incHash = await wallet.writeContract({
      address,
      abi: COUNTER.abi,
      functionName: "increment",
    });
    const args = await event.wait();
    assert.equal(args.by.toLowerCase(), VAULT0.toLowerCase());
    assert.equal(args.number, 1n);
    await anvilCall(stack.anvil.url, "evm_mine");
    await twoBlocks.wait();
    assert.equal(blocks[1], blocks[0] + 1n);
    unwatchBlocks();
    unwatchEvent();
    assert.equal(await fromOnChain(incHash), VAULT0.toLowerCase());

    const before = await pub.getBalance({ address: VAULT1 });
    const sendHash = await wallet.sendTransaction({ to: VAULT1, value: 777n });
    const receipt = await pub.waitForTransactionReceipt({ hash: sendHash });
    assert.equal(receipt.status, "success");
    assert.equal(await pub.getBalance({ address: VAULT1 }), before + 777n);
    assert.equal(await fromOnChain(sendHash), VAULT0.toLowerCase());
    assert.equal(await platformTransactions(), platformBefore + 3, "deploy, increment, send");
  } finally {
    (await transport({ chain: foundry }).value!.getRpcClient()).close();
  }
});

Deno.test("ethers 6 WebSocketProvider and IpcSocketProvider: on('block'), a contract event, a send", async () => {
  const ethers = await import("ethers");
  const providers: [() => InstanceType<typeof ethers.SocketProvider>, BridgeProcess][] = [
    [() => new ethers.WebSocketProvider(ws, 31337, { staticNetwork: true }), http],
    [() => new ethers.IpcSocketProvider(ipc.address, 31337, { staticNetwork: true }), ipc],
  ];
  for (const [make, bridge] of providers) {
    const provider = make();
    const platformBefore = await platformTransactions();
    try {
      const signer = await provider.getSigner(VAULT0);
      const factory = new ethers.ContractFactory(COUNTER.abi, COUNTER.bytecode, signer);
      const contract = await factory.deploy();
      await nextBlockIfStuck(stack.anvil.url, contract.waitForDeployment());

      const subscribed = subscriptions(bridge);
      const block = signal<number>();
      await provider.on("block", (n: number) => block.resolve(n));
      const event = signal<[string, bigint]>();
      await contract.on("Incremented", (by: string, number: bigint) => event.resolve([by, number]));
      await waitFor("ethers' two eth_subscribe calls answered", () => {
        return subscriptions(bridge) >= subscribed + 2;
      });
      const tx = await (contract as unknown as {
        increment(): Promise<{ wait(): Promise<unknown>; hash: string }>;
      })
        .increment();
      await nextBlockIfStuck(stack.anvil.url, tx.wait());
      const [by, number] = await event.wait();
      assert.equal(by.toLowerCase(), VAULT0.toLowerCase());
      assert.equal(number, 1n);
      assert.ok(await block.wait() > 0);
      assert.equal(await fromOnChain(tx.hash), VAULT0.toLowerCase());

      const sent = await signer.sendTransaction({ to: VAULT1, value: 5n });
      const receipt = await nextBlockIfStuck(stack.anvil.url, sent.wait());
      assert.equal(receipt?.status, 1);
      assert.equal(await fromOnChain(sent.hash), VAULT0.toLowerCase());
      assert.equal(await platformTransactions(), platformBefore + 3, "deploy, increment, send");
    } finally {
      // (no removeAllListeners first: ethers would send eth_unsubscribe and then cancel it)
      await provider.destroy();
    }
  }
});

Deno.test("web3.js over WebSocket: block number, newBlockHeaders subscription, a send", async () => {
  const { Web3 } = await import("web3");
  const web3 = new Web3(ws);
  try {
    assert.equal(
      await web3.eth.getBlockNumber(),
      BigInt(await anvilCall(stack.anvil.url, "eth_blockNumber")),
    );
    const sub = await web3.eth.subscribe("newBlockHeaders");
    const header = signal<bigint>();
    sub.on("data", (h) => header.resolve(BigInt(h.number as bigint)));
    const platformBefore = await platformTransactions();
    const receipt = await web3.eth.sendTransaction({ from: VAULT0, to: VAULT1, value: 9n });
    assert.equal(receipt.status, 1n);
    assert.equal(await header.wait(), BigInt(receipt.blockNumber));
    assert.equal(await fromOnChain(String(receipt.transactionHash)), VAULT0.toLowerCase());
    assert.equal(await platformTransactions(), platformBefore + 1);
    await sub.unsubscribe();
  } finally {
    await web3.provider?.disconnect?.();
    (web3.currentProvider as unknown as { disconnect?: () => void })?.disconnect?.();
  }
});

Deno.test("cast with the ws:// address: reads and send --unlocked from the vault", async () => {
  const cast = foundryBin("cast");
  const run = async (args: string[]) => {
    const o = await new Deno.Command(cast, { args, stdout: "piped", stderr: "piped" }).output();
    const d = new TextDecoder();
    return { code: o.code, out: d.decode(o.stdout).trim(), err: d.decode(o.stderr) };
  };
  const bn = await run(["block-number", "--rpc-url", ws]);
  assert.equal(bn.code, 0, bn.err);
  assert.equal(bn.out, String(Number(await anvilCall(stack.anvil.url, "eth_blockNumber"))));
  const chain = await run(["chain-id", "--rpc-url", ws]);
  assert.equal(chain.out, "31337");
  const platformBefore = await platformTransactions();
  const send = await run([
    "send",
    "--unlocked",
    "--from",
    VAULT0,
    VAULT1,
    "--value",
    "4242",
    "--rpc-url",
    ws,
    "--json",
  ]);
  assert.equal(send.code, 0, send.err);
  const receipt = JSON.parse(send.out);
  assert.equal(receipt.status, "0x1");
  assert.equal(await fromOnChain(receipt.transactionHash), VAULT0.toLowerCase());
  assert.equal(await platformTransactions(), platformBefore + 1);
});

Deno.test("the child gets the WebSocket address in SERVICE_JSON_RPC_WS_ADDRESS (with --http only)", async () => {
  const cast = foundryBin("cast");
  const script =
    `"${cast}" block-number --rpc-url "$SERVICE_JSON_RPC_WS_ADDRESS" && echo "ws=$SERVICE_JSON_RPC_WS_ADDRESS http=$SERVICE_JSON_RPC_ADDRESS"`;
  const r = await runCli(
    ["rpc", "--http", "--vaultAccountIds", "0", "--", "sh", "-c", script],
    { env: stack.env },
  );
  assert.equal(r.code, 0, r.stderr);
  const [block, addresses] = r.stdout.trim().split("\n");
  assert.match(block, /^\d+$/);
  const m = addresses.match(/^ws=(ws:\/\/127\.0\.0\.1:\d+\/[0-9a-f]{32}) http=(\S+)$/);
  assert.ok(m, addresses);
  assert.equal(m[1], m[2].replace(/^http:/, "ws:"));
  // over IPC there is no WebSocket address
  const ipcRun = await runCli(
    [
      "rpc",
      "--vaultAccountIds",
      "0",
      "--",
      "sh",
      "-c",
      'echo "ws=${SERVICE_JSON_RPC_WS_ADDRESS-unset}"',
    ],
    { env: stack.env },
  );
  assert.equal(ipcRun.code, 0, ipcRun.stderr);
  assert.equal(ipcRun.stdout.trim(), "ws=unset");
});
