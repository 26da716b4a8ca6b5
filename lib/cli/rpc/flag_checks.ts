/**
 * What `service rpc` checks of its flags before any I/O: combinations that
 * need `--http` (or refuse it), a non-loopback `--host` without
 * `--allowRemote`, the forms of `--httpPath`, `--env`, `--allowOrigin` and
 * `--chainId`, and the platform bridge's spellings taken as ours
 * (`--path`, `--suppressHostWarning`, `--externalTxId`). A mistake is a
 * {@linkcode UsageError} (exit 2).
 *
 * @module
 */

import type { ParsedFlags } from "../flags.ts";
import { UsageError } from "../errors.ts";
import { isLoopbackBind } from "../../core/mod.ts";
import type { Output } from "../output.ts";
import type { rpcFlags } from "./flags.ts";

/** What the checks settle for the rest of the command. */
export interface CheckedRpcFlags {
  /** `http` with `--http`, else `ipc`. */
  transport: "http" | "ipc";
  /** The prefix of each transaction's `externalTxId` (`--externalTxIdPrefix`, or `--externalTxId`'s). */
  externalTxIdPrefix: string | undefined;
  /** `--chainId` as a number, when given. */
  wantedChain: bigint | undefined;
}

/**
 * Checks the flags of `service rpc` (`rest`: the child command after `--`, if any; `given`:
 * the flags given on the command line). Settles `f.httpPath` from `--path` and `f.allowRemote`
 * from `--suppressHostWarning`, and says so on `out` unless `--quiet`.
 *
 * @example
 * ```ts
 * import type { ParsedFlags } from "../flags.ts";
 * import type { Output } from "../output.ts";
 * import type { rpcFlags } from "./flags.ts";
 * declare const f: ParsedFlags<typeof rpcFlags>, given: ReadonlySet<string>, out: Output;
 * declare const rest: string[] | undefined; // the child command after `--`
 * const { transport } = checkRpcFlags(f, rest, given, out); // "ipc" without --http
 * ```
 */
export function checkRpcFlags(
  f: ParsedFlags<typeof rpcFlags>,
  rest: string[] | undefined,
  given: ReadonlySet<string>,
  out: Output,
): CheckedRpcFlags {
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
  const needsHttp = Object.entries({
    port: f.port !== 0,
    httpPath: !!f.httpPath,
    apiKeyPath: f.apiKeyPath,
    allowOrigin: f.allowOrigin.length > 0,
    allowRemote: f.allowRemote,
  }).find(([, given]) => given)?.[0];
  if (!f.http && needsHttp) {
    throw new UsageError(`--${needsHttp} needs --http (the default transport is IPC).`);
  }
  if (f.http && f.ipcPath) throw new UsageError("--ipcPath cannot be combined with --http.");
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
    if (!f.quiet) {
      void out.warn(
        `serving on ${f.host}: anyone who can reach this address can send transactions from the exposed vault accounts.`,
      );
    }
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
  for (const name of ["approvalDelay", "signingDelay"] as const) {
    if (f[name] !== undefined && !f.emulator) {
      throw new UsageError(
        `--${name} applies to the in-process emulator only: add --emulator, or drop --${name}.`,
      );
    }
  }
  return { transport, externalTxIdPrefix, wantedChain };
}

function parseChainId(text: string): bigint {
  const t = text.trim();
  if (/^(\d+|0x[0-9a-fA-F]+)$/.test(t) && BigInt(t) > 0n) return BigInt(t);
  throw new UsageError(
    `Invalid value ${
      JSON.stringify(text)
    } for --chainId: expected a positive integer such as 11155111.`,
  );
}
