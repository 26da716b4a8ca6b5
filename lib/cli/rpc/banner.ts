/**
 * The banner `service rpc` prints on standard error when it runs without a
 * child (as anvil does): the chain and its asset, the exposed accounts, where
 * reads go, and the addresses clients connect to. Standard output keeps only
 * the address line, which programs read. {@linkcode showBanner} prints it once
 * the accounts are known.
 *
 * @module
 */

import type { Output } from "../output.ts";

/** What the banner shows. */
export interface RpcBannerInfo {
  /** The served chain id. */
  chainId: bigint;
  /** The platform's asset id of the chain. */
  assetId: string;
  /** The exposed addresses, or why they could not be listed. */
  accounts: readonly string[] | { error: string };
  /** `ipc` or `http`. */
  transport: "ipc" | "http";
  /** The socket path or the `http://` address. */
  address: string;
  /** The `ws://` address, when the server also accepts WebSocket. */
  wsAddress?: string;
  /** Where reads go (the node, its URL redacted). */
  upstream: string;
  /** Where the API key and signing go: the platform's address and where it came from. */
  platform?: string;
}

/** The banner text (several lines, ending with a newline). */
function rpcBanner(info: RpcBannerInfo): string {
  const lines = [
    "",
    `Chain ID:  ${info.chainId}`,
    `Asset ID:  ${info.assetId}`,
    "",
    "Available Accounts",
    "==================",
  ];
  if ("error" in info.accounts) lines.push(`(none listed: ${info.accounts.error})`);
  else if (info.accounts.length === 0) lines.push("(none: no vault account holds this asset)");
  else info.accounts.forEach((a, i) => lines.push(`(${i}) ${a}`));
  lines.push("", `Reads go to ${info.upstream}`);
  if (info.platform !== undefined) lines.push(`The API key goes to ${info.platform}`);
  if (info.transport === "ipc") lines.push(`Listening on ${info.address} (IPC socket)`);
  else lines.push(`Listening on ${info.address}`);
  if (info.wsAddress !== undefined) lines.push(`WebSocket on ${info.wsAddress}`);
  lines.push("");
  return lines.join("\n") + "\n";
}

/**
 * Prints the banner on stderr once `signer` has listed the accounts (a platform round trip),
 * unless the bridge stops first (`stopped`); a failed listing is shown in the banner.
 *
 * @example
 * ```ts
 * import type { Output } from "../output.ts";
 * import type { Signer } from "../../rpc/mod.ts";
 * declare const out: Output, signer: Signer;
 * declare const stopped: Promise<unknown>; // settles when the bridge stops
 * const info = {
 *   chainId: 31337n,
 *   assetId: "ETH_TEST5",
 *   transport: "ipc" as const,
 *   address: "/tmp/service-rpc-x/rpc.ipc",
 *   upstream: "http://127.0.0.1:8545",
 * };
 * void showBanner(out, signer, info, stopped);
 * ```
 */
export async function showBanner(
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
  // One log line per banner line: the printer escapes a newline inside a line.
  for (const line of rpcBanner({ ...info, accounts }).trimEnd().split("\n")) await out.log(line);
}
