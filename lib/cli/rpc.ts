/**
 * `service rpc [flags] -- <child command...>`: the local JSON-RPC bridge
 * (`../shared/spec/cli.md`, seed sections 2.4 and 4.6). Reads go to the node
 * (`--rpcUrl`), accounts, sending and signing go through the platform. The
 * bridge lives exactly as long as the child; without a child it runs until a
 * signal and prints its address as the first line of standard output.
 *
 * Heavy parts (the bridge, the emulator) are imported only when the command
 * runs, so `service rpc --help` stays instant.
 *
 * @module
 */

import { connectionFlags, leaf, platformClient } from "./command.ts";
import { CliError, UsageError } from "./errors.ts";
import type { Output } from "./output.ts";
import { rpcBanner, type RpcBannerInfo } from "./rpc_banner.ts";
import { STOP_SIGNALS, whenStopped } from "./stop_signals.ts";
import { VERSION } from "../version.ts";

const flags = {
  ...connectionFlags,
  chainId: {
    type: "string",
    env: "SERVICE_CHAIN_ID",
    placeholder: "ID",
    description:
      "EVM chain id (decimal or 0x-hex); default: the node's. Checked against the node at start.",
  },
  rpcUrl: {
    type: "string",
    env: "SERVICE_RPC_URL",
    placeholder: "URL",
    description:
      "The node reads are sent to: http(s) or ws(s) URL or IPC socket path (default: a public node of a known --chainId).",
  },
  assetId: {
    type: "string",
    env: "SERVICE_ASSET_ID",
    placeholder: "ID",
    description:
      "The platform's asset id of the chain (default: built-in table, else asked from the platform).",
  },
  vaultAccountIds: {
    type: "list",
    env: "SERVICE_VAULT_ACCOUNT_IDS",
    placeholder: "IDS",
    description:
      "Expose only these vault accounts (comma-separated); default: every account holding the asset.",
  },
  http: {
    type: "boolean",
    env: "SERVICE_HTTP",
    description: "Serve HTTP instead of the default local socket (IPC).",
  },
  host: {
    type: "string",
    default: "127.0.0.1",
    env: "SERVICE_HOST",
    placeholder: "HOST",
    description: "HTTP bind address. Anything but loopback needs --allowRemote.",
  },
  port: {
    type: "integer",
    default: 0,
    min: 0,
    max: 65535,
    env: "SERVICE_PORT",
    description: "HTTP port; 0 picks a free one.",
  },
  httpPath: {
    type: "string",
    env: "SERVICE_HTTP_PATH",
    placeholder: "PATH",
    description: "HTTP path instead of the random per-run token (e.g. / for a fixed URL).",
  },
  path: {
    type: "string",
    env: "SERVICE_PATH",
    placeholder: "PATH",
    description: "The platform bridge's spelling of --httpPath.",
  },
  apiKeyPath: {
    type: "boolean",
    description:
      "Also accept the Brownie form http://127.0.0.1:<PORT>/<API_KEY> (puts the key in a URL: only if a config needs it).",
  },
  allowRemote: {
    type: "boolean",
    description: "Allow --host other than loopback (anyone who can reach it can send).",
  },
  allowOrigin: {
    type: "string",
    multiple: true,
    placeholder: "ORIGIN",
    description:
      "Allow browser pages from this origin (e.g. http://localhost:3000); repeatable; default: every page refused.",
  },
  ipcPath: {
    type: "string",
    env: "SERVICE_IPC_PATH",
    placeholder: "PATH",
    description: "Socket path (default: a fresh private directory). A stale socket is removed.",
  },
  env: {
    type: "string",
    env: "SERVICE_JSON_RPC_ENV_VAR",
    placeholder: "NAME",
    description:
      "Also give the address to the child in this variable (always in SERVICE_JSON_RPC_ADDRESS).",
  },
  maxBatch: {
    type: "integer",
    default: 1000,
    min: 1,
    max: 1_000_000,
    placeholder: "N",
    description:
      "Largest JSON-RPC batch answered; a larger one is refused whole with -32600 (geth's default).",
  },
  externalTxIdPrefix: {
    type: "string",
    default: "service-rpc-",
    placeholder: "TEXT",
    description: "Prefix of each transaction's unique externalTxId.",
  },
  externalTxId: {
    type: "string",
    env: "SERVICE_EXTERNAL_TX_ID",
    placeholder: "TEXT",
    description:
      "Taken as the prefix of each transaction's unique externalTxId (one id for all would be refused).",
  },
  fallbackFeeLevel: {
    type: "string",
    choices: ["LOW", "MEDIUM", "HIGH"],
    upper: true,
    default: "MEDIUM",
    env: "SERVICE_FALLBACK_FEE_LEVEL",
    placeholder: "LOW|MEDIUM|HIGH",
    description: "Fee level of transactions that carry no fee fields.",
  },
  oneTimeAddressesEnabled: {
    type: "boolean",
    default: true,
    env: "SERVICE_ONE_TIME_ADDRESSES_ENABLED",
    description:
      "false: destinations must be a vault account or whitelisted wallet (by address), else an error.",
  },
  userAgent: {
    type: "string",
    env: "SERVICE_USER_AGENT",
    placeholder: "TEXT",
    description: "Added to our User-Agent on platform requests.",
  },
  logTransactionStatusChanges: {
    type: "boolean",
    env: "SERVICE_LOG_TX_STATUS_CHANGES",
    description: "Print each transaction's status changes on stderr (as --verbose does).",
  },
  raw: {
    type: "boolean",
    short: "r",
    description: "Without a child: print only the listening address (no banner).",
  },
  suppressHostWarning: {
    type: "boolean",
    description:
      "Accepted for the platform's bridge: acknowledges a non-loopback --host, as --allowRemote.",
  },
  note: {
    type: "string",
    env: "SERVICE_NOTE",
    placeholder: "TEXT",
    description: "Note attached to every platform transaction.",
  },
  pollingInterval: {
    type: "duration",
    env: "SERVICE_POLLING_INTERVAL",
    min: 10,
    max: 3_600_000,
    placeholder: "DURATION",
    description: "Fixed transaction status polling interval (default: 5ms doubling to 2s).",
  },
  txTimeout: {
    type: "duration",
    default: 4 * 3_600_000,
    min: 1000,
    max: 24 * 86_400_000, // timers wait at most 2^31-1 ms (about 24.8 days)
    placeholder: "DURATION",
    description: "Give up waiting for one transaction after this long (human approvals).",
  },
  emulator: {
    type: "boolean",
    description:
      "Use an in-process platform emulator with fresh credentials (needs --rpcUrl of a node such as anvil).",
  },
  quiet: {
    type: "boolean",
    short: "q",
    env: "SERVICE_QUIET",
    description: "Print no warnings (and, without a child, no banner on stderr).",
  },
} as const;

function parseChainId(text: string): bigint {
  const t = text.trim();
  if (/^\d+$/.test(t) || /^0x[0-9a-fA-F]+$/.test(t)) {
    const v = BigInt(t);
    if (v > 0n) return v;
  }
  throw new UsageError(
    `Invalid value ${
      JSON.stringify(text)
    } for --chainId: expected a positive integer such as 11155111.`,
  );
}

function isLoopbackBind(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, "").toLowerCase();
  return h === "localhost" || /^127\.\d+\.\d+\.\d+$/.test(h) || h === "::1";
}

/** `service rpc`. */
export const rpcCommand = leaf({
  summary:
    "Run a local JSON-RPC node whose accounts sign through the platform, around a child command.",
  usage: "[flags] [-- <command> [args...]]",
  description: [
    "Reads go to the node (--rpcUrl); eth_accounts, eth_sendTransaction, personal_sign, eth_sign and",
    "eth_signTypedData(_v3/_v4) go through the platform. Default transport: a local socket whose path",
    "is in SERVICE_JSON_RPC_ADDRESS, and every {} in the child's arguments becomes the address (the",
    "socket path, or with --http the http:// URL), so one command line works in both modes.",
    "The bridge lives as long as the child and exits with its code (128+N when killed by signal N);",
    "SIGINT/SIGTERM/SIGHUP go to the child's whole process group (unless stdin is a terminal).",
    "Without a child it runs until SIGINT/SIGTERM, prints its address as the first line of stdout",
    "and a banner (chain, asset, accounts, addresses) on stderr.",
    "With --http the same address takes WebSocket (ws://127.0.0.1:PORT/TOKEN, in",
    "SERVICE_JSON_RPC_WS_ADDRESS); eth_subscribe (newHeads, logs, newPendingTransactions) works over",
    "WebSocket and the socket.",
  ].join("\n"),
  flags,
  acceptsRest: true,
  examples: [
    "service rpc --chainId 11155111 -- cast block-number --rpc-url {}",
    `service rpc --chainId 11155111 -- sh -c 'cast chain-id --rpc-url "$SERVICE_JSON_RPC_ADDRESS"'`,
    "service rpc --http --rpcUrl http://127.0.0.1:8545 -- forge script script/Deploy.s.sol --broadcast --unlocked --slow --sender 0x... --rpc-url {}",
    "service rpc --emulator --rpcUrl http://127.0.0.1:8545 --http -- cast block-number --rpc-url {}",
    "service rpc --http --vaultAccountIds 0   # prints http://127.0.0.1:PORT/TOKEN, runs until Ctrl-C",
  ],
  async run({ flags: f, rest, given }, ctx) {
    const out = ctx.out;
    const warn = (line: string) => {
      if (!f.quiet) void out.warn(line);
    };
    const log = (line: string) => void out.debug(line);

    // 1. Everything that can be checked without I/O (exit 2 on a mistake).
    if (rest !== undefined && rest.length === 0) {
      throw new UsageError('Missing command after "--": give the program to run, or omit "--".');
    }
    const transport = f.http ? "http" : "ipc";
    if (f.path !== undefined) {
      if (f.httpPath !== undefined && f.httpPath !== f.path) {
        throw new UsageError("Give --httpPath or --path (its other spelling), not both.");
      }
      f.httpPath = f.path;
    }
    if (!f.http) {
      for (
        const name of ["port", "httpPath", "apiKeyPath", "allowOrigin", "allowRemote"] as const
      ) {
        const given = name === "port"
          ? f.port !== 0
          : name === "allowOrigin"
          ? f.allowOrigin.length > 0
          : !!f[name];
        if (given) throw new UsageError(`--${name} needs --http (the default transport is IPC).`);
      }
    } else if (f.ipcPath) throw new UsageError("--ipcPath cannot be combined with --http.");
    if (f.suppressHostWarning && f.http && !isLoopbackBind(f.host) && !f.allowRemote) {
      // The platform's bridge only warned about such a host; we refuse it without an acknowledgement.
      if (!f.quiet) {
        void out.log(`--suppressHostWarning taken as --allowRemote: serving on ${f.host}.`);
      }
      f.allowRemote = true;
    }
    let externalTxIdPrefix = f.externalTxIdPrefix;
    if (f.externalTxId !== undefined) {
      if (given.has("externalTxIdPrefix")) {
        throw new UsageError("Give --externalTxId or --externalTxIdPrefix, not both.");
      }
      externalTxIdPrefix = /[-_:.]$/.test(f.externalTxId) ? f.externalTxId : `${f.externalTxId}-`;
      if (!f.quiet) {
        void out.log(
          `--externalTxId ${f.externalTxId}: used as the prefix of each transaction's unique id (${externalTxIdPrefix}<uuid>); one id for all would be refused from the second transaction on.`,
        );
      }
    }
    if (f.http && !isLoopbackBind(f.host)) {
      if (!f.allowRemote) {
        throw new UsageError(
          `--host ${f.host} is not a loopback address: anyone who reaches it could send transactions. Add --allowRemote if you mean it.`,
        );
      }
      warn(
        `serving on ${f.host}: anyone who can reach this address can send transactions from the exposed vault accounts.`,
      );
    }
    if (f.httpPath !== undefined && !f.httpPath.startsWith("/")) {
      throw new UsageError(
        `Invalid --httpPath ${JSON.stringify(f.httpPath)}: it must start with /.`,
      );
    }
    if (f.env !== undefined && !/^[A-Za-z_][A-Za-z0-9_]*$/.test(f.env)) {
      throw new UsageError(`Invalid --env ${JSON.stringify(f.env)}: expected a variable name.`);
    }
    for (const o of f.allowOrigin) {
      if (o !== "*" && !/^https?:\/\/[^/]+$/.test(o)) {
        throw new UsageError(
          `Invalid --allowOrigin ${
            JSON.stringify(o)
          }: expected an origin such as http://localhost:3000.`,
        );
      }
    }
    const wantedChain = f.chainId !== undefined ? parseChainId(f.chainId) : undefined;
    if (f.emulator && !f.rpcUrl) {
      throw new UsageError("--emulator needs --rpcUrl: the node it signs for (e.g. an anvil).");
    }
    const rpc = await loadBridge();
    const rpcUrl = f.rpcUrl ??
      (wantedChain !== undefined ? rpc.knownChain(wantedChain)?.rpcUrl : undefined);
    if (!rpcUrl) {
      throw new UsageError(
        wantedChain === undefined
          ? "Missing chain: give --rpcUrl (the node to read from) and/or --chainId (or SERVICE_RPC_URL / SERVICE_CHAIN_ID)."
          : `Chain ${wantedChain} has no built-in public node: give --rpcUrl.`,
      );
    }
    let upstream: InstanceType<typeof rpc.Upstream>;
    try {
      upstream = rpc.connectUpstream(rpcUrl);
    } catch (e) {
      throw new UsageError(`Invalid --rpcUrl: ${(e as Error).message}.`);
    }

    // 2. Credentials (or the emulator's), the chain and its asset.
    let stopEmulator: (() => Promise<void>) | undefined;
    const cleanups: (() => Promise<void> | void)[] = [() => upstream.close()];
    const cleanup = async () => {
      for (const c of cleanups.reverse()) await c();
      cleanups.length = 0;
    };
    try {
      // The node's chain id is asked now and awaited after the credentials: the round trip
      // overlaps reading and importing the key (a credentials mistake still reports first).
      const nodeChain = rpc.nodeChainId(upstream).then(
        (id) => ({ id }),
        (error: unknown) => ({ error }),
      );
      let client;
      let emulatorAssetId: string | undefined;
      if (f.emulator) {
        const emu = await startEmulatorFor(rpcUrl, wantedChain, out);
        stopEmulator = emu.stop;
        emulatorAssetId = emu.assetId;
        cleanups.push(() => stopEmulator?.());
        client = await platformClient(
          {
            ...f,
            apiKey: emu.apiKey,
            privateKey: emu.privateKeyPem,
            apiBaseUrl: emu.apiBaseUrl,
          },
          ctx,
          { fetch: ctx.fetch, userAgent: f.userAgent },
        );
      } else {
        client = await platformClient(f, ctx, { fetch: ctx.fetch, userAgent: f.userAgent });
      }

      let chainId: bigint;
      try {
        const answer = await nodeChain;
        if ("error" in answer) throw answer.error;
        chainId = answer.id;
      } catch (e) {
        if (wantedChain === undefined) {
          throw new UsageError(
            `Cannot read the chain id from the node at ${upstream.shownUrl}: ${
              (e as Error).message
            }. Check --rpcUrl, or give --chainId.`,
          );
        }
        warn(`the node at ${upstream.shownUrl} does not answer yet; serving chain ${wantedChain}.`);
        chainId = wantedChain;
      }
      if (wantedChain !== undefined && wantedChain !== chainId) {
        throw new UsageError(
          `--chainId ${wantedChain} does not match the node at ${upstream.shownUrl}, which serves chain ${chainId}. Fix --chainId or --rpcUrl.`,
        );
      }
      let assetId = f.assetId ?? emulatorAssetId ?? rpc.knownChain(chainId)?.assetId;
      if (!assetId) {
        const { findNativeAssetId } = await import("../platform/mod.ts");
        assetId = await findNativeAssetId(client, chainId, ctx.signal);
        if (!assetId) {
          throw new UsageError(
            `The platform lists no EVM chain with id ${chainId}: give its asset id with --assetId.`,
          );
        }
        log(`chain ${chainId}: asset ${assetId} (from the platform)`);
      }

      const signer = new rpc.CustodySigner({
        client,
        assetId,
        chainId,
        vaultAccountIds: f.vaultAccountIds,
        externalTxIdPrefix,
        note: f.note,
        feeLevel: f.fallbackFeeLevel as "LOW" | "MEDIUM" | "HIGH",
        oneTimeAddressesEnabled: f.oneTimeAddressesEnabled,
        logStatus: f.logTransactionStatusChanges ? (line) => void out.log(line) : undefined,
        pollingIntervalMs: f.pollingInterval,
        txTimeoutMs: f.txTimeout,
        pendingNonce: async (address) =>
          BigInt(await upstream.request("eth_getTransactionCount", [address, "pending"]) as string),
        log,
      });

      // 3. Serve.
      const extraPaths: string[] = [];
      if (f.apiKeyPath) {
        const key = f.emulator ? undefined : f.apiKey ?? ctx.io.env("SERVICE_API_KEY");
        if (!key) {
          throw new UsageError("--apiKeyPath needs the API key (--apiKey or SERVICE_API_KEY).");
        }
        extraPaths.push(`/${encodeURIComponent(key)}`);
      }
      let bridge;
      try {
        bridge = await rpc.startBridge({
          upstream,
          chainId,
          clientVersion: `service/${VERSION}`,
          signer,
          transport,
          ipcPath: f.ipcPath,
          host: f.host,
          port: f.port,
          httpPath: f.httpPath,
          extraPaths,
          allowedHosts: f.allowRemote ? [f.host] : [],
          allowOrigins: f.allowOrigin,
          maxBatch: f.maxBatch,
          log,
          trace: out.verbose ? log : undefined,
        });
      } catch (e) {
        if (e instanceof Deno.errors.AddrInUse) {
          throw new CliError(
            `Cannot listen on ${
              transport === "http" ? `${f.host}:${f.port}` : f.ipcPath
            }: the address is in use. Choose another ${
              transport === "http" ? "--port" : "--ipcPath"
            }.`,
            2,
          );
        }
        throw e;
      }
      cleanups.push(() => bridge.close());
      log(
        `serving chain ${chainId} (${assetId}) on ${bridge.address}; reads go to ${upstream.shownUrl}`,
      );

      // 4. The child, or wait for a signal.
      if (rest === undefined) {
        const release = ctx.takeSignals?.(STOP_SIGNALS) ?? (() => {});
        try {
          await out.write(bridge.address + "\n");
          const stopped = whenStopped(ctx.signal);
          if (!f.quiet && !f.raw) {
            // After the address line: the accounts may take a platform round trip.
            void showBanner(out, signer, {
              chainId,
              assetId,
              transport,
              address: bridge.address,
              wsAddress: bridge.wsAddress,
              upstream: upstream.shownUrl,
            }, stopped);
          }
          const sig = await stopped;
          log(`${sig}: stopping`);
          return 0;
        } finally {
          release();
        }
      }
      const env: Record<string, string> = { SERVICE_JSON_RPC_ADDRESS: bridge.address };
      if (bridge.wsAddress) env.SERVICE_JSON_RPC_WS_ADDRESS = bridge.wsAddress;
      if (f.env) env[f.env] = bridge.address;
      const command = rpc.substituteAddress(rest, bridge.address);
      const takeSignals = ctx.takeSignals;
      return await rpc.runChild({
        command,
        env: rpc.childEnv(Deno.env.toObject(), env),
        // Its own process group (signals reach its children too), except on a
        // terminal, which must stay the child's (see lib/rpc/supervisor.ts).
        group: !Deno.stdin.isTerminal(),
        signals: takeSignals && ((forward) => takeSignals(rpc.FORWARDED_SIGNALS, forward)),
        onSpawn: (pid) => log(`child ${command[0]} started (pid ${pid})`),
        onSignal: (s) => log(`forwarding ${s} to the child`),
      });
    } finally {
      // Hold the stop signals while cleaning up: a second Ctrl-C (a task runner or a launcher
      // passes it on too) must not end the process before the emulator's key directory is gone.
      const hold = ctx.takeSignals?.(STOP_SIGNALS) ?? (() => {});
      try {
        await cleanup();
      } finally {
        hold();
      }
    }
  },
});

/**
 * The bridge's modules for serving, without the `lib/rpc` barrel: that one
 * loads the custody signer and with it the platform's response schemas (zod,
 * ~20 ms), which here wait for the first signing call (`LazyCustodySigner`).
 */
async function loadBridge() {
  const [chains, upstream, ipcUpstream, bridge, lazy, supervisor] = await Promise.all([
    import("../rpc/chains.ts"),
    import("../rpc/upstream.ts"),
    import("../rpc/ipc_upstream.ts"),
    import("../rpc/bridge.ts"),
    import("../rpc/lazy_signer.ts"),
    import("../rpc/supervisor.ts"),
  ]);
  return {
    ...chains,
    ...upstream,
    ...ipcUpstream,
    ...bridge,
    ...supervisor,
    CustodySigner: lazy.LazyCustodySigner,
  };
}

/** Prints the banner on stderr (unless the bridge stops before the accounts are known). */
async function showBanner(
  out: Output,
  signer: { accounts(signal?: AbortSignal): Promise<string[]> },
  info: Omit<RpcBannerInfo, "accounts">,
  stopped: Promise<unknown>,
): Promise<void> {
  const abort = new AbortController();
  let done = false;
  void stopped.then(() => {
    if (!done) abort.abort();
  });
  let accounts: RpcBannerInfo["accounts"];
  try {
    accounts = await signer.accounts(abort.signal);
  } catch (e) {
    accounts = { error: e instanceof Error ? e.message : String(e) };
  }
  done = true;
  if (abort.signal.aborted) return;
  await out.log(rpcBanner({ ...info, accounts }).trimEnd());
}

/** Starts the in-process emulator for `--emulator` (loaded only then). */
async function startEmulatorFor(
  rpcUrl: string,
  chainId: bigint | undefined,
  out: Output,
): Promise<
  {
    apiBaseUrl: string;
    apiKey: string;
    privateKeyPem: string;
    assetId: string;
    stop(): Promise<void>;
  }
> {
  const { startEmulator, EmulatorConfigError } = await import("../emulator/mod.ts");
  try {
    return await startEmulator({
      rpcUrl,
      chainId: chainId === undefined ? undefined : Number(chainId),
      port: 0,
      host: "127.0.0.1",
      log: (line: string) => void out.debug(`emulator: ${line}`),
    });
  } catch (e) {
    if (e instanceof EmulatorConfigError) throw new UsageError(e.message);
    throw new CliError(
      `Cannot start the in-process emulator: ${e instanceof Error ? e.message : String(e)}`,
      1,
    );
  }
}
