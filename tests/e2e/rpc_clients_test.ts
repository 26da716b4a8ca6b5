/**
 * Real clients against anvil + emulator + bridge, over HTTP and IPC: cast,
 * viem, ethers, web3.js, curl (the seed's own eth_accounts example). Every
 * signature is recovered to the vault address; every send is checked on chain.
 */
import assert from "node:assert/strict";
import { foundryBin, runCli } from "../support/tools.ts";
import { type BridgeProcess, httpRpc, IpcClient } from "../support/rpc.ts";
import { waitFor } from "../support/wait_for.ts";
import {
  anvilCall,
  anvilTransaction,
  nextBlockIfStuck,
  type Stack,
  startStack,
  VAULT0,
  VAULT1,
} from "../support/rpc_stack.ts";

let stack: Stack;
let http: BridgeProcess;
let ipc: BridgeProcess;

Deno.test.beforeAll(async () => {
  stack = await startStack();
  [http, ipc] = await Promise.all([
    stack.bridge(["--http", "--vaultAccountIds", "0,1"]),
    stack.bridge(["--vaultAccountIds", "0,1"]),
  ]);
});

Deno.test.afterAll(async () => {
  await stack?.stop();
});

const TYPED = {
  domain: {
    name: "Ether Mail",
    version: "1",
    chainId: 31337,
    verifyingContract: "0xCcCCccccCCCCcCCCCCCcCcCccCcCCCcCcccccccC",
  },
  types: {
    Person: [{ name: "name", type: "string" }, { name: "wallet", type: "address" }],
    Mail: [
      { name: "from", type: "Person" },
      { name: "to", type: "Person" },
      { name: "contents", type: "string" },
    ],
  },
  primaryType: "Mail",
  message: {
    from: { name: "Cow", wallet: "0xCD2a3d9F938E13CD947Ec05AbC7FE734Df8DD826" },
    to: { name: "Bob", wallet: "0xbBbBBBBbbBBBbbbBbbBbbbbBBbBbbbbBbBbbBBbB" },
    contents: "Hello, Bob!",
  },
} as const;

async function cmd(
  program: string,
  args: string[],
): Promise<{ code: number; out: string; err: string }> {
  const o = await new Deno.Command(program, { args, stdout: "piped", stderr: "piped" }).output();
  const d = new TextDecoder();
  return { code: o.code, out: d.decode(o.stdout).trim(), err: d.decode(o.stderr) };
}

Deno.test("curl with the seed's eth_accounts example returns vault account 0", async () => {
  const b = await stack.bridge(["--http", "--vaultAccountIds", "0"]);
  const r = await cmd("curl", [
    "-s",
    "-X",
    "POST",
    "-H",
    "Content-Type: application/json",
    "--data",
    '{"method":"eth_accounts","id":1,"jsonrpc":"2.0"}',
    b.address,
  ]);
  assert.equal(r.code, 0);
  const j = JSON.parse(r.out);
  assert.equal(j.id, 1);
  assert.deepEqual(j.result.map((a: string) => a.toLowerCase()), [VAULT0.toLowerCase()]);
  // with one account exposed, "from" may be left out
  const sent = await httpRpc(b.address, {
    jsonrpc: "2.0",
    id: 2,
    method: "eth_sendTransaction",
    params: [{ to: VAULT1, value: "0x5" }],
  });
  const hash = (sent.json() as { result: string }).result;
  const tx = await anvilTransaction(stack.anvil.url, hash);
  assert.equal(tx.from.toLowerCase(), VAULT0.toLowerCase());
  // with two exposed, it may not
  const ambiguous = await httpRpc(http.address, {
    jsonrpc: "2.0",
    id: 3,
    method: "eth_sendTransaction",
    params: [{ to: VAULT1, value: "0x5" }],
  });
  assert.equal((ambiguous.json() as { error: { code: number } }).error.code, -32602);
});

Deno.test("cast: block number, balance, and send --unlocked from vault 0 (HTTP and IPC)", async () => {
  const cast = foundryBin("cast");
  for (const url of [http.address, ipc.address]) {
    const bn = await cmd(cast, ["block-number", "--rpc-url", url]);
    assert.equal(bn.code, 0, bn.err);
    assert.equal(bn.out, String(Number(await anvilCall(stack.anvil.url, "eth_blockNumber"))));
    const bal = await cmd(cast, ["balance", VAULT1, "--rpc-url", url]);
    assert.equal(
      bal.out,
      BigInt(await anvilCall(stack.anvil.url, "eth_getBalance", [VAULT1, "latest"])).toString(),
    );
    const before = BigInt(bal.out);
    const send = await cmd(cast, [
      "send",
      "--unlocked",
      "--from",
      VAULT0,
      VAULT1,
      "--value",
      "12345",
      "--rpc-url",
      url,
      "--json",
    ]);
    assert.equal(send.code, 0, send.err);
    const receipt = JSON.parse(send.out);
    assert.equal(receipt.status, "0x1");
    assert.equal(receipt.from.toLowerCase(), VAULT0.toLowerCase());
    const after = BigInt(await anvilCall(stack.anvil.url, "eth_getBalance", [VAULT1, "latest"]));
    assert.equal(after - before, 12345n);
  }
});

Deno.test("viem over HTTP and IPC: send, personal_sign and EIP-712 recover to the vault address", async () => {
  const viem = await import("viem");
  const { ipc: ipcTransport } = await import("viem/node");
  const { foundry } = await import("viem/chains");
  for (const transport of [viem.http(http.address), ipcTransport(ipc.address)]) {
    const wallet = viem.createWalletClient({ account: VAULT0, chain: foundry, transport });
    const pub = viem.createPublicClient({ chain: foundry, transport });
    assert.deepEqual(
      (await wallet.getAddresses()).map((a) => a.toLowerCase()),
      [VAULT0, VAULT1].map((a) => a.toLowerCase()),
    );
    const hash = await wallet.sendTransaction({ to: VAULT1, value: 7n });
    const receipt = await pub.waitForTransactionReceipt({ hash });
    assert.equal(receipt.status, "success");
    assert.equal(receipt.from.toLowerCase(), VAULT0.toLowerCase());
    const signature = await wallet.signMessage({ message: "hello from viem" });
    assert.equal(
      (await viem.recoverMessageAddress({ message: "hello from viem", signature })).toLowerCase(),
      VAULT0.toLowerCase(),
    );
    const typedSig = await wallet.signTypedData(TYPED);
    assert.equal(
      (await viem.recoverTypedDataAddress({ ...TYPED, signature: typedSig })).toLowerCase(),
      VAULT0.toLowerCase(),
    );
  }
});

Deno.test("ethers over HTTP and IPC: send, signMessage and signTypedData recover to the vault address", async () => {
  const ethers = await import("ethers");
  const providers = [
    new ethers.JsonRpcProvider(http.address, 31337, { staticNetwork: true }),
    new ethers.IpcSocketProvider(ipc.address, 31337, { staticNetwork: true }),
  ];
  try {
    for (const provider of providers) {
      const signer = await provider.getSigner(VAULT0);
      const tx = await signer.sendTransaction({ to: VAULT1, value: 9n });
      const receipt = await nextBlockIfStuck(stack.anvil.url, tx.wait());
      assert.equal(receipt?.status, 1);
      const sig = await signer.signMessage("hello from ethers");
      assert.equal(
        ethers.verifyMessage("hello from ethers", sig).toLowerCase(),
        VAULT0.toLowerCase(),
      );
      const { Mail, Person } = TYPED.types;
      const typedSig = await signer.signTypedData(TYPED.domain, {
        Mail: [...Mail],
        Person: [...Person],
      }, TYPED.message);
      assert.equal(
        ethers.verifyTypedData(
          TYPED.domain,
          { Mail: [...Mail], Person: [...Person] },
          TYPED.message,
          typedSig,
        ).toLowerCase(),
        VAULT0.toLowerCase(),
      );
    }
  } finally {
    for (const p of providers) p.destroy();
  }
});

Deno.test("web3.js: accounts, send, and eth_sign with its own [address, data] order", async () => {
  const { Web3 } = await import("web3");
  const web3 = new Web3(http.address);
  const accounts = await web3.eth.getAccounts();
  assert.equal(accounts[0].toLowerCase(), VAULT0.toLowerCase());
  const receipt = await web3.eth.sendTransaction({ from: VAULT0, to: VAULT1, value: 11n });
  assert.equal(receipt.status, 1n);
  // web3.eth.sign sends eth_sign [address, data]
  const data = web3.utils.utf8ToHex("hello from web3");
  const sig = await web3.eth.sign(data, VAULT0) as string;
  const viem = await import("viem");
  assert.equal(
    (await viem.recoverMessageAddress({
      message: { raw: data as `0x${string}` },
      signature: sig as `0x${string}`,
    })).toLowerCase(),
    VAULT0.toLowerCase(),
  );
});

Deno.test("eth_sign takes [address, data]; personal_sign takes [data, address]; both sign the same", async () => {
  const data = "0x68656c6c6f";
  const a = await httpRpc(http.address, {
    jsonrpc: "2.0",
    id: 1,
    method: "eth_sign",
    params: [VAULT0, data],
  });
  const b = await httpRpc(http.address, {
    jsonrpc: "2.0",
    id: 2,
    method: "personal_sign",
    params: [data, VAULT0],
  });
  const sa = (a.json() as { result: `0x${string}` }).result;
  const sb = (b.json() as { result: `0x${string}` }).result;
  const viem = await import("viem");
  assert.equal(
    (await viem.recoverMessageAddress({ message: { raw: data }, signature: sa })).toLowerCase(),
    VAULT0.toLowerCase(),
  );
  assert.equal(
    (await viem.recoverMessageAddress({ message: { raw: data }, signature: sb })).toLowerCase(),
    VAULT0.toLowerCase(),
  );
  // eth_signTypedData_v3 with a JSON string and eth_signTypedData with an object
  for (
    const [method, typed] of [["eth_signTypedData_v3", JSON.stringify(TYPED)], [
      "eth_signTypedData",
      TYPED,
    ]] as const
  ) {
    const t = await httpRpc(http.address, {
      jsonrpc: "2.0",
      id: 4,
      method,
      params: [VAULT0, typed],
    });
    const sig = (t.json() as { result: `0x${string}` }).result;
    assert.equal(
      (await viem.recoverTypedDataAddress({ ...TYPED, signature: sig })).toLowerCase(),
      VAULT0.toLowerCase(),
      method,
    );
  }
  // typed data for another chain is refused before anything is signed
  const otherChain = await httpRpc(http.address, {
    jsonrpc: "2.0",
    id: 5,
    method: "eth_signTypedData_v4",
    params: [VAULT0, JSON.stringify({ ...TYPED, domain: { ...TYPED.domain, chainId: 1 } })],
  });
  assert.equal((otherChain.json() as { error: { code: number } }).error.code, -32602);
  // personal_sign's order given to eth_sign is refused, not silently signed
  const wrong = await httpRpc(http.address, {
    jsonrpc: "2.0",
    id: 3,
    method: "eth_sign",
    params: [data, VAULT0],
  });
  assert.equal((wrong.json() as { error: { code: number } }).error.code, -32602);
});

Deno.test("eth_signTransaction is refused with 4200 and says why", async () => {
  const r = await httpRpc(http.address, {
    jsonrpc: "2.0",
    id: 1,
    method: "eth_signTransaction",
    params: [{ from: VAULT0, to: VAULT1, value: "0x1" }],
  });
  const e = (r.json() as { error: { code: number; message: string } }).error;
  assert.equal(e.code, 4200);
  assert.match(e.message, /custody .* signs and broadcasts/);
});

Deno.test("a send from an address that is not exposed is refused (4100) and nothing is created", async () => {
  const r = await httpRpc(http.address, {
    jsonrpc: "2.0",
    id: 1,
    method: "eth_sendTransaction",
    params: [{ from: "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC", to: VAULT1, value: "0x1" }],
  });
  assert.equal((r.json() as { error: { code: number } }).error.code, 4100);
});

Deno.test("a caller's chainId for another chain is refused; a stale nonce is refused", async () => {
  const other = await httpRpc(http.address, {
    jsonrpc: "2.0",
    id: 1,
    method: "eth_sendTransaction",
    params: [{ from: VAULT0, to: VAULT1, value: "0x1", chainId: "0x1" }],
  });
  assert.equal((other.json() as { error: { code: number } }).error.code, -32602);
  const stale = await httpRpc(http.address, {
    jsonrpc: "2.0",
    id: 2,
    method: "eth_sendTransaction",
    params: [{ from: VAULT0, to: VAULT1, value: "0x1", nonce: "0x0" }],
  });
  assert.match((stale.json() as { error: { message: string } }).error.message, /nonce too low/);
});

async function forgeThroughBridge(transport: "http" | "ipc", slow = true): Promise<void> {
  const fixture = new URL("../fixtures/forge/", import.meta.url).pathname;
  const work = await Deno.makeTempDir({ prefix: "forge-" });
  try {
    for (const p of ["foundry.toml", "src/Counter.sol", "script/Deploy.s.sol"]) {
      await Deno.mkdir(`${work}/${p.split("/").slice(0, -1).join("/")}`, { recursive: true });
      await Deno.copyFile(`${fixture}${p}`, `${work}/${p}`);
    }
    const solc = new URL("../../scripts/solc/solc", import.meta.url).pathname;
    const forge = [
      foundryBin("forge"),
      "script",
      "script/Deploy.s.sol",
      "--use",
      solc,
      "--offline",
      "--broadcast",
      "--unlocked",
      ...(slow ? ["--slow"] : []),
      "--sender",
      VAULT0,
      "--rpc-url",
    ];
    // One command line for both transports: {} becomes the http:// address or the socket path.
    const child = [...forge, "{}"];
    const r = await runCli([
      "rpc",
      ...stack.flags,
      ...(transport === "http" ? ["--http"] : []),
      "--vaultAccountIds",
      "0",
      "--",
      ...child,
    ], { timeoutMs: 120_000, cwd: work });
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.match(r.stdout, /ONCHAIN EXECUTION COMPLETE & SUCCESSFUL/);
    const run = JSON.parse(
      await Deno.readTextFile(`${work}/broadcast/Deploy.s.sol/31337/run-latest.json`),
    );
    assert.equal(run.receipts.length, 3);
    for (const receipt of run.receipts) {
      assert.equal(receipt.status, "0x1");
      assert.equal(receipt.from.toLowerCase(), VAULT0.toLowerCase());
    }
    // each transaction landed with the nonce forge asked for (the deploy's address depends on it)
    for (const t of run.transactions as { hash: string; transaction: { nonce: string } }[]) {
      const onChain = await anvilTransaction(stack.anvil.url, t.hash);
      assert.equal(BigInt(onChain.nonce), BigInt(t.transaction.nonce), t.hash);
    }
    const address = run.transactions[0].contractAddress;
    const number = await anvilCall(stack.anvil.url, "eth_call", [
      { to: address, data: "0x8381f58a" }, // number()
      "latest",
    ]);
    assert.equal(BigInt(number), 42n);
  } finally {
    await Deno.remove(work, { recursive: true }).catch(() => {});
  }
}

Deno.test("forge script --broadcast --unlocked --slow --rpc-url {} deploys and calls a contract (HTTP)", async () => {
  await forgeThroughBridge("http");
});

Deno.test("forge script --broadcast --unlocked --slow --rpc-url {} deploys and calls a contract over IPC", async () => {
  await forgeThroughBridge("ipc");
});

Deno.test("forge script --broadcast --unlocked without --slow (the three sent at once) lands them in nonce order (HTTP)", async () => {
  await forgeThroughBridge("http", false);
});

Deno.test("forge script --broadcast --unlocked without --slow lands them in nonce order over IPC", async () => {
  await forgeThroughBridge("ipc", false);
});

Deno.test("--emulator: zero-setup rehearsal with fresh credentials around cast", async () => {
  const r = await runCli([
    "rpc",
    "--emulator",
    "--rpcUrl",
    stack.anvil.url,
    "--http",
    "--",
    foundryBin("cast"),
    "rpc",
    "eth_accounts",
    "--rpc-url",
    "{}",
  ]);
  assert.equal(r.code, 0, r.stderr);
  const accounts = JSON.parse(r.stdout) as string[];
  assert.equal(accounts.length, 10);
  assert.equal(accounts[0].toLowerCase(), VAULT0.toLowerCase());
  const missing = await runCli(["rpc", "--emulator", "--", "true"]);
  assert.equal(missing.code, 2);
  assert.match(missing.stderr, /--emulator needs --rpcUrl/);
});

Deno.test("concurrent sends from one account reach the chain in the caller's order", async () => {
  // The first create is slowed down: without serialization the second would overtake it.
  const f = await fetch(`${stack.emulator.adminUrl}/faults`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-api-key": stack.emulator.apiKey },
    body: JSON.stringify({
      kind: "latency",
      ms: 500,
      count: 1,
      path: "/v1/transactions",
      method: "POST",
    }),
  });
  assert.equal(f.status, 201, await f.text());
  const c = await IpcClient.connect(ipc.address);
  try {
    const values = [101, 102, 103, 104, 105];
    for (const [i, v] of values.entries()) {
      await c.write(JSON.stringify({
        jsonrpc: "2.0",
        id: i,
        method: "eth_sendTransaction",
        params: [{ from: VAULT0, to: VAULT1, value: "0x" + v.toString(16) }],
      }));
    }
    const hashes = new Map<number, string>();
    for (let i = 0; i < values.length; i++) {
      const r = JSON.parse((await c.readLine(60_000))!);
      assert.ok(r.result, JSON.stringify(r));
      hashes.set(r.id, r.result);
    }
    const nonces: bigint[] = [];
    for (let i = 0; i < values.length; i++) {
      const tx = await anvilTransaction(stack.anvil.url, hashes.get(i)!);
      assert.equal(BigInt(tx.value), BigInt(values[i]));
      nonces.push(BigInt(tx.nonce));
    }
    for (let i = 1; i < nonces.length; i++) assert.equal(nonces[i], nonces[i - 1] + 1n);
  } finally {
    c.close();
  }
});

Deno.test("the official EIP-1193 provider over `service rpc`: its node calls go through the bridge, its sends are mined", async () => {
  const { FireblocksWeb3Provider: OfficialWeb3Provider } = await import(
    "@fireblocks/fireblocks-web3-provider"
  );
  const bridge = await stack.bridge(["--http", "--vaultAccountIds", "0,1"]);
  const provider = new OfficialWeb3Provider({
    apiKey: stack.emulator.apiKey,
    privateKey: stack.emulator.privateKeyPem,
    apiBaseUrl: stack.emulator.apiBaseUrl,
    rpcUrl: bridge.address, // the node the provider reads from is `service rpc`
    assetId: stack.emulator.assetId,
    vaultAccountIds: [0],
    pollingInterval: 20,
    enhancedErrorHandling: false,
  });
  const rpc = (method: string, params: unknown[] = []) =>
    provider.request({ method, params }) as Promise<string>;
  assert.equal(await rpc("eth_chainId"), "0x7a69");
  assert.deepEqual(
    (await rpc("eth_accounts") as unknown as string[]).map((a) => a.toLowerCase()),
    [VAULT0.toLowerCase()],
  );
  const balance = async () =>
    BigInt(await anvilCall(stack.anvil.url, "eth_getBalance", [VAULT1, "latest"]));
  const before = await balance();
  const hash = await rpc("eth_sendTransaction", [{ from: VAULT0, to: VAULT1, value: "0x2a" }]);
  const receipt = await waitForReceipt(hash);
  assert.equal(receipt.status, "0x1");
  assert.equal(await balance(), before + 42n);
  // the receipt as the provider reads it, through the bridge
  const viaProvider = await provider.request({
    method: "eth_getTransactionReceipt",
    params: [hash],
  }) as { transactionHash: string; status: string };
  assert.equal(viaProvider.transactionHash, hash);
  // with the bridge gone, the provider's node calls fail: they went through it
  assert.equal(await bridge.stop(), 0);
  await assert.rejects(() => rpc("eth_blockNumber"));
});

async function waitForReceipt(hash: string): Promise<{ status: string }> {
  const r = await waitFor(
    `a receipt for ${hash}`,
    () => anvilCall(stack.anvil.url, "eth_getTransactionReceipt", [hash]),
    10_000,
    25,
  );
  return r as { status: string };
}
