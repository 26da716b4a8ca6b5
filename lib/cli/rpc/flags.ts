/**
 * The flags of `service rpc`: the bridge's own, after the platform connection
 * flags. Each names its `SERVICE_*` variable (the platform's bridge's names,
 * so a `.env` written for it works) and, for numbers and durations, its range.
 *
 * @module
 */

import { connectionFlags } from "../command.ts";
import { emulatorFlags } from "../emulator.ts";

/** The flags of `service rpc`. */
export const rpcFlags = {
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
  joinRetries: {
    type: "boolean",
    default: true,
    env: "SERVICE_JOIN_RETRIES",
    description:
      "A send without a nonce, repeated after its client gave up waiting, joins the first (one transaction); false: every request is a new one.",
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
  approvalDelay: {
    ...emulatorFlags.approvalDelay,
    description: `With --emulator: ${emulatorFlags.approvalDelay.description}`,
  },
  signingDelay: {
    ...emulatorFlags.signingDelay,
    description: `With --emulator: ${emulatorFlags.signingDelay.description}`,
  },
  quiet: {
    type: "boolean",
    short: "q",
    env: "SERVICE_QUIET",
    description:
      "Print no warnings and no progress of waiting sends (and, without a child, no banner on stderr).",
  },
} as const;
