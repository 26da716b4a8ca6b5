/**
 * The custody signer's `resumeHint` for `service rpc`, and the bridge flags
 * that give a new bridge the same address.
 *
 * @module
 */

/**
 * What the bridge tells a user whose client stopped waiting for a send: for
 * `forge script`, to run the same command again with `--resume` (forge then
 * sends the unsent transactions again, with their nonces, and the bridge finds
 * the one that was under way); else that a repeat of the request joins it.
 */
export function resumeHint(
  child: readonly string[] | undefined,
  addressFlags: string | null = "",
): string {
  const tool = child?.[0]?.split(/[\\/]/).pop();
  if (tool === "forge" && child!.includes("script")) {
    const same = addressFlags === null
      ? ", with the bridge at a fixed address (forge --resume sends to the address it recorded: give --ipcPath FILE, or --port and --httpPath, to both runs)"
      : addressFlags
      ? `, with ${addressFlags} added to the bridge's flags (forge --resume sends to the address it recorded)`
      : "";
    return child!.includes("--resume")
      ? `forge picks the script up again when the same command is run again${same}`
      : `to pick the script up again, run the same command with --resume added to forge script's arguments${same}: the new bridge joins this transaction`;
  }
  return "a repeat of the same request joins it";
}

/**
 * The flags that give a new bridge this bridge's address: `""` when the
 * address is fixed already (`--port` and `--httpPath`, or `--ipcPath`),
 * `--port P --httpPath /T` for a random HTTP port or path, `null` for a
 * socket in a private directory that goes with this bridge.
 */
export function addressFlags(
  transport: "http" | "ipc",
  f: { port?: number; httpPath?: string; ipcPath?: string },
  given: ReadonlySet<string>,
  address: string,
): string | null {
  if (transport === "ipc") return f.ipcPath ? "" : null;
  const fixedPort = !!f.port;
  const fixedPath = f.httpPath !== undefined || given.has("path");
  if (fixedPort && fixedPath) return "";
  const url = new URL(address);
  return `--port ${url.port} --httpPath ${url.pathname}`;
}
