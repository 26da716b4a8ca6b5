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

/** What the banner shows besides the accounts. */
export interface RpcBannerInfo {
  /** The served chain id. */
  chainId: bigint;
  /** The platform's asset id of the chain. */
  assetId: string;
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

/**
 * Prints the banner on stderr once `signer` has listed the accounts (a platform round trip),
 * unless the bridge stops first (`stopped`); a failed listing is shown in the banner.
 *
 * @example
 * ```ts
 * import type { Output } from "../output.ts";
 * import type { Signer } from "../../rpc/mod.ts";
 * declare const out: Output, signer: Signer, info: RpcBannerInfo;
 * declare const stopped: Promise<unknown>; // settles when the bridge stops
 * void showBanner(out, signer, info, stopped);
 * ```
 */
export async function showBanner(
  out: Output,
  signer: { accounts(signal?: AbortSignal): Promise<string[]> },
  info: RpcBannerInfo,
  stopped: Promise<unknown>,
): Promise<void> {
  const abort = new AbortController();
  void stopped.then(() => abort.abort());
  const lines = [
    "",
    `Chain ID:  ${info.chainId}`,
    `Asset ID:  ${info.assetId}`,
    "",
    "Available Accounts",
    "==================",
  ];
  try {
    const accounts = await signer.accounts(abort.signal);
    if (accounts.length === 0) lines.push("(none: no vault account holds this asset)");
    accounts.forEach((a, i) => lines.push(`(${i}) ${a}`));
  } catch (e) {
    lines.push(`(none listed: ${e instanceof Error ? e.message : String(e)})`);
  }
  if (abort.signal.aborted) return;
  lines.push("", `Reads go to ${info.upstream}`);
  if (info.platform !== undefined) lines.push(`The API key goes to ${info.platform}`);
  lines.push(`Listening on ${info.address}${info.transport === "ipc" ? " (IPC socket)" : ""}`);
  if (info.wsAddress !== undefined) lines.push(`WebSocket on ${info.wsAddress}`);
  // One log line per banner line: the printer escapes a newline inside a line.
  for (const line of lines) await out.log(line);
}
