/**
 * `service rpc [flags] -- <child command...>`: the local JSON-RPC bridge (cli.md, seed sections
 * 2.4 and 4.6), as its help describes it. Heavy parts (the bridge, the emulator) are imported
 * only when the command runs, so `service rpc --help` stays instant.
 *
 * @module
 */

import { leaf, platformClient } from "./command.ts";
import { CliError, UsageError } from "./errors.ts";
import { launchEmulator } from "./emulator.ts";
import type { ChainTransaction } from "../rpc/send_proof.ts";
import { STOP_SIGNALS, whenStopped } from "./stop_signals.ts";
import { VERSION } from "../version.ts";
import { showBanner } from "./rpc/banner.ts";
import { platformAddress } from "./platform_address.ts";
import { checkRpcFlags } from "./rpc/flag_checks.ts";
import { rpcFlags } from "./rpc/flags.ts";
import { addressFlags, resumeHint } from "../rpc/resume_hint.ts";

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
  flags: rpcFlags,
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
    const { transport, externalTxIdPrefix, wantedChain } = checkRpcFlags(f, rest, given, out);
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
    // Where the API key goes (none known: exit 2 before any network use); --emulator: its own.
    const address = f.emulator ? undefined : platformAddress(f.apiBaseUrl, ctx.origins);
    let upstream: InstanceType<typeof rpc.Upstream>;
    try {
      upstream = rpc.connectUpstream(rpcUrl);
    } catch (e) {
      throw new UsageError(`Invalid --rpcUrl: ${(e as Error).message}.`);
    }

    // 2. Credentials (or the emulator's), the chain and its asset.
    const cleanups: (() => Promise<void> | void)[] = [() => upstream.close()];
    try {
      // The node's chain id is asked now and awaited after the credentials: the round trip
      // overlaps reading and importing the key (a credentials mistake still reports first).
      const nodeChain = rpc.nodeChainId(upstream);
      nodeChain.catch(() => {}); // awaited below: a failure until then is not unhandled
      const emu = f.emulator
        ? await launchEmulator({
          rpcUrl,
          chainId: wantedChain === undefined ? undefined : Number(wantedChain),
          port: 0,
          host: "127.0.0.1",
          approvalDelay: f.approvalDelay,
          signingDelay: f.signingDelay,
          log: (line: string) => void out.debug(`emulator: ${line}`),
        }, "Cannot start the in-process emulator")
        : undefined;
      if (emu) cleanups.push(() => emu.stop());
      const credentials = emu
        ? { apiKey: emu.apiKey, privateKey: emu.privateKeyPem, apiBaseUrl: emu.apiBaseUrl }
        : {};
      const client = await platformClient({ ...f, ...credentials }, ctx, {
        userAgent: f.userAgent,
      });

      const chainId = await nodeChain.catch((e) => {
        if (wantedChain === undefined) {
          throw new UsageError(
            `Cannot read the chain id from the node at ${upstream.shownUrl}: ${e.message}. Check --rpcUrl, or give --chainId.`,
          );
        }
        warn(`the node at ${upstream.shownUrl} does not answer yet; serving chain ${wantedChain}.`);
        return wantedChain;
      });
      if (wantedChain !== undefined && wantedChain !== chainId) {
        throw new UsageError(
          `--chainId ${wantedChain} does not match the node at ${upstream.shownUrl}, which serves chain ${chainId}. Fix --chainId or --rpcUrl.`,
        );
      }
      let assetId = f.assetId ?? emu?.assetId ?? rpc.knownChain(chainId)?.assetId;
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

      // The flags that make the bridge's address the same next time (forge --resume sends to the
      // address it recorded); set once the bridge listens.
      let fixedAddress: string | null = "";
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
        joinRetries: f.joinRetries,
        progress: f.quiet ? undefined : (line) => void out.log(line),
        resumeHint: (waitFor) => resumeHint(rest, fixedAddress, waitFor),
        platformInProcess: !!f.emulator,
        pendingNonce: async (address) =>
          BigInt(await upstream.request("eth_getTransactionCount", [address, "pending"]) as string),
        chainTransaction: async (hash) =>
          await upstream.request("eth_getTransactionByHash", [hash]) as ChainTransaction | null,
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
      const bridge = await rpc.startBridge({
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
      }).catch((e) => {
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
      });
      cleanups.push(() => bridge.close());
      fixedAddress = addressFlags(transport, f, given, bridge.address);
      cleanups.push(() => {
        // sends still under way go on on the platform: say so, and how to pick them up
        if (!f.quiet) { for (const line of signer.unfinished()) void out.log(line); }
      });
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
              platform: `${client.baseUrl} (${address ? `from ${address.from}` : "--emulator"})`,
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
        signals: takeSignals && ((forward) => takeSignals(STOP_SIGNALS, forward)),
        onSpawn: (pid) => log(`child ${command[0]} started (pid ${pid})`),
        onSignal: (s) => log(`forwarding ${s} to the child`),
      });
    } finally {
      // Hold the stop signals while cleaning up: a second Ctrl-C (a task runner or a launcher
      // passes it on too) must not end the process before the emulator's key directory is gone.
      const hold = ctx.takeSignals?.(STOP_SIGNALS) ?? (() => {});
      try {
        for (const c of cleanups.reverse()) await c();
      } finally {
        hold();
      }
    }
  },
});

/**
 * The bridge's modules for serving, without the `lib/rpc` barrel: that one
 * loads the custody signer and with it the platform's transaction calls,
 * which here wait for the first signing call (`LazyCustodySigner`).
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
