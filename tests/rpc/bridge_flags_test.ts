/**
 * The platform bridge's own flags and variables under `service rpc` (issue
 * 16), against a real anvil and the emulator: each flag and its `SERVICE_`
 * variable is used by a bridge started as a user starts it, and its effect
 * is read where it lands (the emulator's transaction, the platform's request
 * headers, the bridge's address and standard error, the child's
 * environment). Flags win over variables.
 */
import assert from "node:assert/strict";
import { anvilCall, type Stack, startStack, VAULT0, VAULT1 } from "../support/rpc_stack.ts";
import { type BridgeProcess, httpRpc, startBridgeProcess } from "../support/rpc.ts";
import { apiCaller, clientForReady, type ReadyLine } from "../support/emulator_process.ts";
import { waitFor } from "../support/wait_for.ts";
import { foundryBin, runCli } from "../support/tools.ts";
import { VERSION } from "../../lib/version.ts";

let stack: Stack;
let api: ReturnType<typeof apiCaller>;
const started: BridgeProcess[] = [];

Deno.test.beforeAll(async () => {
  stack = await startStack();
  api = apiCaller(await clientForReady(stack.emulator as unknown as ReadyLine));
});

Deno.test.afterAll(async () => {
  await Promise.all(started.map((b) => b.stop()));
  await stack?.stop();
});

/** A bridge with the stack's credentials, `args` and extra environment. */
async function bridge(args: string[], env: Record<string, string> = {}): Promise<BridgeProcess> {
  const b = await startBridgeProcess([...stack.flags, ...args], env);
  started.push(b);
  return b;
}

let id = 0;
async function rpc(address: string, method: string, params: unknown[] = []) {
  const r = await httpRpc(address, { jsonrpc: "2.0", id: ++id, method, params });
  return r.json() as { result?: unknown; error?: { code: number; message: string } };
}

/**
 * Sends and returns the emulator's transaction record of the hash, with the
 * fee level the bridge asked for (`feeLevel`, undefined for explicit fees):
 * the platform's answer has no such field (the SDK's model declares none), so
 * it is read from the emulator's console, which shows the fee asked.
 */
async function sendAndFind(address: string, tx: Record<string, unknown>) {
  const r = await rpc(address, "eth_sendTransaction", [tx]);
  assert.ok(typeof r.result === "string", JSON.stringify(r));
  const list = await api<Record<string, unknown>[]>("GET", "/v1/transactions", {
    query: { limit: 50 },
  });
  const found = list.data.find((t) => t.txHash === r.result);
  assert.ok(found, `no emulator transaction with hash ${r.result}`);
  const consoleUrl = new URL(stack.emulator.consoleUrl);
  const overview = await (await fetch(`${consoleUrl.origin}/console/api/overview`, {
    headers: { "x-console-token": consoleUrl.searchParams.get("token")! },
  })).json();
  const fee = overview.transactions.find((t: { id: unknown }) => t.id === found.id)?.fee;
  const feeLevel: unknown = ["LOW", "MEDIUM", "HIGH"].includes(fee) ? fee : undefined;
  return { ...found, feeLevel } as Record<string, unknown>;
}

function randomAddress(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(20));
  return "0x" + Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

Deno.test("--fallbackFeeLevel sets the fee level of transactions without fee fields; SERVICE_FALLBACK_FEE_LEVEL too; the flag wins; default MEDIUM", async () => {
  const high = await bridge(["--http", "--fallbackFeeLevel", "HIGH"], {
    SERVICE_FALLBACK_FEE_LEVEL: "low",
  });
  assert.equal(
    (await sendAndFind(high.address, { from: VAULT0, to: VAULT1, value: "0x1" })).feeLevel,
    "HIGH",
  );
  const low = await bridge(["--http"], { SERVICE_FALLBACK_FEE_LEVEL: "low" });
  assert.equal(
    (await sendAndFind(low.address, { from: VAULT0, to: VAULT1, value: "0x1" })).feeLevel,
    "LOW",
  );
  // fee fields given: no level
  const priced = await sendAndFind(low.address, {
    from: VAULT0,
    to: VAULT1,
    value: "0x1",
    gasPrice: "0x77359400",
  });
  assert.equal(priced.feeLevel, undefined);
  const plain = await bridge(["--http"]);
  assert.equal(
    (await sendAndFind(plain.address, { from: VAULT0, to: VAULT1, value: "0x1" })).feeLevel,
    "MEDIUM",
  );
  const bad = await runCli(["rpc", ...stack.flags, "--fallbackFeeLevel", "URGENT"]);
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /--fallbackFeeLevel: expected one of LOW, MEDIUM, HIGH/);
});

Deno.test("--oneTimeAddressesEnabled false: a vault account or whitelisted wallet is sent as such, an unknown address is a JSON-RPC error naming it", async () => {
  const whitelisted = randomAddress();
  const added = await fetch(`${stack.emulator.apiBaseUrl.replace(/\/v1\/?$/, "")}/admin/wallets`, {
    method: "POST",
    headers: { "X-API-Key": stack.emulator.apiKey, "content-type": "application/json" },
    body: JSON.stringify({ type: "EXTERNAL_WALLET", name: "Treasury", address: whitelisted }),
  });
  assert.equal(added.status, 201, await added.clone().text());
  const wallet = await added.json() as { id: string };

  const off = await bridge(["--http", "--oneTimeAddressesEnabled", "false"]);
  const before = BigInt(
    await anvilCall(stack.anvil.url, "eth_getBalance", [whitelisted, "latest"]),
  );
  const toWallet = await sendAndFind(off.address, { from: VAULT0, to: whitelisted, value: "0x2a" });
  assert.deepEqual(toWallet.destination, {
    type: "EXTERNAL_WALLET",
    id: wallet.id,
    name: "Treasury",
  });
  await waitFor(
    "the transfer on chain",
    async () =>
      BigInt(await anvilCall(stack.anvil.url, "eth_getBalance", [whitelisted, "latest"])) ===
        before + 42n,
  );
  const toVault = await sendAndFind(off.address, { from: VAULT0, to: VAULT1, value: "0x1" });
  assert.equal((toVault.destination as { type: string }).type, "VAULT_ACCOUNT");
  assert.equal((toVault.destination as { id: string }).id, "1");

  const unknown = randomAddress();
  const refused = await rpc(off.address, "eth_sendTransaction", [{
    from: VAULT0,
    to: unknown,
    value: "0x1",
  }]);
  assert.equal(refused.error?.code, -32602);
  assert.match(
    refused.error!.message,
    new RegExp(`destination ${unknown} is not known to the workspace`),
  );
  assert.match(refused.error!.message, /--oneTimeAddressesEnabled false/);

  // the variable does the same; the default (true) sends any address as a one-time address
  const byVar = await bridge(["--http"], { SERVICE_ONE_TIME_ADDRESSES_ENABLED: "false" });
  const again = await rpc(byVar.address, "eth_sendTransaction", [{
    from: VAULT0,
    to: unknown,
    value: "0x1",
  }]);
  assert.equal(again.error?.code, -32602);
  const flagWins = await bridge(["--http", "--oneTimeAddressesEnabled", "true"], {
    SERVICE_ONE_TIME_ADDRESSES_ENABLED: "false",
  });
  const oneTime = await sendAndFind(flagWins.address, { from: VAULT0, to: unknown, value: "0x1" });
  assert.equal((oneTime.destination as { type: string }).type, "ONE_TIME_ADDRESS");
});

Deno.test("--userAgent and SERVICE_USER_AGENT are added to our User-Agent on platform requests (seen by a proxy in front of the emulator)", async () => {
  const seen: string[] = [];
  const target = stack.emulator.apiBaseUrl.replace(/\/v1\/?$/, "");
  const proxy = Deno.serve({ port: 0, hostname: "127.0.0.1", onListen() {} }, async (req) => {
    seen.push(req.headers.get("user-agent") ?? "");
    const url = new URL(req.url);
    const headers = new Headers(req.headers);
    headers.delete("host");
    const r = await fetch(`${target}${url.pathname}${url.search}`, {
      method: req.method,
      headers,
      body: req.body ? await req.arrayBuffer() : undefined,
    });
    // fetch decoded and unframed the body: pass on the other headers (not its encoding)
    const back = new Headers(r.headers);
    for (
      const h of [
        "transfer-encoding",
        "connection",
        "keep-alive",
        "content-length",
        "content-encoding",
      ]
    ) {
      back.delete(h);
    }
    return new Response(await r.arrayBuffer(), { status: r.status, headers: back });
  });
  try {
    const via = `http://127.0.0.1:${proxy.addr.port}`;
    const a = await bridge(["--http", "--apiBaseUrl", via, "--userAgent", "my-ci/1.2"], {
      SERVICE_USER_AGENT: "from-env/0",
    });
    assert.ok(Array.isArray((await rpc(a.address, "eth_accounts")).result));
    assert.ok(seen.length > 0);
    for (const ua of seen) assert.equal(ua, `service/${VERSION} my-ci/1.2`);
    seen.length = 0;
    const b = await bridge(["--http", "--apiBaseUrl", via], { SERVICE_USER_AGENT: "from-env/0" });
    assert.ok(Array.isArray((await rpc(b.address, "eth_accounts")).result));
    assert.ok(seen.length > 0);
    for (const ua of seen) assert.equal(ua, `service/${VERSION} from-env/0`);
  } finally {
    await proxy.shutdown();
  }
});

Deno.test("--logTransactionStatusChanges (and SERVICE_LOG_TX_STATUS_CHANGES) print each status change on stderr without --verbose", async () => {
  const quiet = await bridge(["--http"]);
  await sendAndFind(quiet.address, { from: VAULT0, to: VAULT1, value: "0x1" });
  const logged = await bridge(["--http", "--logTransactionStatusChanges"]);
  const t = await sendAndFind(logged.address, { from: VAULT0, to: VAULT1, value: "0x1" });
  const byVar = await bridge(["--http"], { SERVICE_LOG_TX_STATUS_CHANGES: "true" });
  const u = await sendAndFind(byVar.address, { from: VAULT0, to: VAULT1, value: "0x1" });
  assert.match(logged.stderr(), new RegExp(`platform transaction ${t.id} created`));
  assert.match(logged.stderr(), new RegExp(`platform transaction ${t.id}: [A-Z_]+`));
  assert.match(byVar.stderr(), new RegExp(`platform transaction ${u.id}: [A-Z_]+`));
  // the baseline bridge answered the same send (and its hash) without a word about it
  assert.doesNotMatch(quiet.stderr(), /platform transaction/);
});

Deno.test("-r/--raw prints only the address: no banner, where the same run without it shows one", async () => {
  const run = async (extra: string[]) => {
    const b = await bridge(["--http", ...extra]);
    assert.match(b.address, /^http:\/\/127\.0\.0\.1:\d+\/\S+$/);
    assert.ok(Array.isArray((await rpc(b.address, "eth_accounts")).result));
    await rpc(b.address, "eth_chainId");
    await rpc(b.address, "eth_blockNumber");
    await b.stop();
    return b.stderr();
  };
  assert.match(await run([]), /Chain ID:/);
  assert.doesNotMatch(await run(["-r"]), /Chain ID:/);
  assert.doesNotMatch(await run(["--raw"]), /Chain ID:/);
});

Deno.test("--suppressHostWarning is taken as --allowRemote for a non-loopback --host, and says so", async () => {
  const refused = await runCli(["rpc", ...stack.flags, "--http", "--host", "0.0.0.0"]);
  assert.equal(refused.code, 2);
  assert.match(refused.stderr, /--allowRemote/);
  const b = await bridge(["--http", "--host", "0.0.0.0", "--suppressHostWarning"]);
  assert.match(b.stderr(), /--suppressHostWarning taken as --allowRemote: serving on 0\.0\.0\.0/);
});

Deno.test("--externalTxId X becomes the prefix of unique ids (two sends both work), with a notice; SERVICE_EXTERNAL_TX_ID too; not with --externalTxIdPrefix", async () => {
  const b = await bridge(["--http", "--externalTxId", "ci-run-7"]);
  const one = await sendAndFind(b.address, { from: VAULT0, to: VAULT1, value: "0x1" });
  const two = await sendAndFind(b.address, { from: VAULT0, to: VAULT1, value: "0x1" });
  assert.match(String(one.externalTxId), /^ci-run-7-[0-9a-f-]{36}$/);
  assert.match(String(two.externalTxId), /^ci-run-7-[0-9a-f-]{36}$/);
  assert.notEqual(one.externalTxId, two.externalTxId);
  assert.match(b.stderr(), /--externalTxId ci-run-7: used as the prefix/);
  const byVar = await bridge(["--http"], { SERVICE_EXTERNAL_TX_ID: "deploy_" });
  const three = await sendAndFind(byVar.address, { from: VAULT0, to: VAULT1, value: "0x1" });
  assert.match(String(three.externalTxId), /^deploy_[0-9a-f-]{36}$/);
  const both = await runCli([
    "rpc",
    ...stack.flags,
    "--externalTxId",
    "a",
    "--externalTxIdPrefix",
    "b",
  ]);
  assert.equal(both.code, 2);
  assert.match(both.stderr, /--externalTxId or --externalTxIdPrefix, not both/);
});

Deno.test("SERVICE_HTTP, SERVICE_HOST, SERVICE_PORT, SERVICE_HTTP_PATH (--path, SERVICE_PATH), SERVICE_NOTE, SERVICE_QUIET, SERVICE_VERBOSE, SERVICE_POLLING_INTERVAL: each used, flags win", async () => {
  const free = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = free.addr.port;
  free.close();
  const b = await bridge([], {
    SERVICE_HTTP: "true",
    SERVICE_HOST: "127.0.0.1",
    SERVICE_PORT: String(port),
    SERVICE_HTTP_PATH: "/rpc",
    SERVICE_NOTE: "from the variable",
    SERVICE_QUIET: "true",
    SERVICE_VERBOSE: "true",
    SERVICE_POLLING_INTERVAL: "50ms",
  });
  assert.equal(b.address, `http://127.0.0.1:${port}/rpc`);
  const t = await sendAndFind(b.address, { from: VAULT0, to: VAULT1, value: "0x1" });
  assert.equal(t.note, "from the variable");
  await rpc(b.address, "eth_chainId");
  await b.stop();
  assert.match(b.stderr(), /serving chain 31337/); // --verbose's lines
  assert.doesNotMatch(b.stderr(), /Chain ID:/); // --quiet: no banner
  // flags win: --note and --httpPath over their variables
  const c = await bridge(["--note", "from the flag", "--httpPath", "/flag"], {
    SERVICE_HTTP: "1",
    SERVICE_NOTE: "from the variable",
    SERVICE_HTTP_PATH: "/rpc",
  });
  assert.match(c.address, /^http:\/\/127\.0\.0\.1:\d+\/flag$/);
  assert.equal(
    (await sendAndFind(c.address, { from: VAULT0, to: VAULT1, value: "0x1" })).note,
    "from the flag",
  );
  // the platform bridge's --path (and SERVICE_PATH) is --httpPath
  const p = await bridge(["--http", "--path", "/bridge"]);
  assert.match(p.address, /^http:\/\/127\.0\.0\.1:\d+\/bridge$/);
  const q = await bridge(["--http"], { SERVICE_PATH: "/var" });
  assert.match(q.address, /^http:\/\/127\.0\.0\.1:\d+\/var$/);
  const bad = await runCli(["rpc", ...stack.flags], { env: { SERVICE_POLLING_INTERVAL: "soon" } });
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /"soon" for SERVICE_POLLING_INTERVAL \(environment\)/);
});

Deno.test("SERVICE_IPC_PATH chooses the socket; SERVICE_JSON_RPC_ENV_VAR names the child's extra variable", async () => {
  const dir = await Deno.makeTempDir({ prefix: "ipc-" });
  try {
    const b = await bridge([], { SERVICE_IPC_PATH: `${dir}/node.ipc` });
    assert.equal(b.address, `${dir}/node.ipc`);
    await b.stop();
  } finally {
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
  const r = await runCli(
    ["rpc", ...stack.flags, "--http", "--", "sh", "-c", 'echo "$ETH_RPC_URL"'],
    { env: { SERVICE_JSON_RPC_ENV_VAR: "ETH_RPC_URL" } },
  );
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout.trim(), /^http:\/\/127\.0\.0\.1:\d+\/\S+$/);
});

Deno.test("rpc --help names every variable", async () => {
  const help = await runCli(["rpc", "--help"]);
  for (
    const v of [
      "SERVICE_HTTP)",
      "SERVICE_PORT",
      "SERVICE_HOST",
      "SERVICE_HTTP_PATH",
      "SERVICE_PATH",
      "SERVICE_IPC_PATH",
      "SERVICE_JSON_RPC_ENV_VAR",
      "SERVICE_FALLBACK_FEE_LEVEL",
      "SERVICE_NOTE",
      "SERVICE_POLLING_INTERVAL",
      "SERVICE_ONE_TIME_ADDRESSES_ENABLED",
      "SERVICE_EXTERNAL_TX_ID",
      "SERVICE_USER_AGENT",
      "SERVICE_LOG_TX_STATUS_CHANGES",
      "SERVICE_QUIET",
      "SERVICE_VERBOSE",
      "SERVICE_PROFILE",
    ]
  ) assert.ok(help.stdout.includes(v), `${v} missing from rpc --help`);
});

Deno.test(".env in a directory of its own feeds the bridge, and the child's environment gains nothing from it", async () => {
  const dir = await Deno.makeTempDir({ prefix: "dotenv-" });
  try {
    await Deno.writeTextFile(
      `${dir}/.env`,
      [
        "# the bridge's settings, as a project keeps them",
        `SERVICE_API_KEY=${stack.emulator.apiKey}`,
        `SERVICE_API_PRIVATE_KEY_PATH=${stack.emulator.privateKeyPath}`,
        `SERVICE_API_BASE_URL=${stack.emulator.apiBaseUrl}`,
        `SERVICE_RPC_URL=${stack.anvil.url}`,
        "SERVICE_HTTP=true",
        "SERVICE_NOTE=dotenv-note",
        "SERVICE_VERBOSE=true # the log says the most it can, and still no secret",
      ].join("\n") + "\n",
    );
    const cast = foundryBin("cast");
    const r = await runCli([
      "rpc",
      "--",
      "sh",
      "-c",
      `"${cast}" block-number --rpc-url "$SERVICE_JSON_RPC_ADDRESS" && env`,
    ], { cwd: dir });
    assert.equal(r.code, 0, r.stderr);
    const [block, ...env] = r.stdout.trim().split("\n");
    assert.match(block, /^\d+$/);
    assert.match(env.join("\n"), /^SERVICE_JSON_RPC_ADDRESS=http:\/\//m);
    for (const line of env) {
      assert.ok(
        !/^SERVICE_(API_KEY|API_PRIVATE_KEY_PATH|API_BASE_URL|RPC_URL|HTTP|NOTE)=/.test(line),
        `the child got ${line.split("=")[0]} from .env`,
      );
    }
    assert.ok(!r.stdout.includes(stack.emulator.apiKey), "the API key reached the child");
    assert.match(r.stderr, /serving chain 31337/, "SERVICE_VERBOSE from .env");
    assert.ok(!r.stderr.includes(stack.emulator.apiKey), "the API key reached a log");
    // --noEnvFile: the same command has no node to read from
    const skipped = await runCli(["rpc", "--noEnvFile", "--", "true"], { cwd: dir });
    assert.equal(skipped.code, 2);
    assert.match(skipped.stderr, /Missing chain/);
  } finally {
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
});

Deno.test("a profile feeds the bridge's credentials, and the child's environment gains nothing from it", async () => {
  const dir = await Deno.makeTempDir({ prefix: "profile-" });
  try {
    const set = await runCli([
      "config",
      "set",
      "--profile",
      "emu",
      "--apiKey",
      stack.emulator.apiKey,
      "--privateKey",
      stack.emulator.privateKeyPath,
      "--apiBaseUrl",
      stack.emulator.apiBaseUrl,
    ], { env: { XDG_CONFIG_HOME: dir } });
    assert.equal(set.code, 0, set.stderr);
    const r = await runCli(
      ["rpc", "--profile", "emu", "--rpcUrl", stack.anvil.url, "--http", "--", "sh", "-c", "env"],
      { env: { XDG_CONFIG_HOME: dir } },
    );
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^SERVICE_JSON_RPC_ADDRESS=http:\/\//m);
    assert.doesNotMatch(r.stdout, /^SERVICE_(API_KEY|API_PRIVATE_KEY_PATH|API_BASE_URL|PROFILE)=/m);
    assert.ok(
      !r.stdout.includes(stack.emulator.apiKey) && !r.stderr.includes(stack.emulator.apiKey),
    );
    // the bridge did sign with the profile's credentials: eth_accounts through a child
    const accounts = await runCli([
      "rpc",
      "--profile",
      "emu",
      "--rpcUrl",
      stack.anvil.url,
      "--",
      foundryBin("cast"),
      "rpc",
      "eth_accounts",
      "--rpc-url",
      "{}",
    ], { env: { XDG_CONFIG_HOME: dir } });
    assert.equal(accounts.code, 0, accounts.stderr);
    assert.match(accounts.stdout.toLowerCase(), new RegExp(VAULT0.toLowerCase()));
  } finally {
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
});

Deno.test("a node that does not answer at start: without --chainId a usage error naming the node; with it a warning, and the bridge serves that chain", async () => {
  const free = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const dead = `http://127.0.0.1:${(free.addr as Deno.NetAddr).port}`;
  free.close(); // nothing listens there now
  const flags = [...stack.flags];
  flags[flags.indexOf("--rpcUrl") + 1] = dead;
  const refused = await runCli(["rpc", ...flags, "--http", "--", "true"]);
  assert.equal(refused.code, 2, refused.stderr);
  assert.match(
    refused.stderr,
    new RegExp(
      `Cannot read the chain id from the node at ${dead}/?: .*\\. Check --rpcUrl, or give --chainId\\.`,
    ),
  );
  const warned = await runCli(["rpc", ...flags, "--chainId", "31337", "--http", "--", "true"]);
  assert.equal(warned.code, 0, warned.stderr);
  assert.match(
    warned.stderr,
    new RegExp(`the node at ${dead}/? does not answer yet; serving chain 31337\\.`),
  );
});
