/**
 * The custody signer's `resumeHint` for `service rpc`, and the bridge flags
 * that give a new bridge the same address.
 *
 * @module
 */

/**
 * What the bridge tells, once as it stops, a user whose `forge script` gave
 * up on sends still under way: to wait until `waitFor` (the first platform
 * transaction not yet sent, if any) has landed, then run the same command
 * again with `--resume` (forge then sends the unsent transactions again, with
 * their nonces, and the new bridge finds the one that was under way by its
 * slot). Undefined for any other child: each send's own line says what a
 * repeat does.
 */
export function resumeHint(
  child: readonly string[] | undefined,
  addressFlags: string | null = "",
  waitFor?: string,
): string | undefined {
  const tool = child?.[0]?.split(/[\\/]/).pop();
  if (tool === "forge" && child!.includes("script")) {
    const same = addressFlags === null
      ? ", with the bridge at a fixed address (forge --resume sends to the address it recorded: give --ipcPath FILE, or --port and --httpPath, to both runs)"
      : addressFlags
      ? `, with ${addressFlags} added to the bridge's flags (forge --resume sends to the address it recorded)`
      : "";
    const wait = waitFor
      ? `wait until platform transaction ${waitFor} has landed (forge gives up again while it waits for approval), then `
      : "";
    return child!.includes("--resume")
      ? `to pick the script up again, ${wait}run the same command again${same}: the new bridge finds the transactions already made`
      : `to pick the script up again, ${wait}run the same command with --resume added to forge script's arguments${same}: the new bridge finds the transactions already made`;
  }
  return undefined;
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
