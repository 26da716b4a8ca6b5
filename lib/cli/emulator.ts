/**
 * `service emulator`: runs the local stand-in for the platform
 * (`lib/emulator/`) until SIGINT or SIGTERM. Prints exactly one JSON `ready`
 * line on standard output, then logs on standard error.
 *
 * @module
 */

import { type Command, groupVerbs, leaf } from "./command.ts";
import { CliError } from "./errors.ts";
import { EmulatorConfigError } from "../emulator/errors.ts";
import type { EmulatorOptions, RunningEmulator } from "../emulator/mod.ts";
// the emulator itself is loaded only when it starts (below); this module is small
import { MAX_CUSTODY_DELAY_MS } from "../emulator/transactions/custody_delays.ts";
import { writeAll } from "./output.ts";
import { STOP_SIGNALS, whenStopped } from "./stop_signals.ts";

/**
 * The flags of `service emulator`; `--approvalDelay` and `--signingDelay` (a custody platform's
 * delays, each transaction drawing a uniform value from a range) are `service rpc --emulator`'s too.
 */
export const emulatorFlags = {
  host: {
    type: "string",
    default: "127.0.0.1",
    placeholder: "HOST",
    description: "Interface to listen on.",
  },
  port: { type: "integer", default: 0, min: 0, max: 65535, description: "Port (0 = a free port)." },
  rpcUrl: {
    type: "string",
    env: "SERVICE_EMULATOR_RPC_URL",
    placeholder: "URL",
    description:
      "The node transactions are sent to, e.g. anvil's http://127.0.0.1:8545. Without it: webhooks only (transaction and vault calls answer that a node is needed).",
  },
  chainId: {
    type: "integer",
    min: 1,
    max: Number.MAX_SAFE_INTEGER,
    description: "Expected chain id; refuse to start if the node's differs.",
  },
  state: {
    type: "string",
    placeholder: "FILE",
    description: "SQLite file that keeps the state across restarts (default: in memory).",
  },
  timeScale: {
    type: "number",
    default: 1,
    min: 0.000001,
    max: 1_000_000,
    description: "Divides every retry delay and the breaker's durations (webhook delivery).",
  },
  vaultAccounts: {
    type: "integer",
    default: 10,
    min: 1,
    max: 10000,
    description: "Number of vault accounts; account i signs with m/44'/60'/0'/0/i of --mnemonic.",
  },
  mnemonic: {
    type: "string",
    env: "SERVICE_EMULATOR_MNEMONIC",
    secret: true,
    placeholder: "WORDS",
    description:
      "BIP-39 mnemonic of the vault keys (default: anvil's, whose accounts anvil funds).",
  },
  fault: {
    type: "string",
    multiple: true,
    placeholder: "SPEC",
    description:
      'A fault from the start, e.g. "kind=status,status=503,count=2,path=/v1/transactions" (repeatable; see the admin endpoint).',
  },
  apiUser: {
    type: "string",
    multiple: true,
    placeholder: "ROLE",
    description:
      "One more API user of the workspace, with its own key pair (repeatable): ROLE or ROLE:NAME, ROLE one of ADMIN, NON_SIGNING_ADMIN, SIGNER, APPROVER, EDITOR or VIEWER; every call checks the caller's role (403 when it may not). The ready line's apiUsers lists them.",
  },
  approvalDelay: {
    type: "durationRange",
    min: 0,
    max: MAX_CUSTODY_DELAY_MS,
    placeholder: "DURATION|MIN-MAX",
    description:
      "Every new transaction waits this long in PENDING_AUTHORIZATION (an approval policy), e.g. 2m or 30s-3m (default: none).",
  },
  signingDelay: {
    type: "durationRange",
    min: 0,
    max: MAX_CUSTODY_DELAY_MS,
    placeholder: "DURATION|MIN-MAX",
    description:
      "Every transaction waits this long in PENDING_SIGNATURE before it is signed (MPC signing), e.g. 5s-20s (default: none).",
  },
  deliveryTimeout: {
    type: "duration",
    default: 10_000,
    min: 10,
    max: 600_000,
    placeholder: "DURATION",
    description: "Webhook delivery: HTTP timeout of one attempt (not scaled), e.g. 10s, 500ms.",
  },
  webhookConcurrency: {
    type: "integer",
    default: 8,
    min: 1,
    max: 256,
    description: "Webhook delivery: attempts in flight per endpoint.",
  },
  window: {
    type: "duration",
    default: 3_600_000,
    min: 1,
    max: 31_536_000_000,
    placeholder: "DURATION",
    description: "Circuit breaker window W before --timeScale (breaker.md §3).",
  },
  immediateAbove: {
    type: "number",
    default: 0.8,
    min: 0,
    max: 1,
    description: "Circuit breaker: suspend at once above this error rate.",
  },
  sustainedFrom: {
    type: "number",
    default: 0.5,
    min: 0,
    max: 1,
    description: "Circuit breaker: the band starts at this error rate.",
  },
  sustainedFor: {
    type: "duration",
    default: 14_400_000,
    min: 1,
    max: 31_536_000_000,
    placeholder: "DURATION",
    description: "Circuit breaker: suspend after this long in the band, before --timeScale.",
  },
  minAttempts: {
    type: "integer",
    default: 1,
    min: 1,
    max: 1_000_000_000,
    description: "Circuit breaker: evaluate only with at least this many attempts in the window.",
  },
} as const;

/** `service emulator` (serving). */
const serveCommand = leaf({
  summary:
    "Run a local stand-in for the platform (API, signing on a real chain, webhook delivery).",
  usage: "[--rpcUrl URL] [flags]",
  description: [
    "Serves the platform API on http://HOST:PORT/v1 with one API user made at start. When ready it",
    'prints one JSON line on standard output: {"event":"ready","apiBaseUrl",...,"apiKey","privateKeyPath",',
    '"apiUsers":[{"name","role","apiKey","privateKeyPath"}],"consoleUrl","jwksUrl","adminUrl"}, then logs',
    "on standard error. Runs until SIGINT or SIGTERM. apiKey is the default user's, an ADMIN;",
    "--apiUser ROLE[:NAME] adds users of other roles to the same workspace (transactions and webhooks",
    "are the workspace's): each call is checked against the role, as the platform does.",
    "Faults can be added at run time: POST {adminUrl}/faults with X-API-Key.",
    "consoleUrl opens the console in a browser (endpoints, notifications, attempts, Reactivate,",
    "Resend); it carries a per-run token and answers only on a loopback address.",
    "Webhooks V2: real deliveries to registered URLs, retries and the circuit breaker of breaker.md;",
    "`service emulator trigger --eventType E` creates notifications in a running emulator.",
    "Without --rpcUrl it serves the webhook side only (webhooks, notifications, the console,",
    "trigger, the breaker); transaction and vault calls answer an error saying a node is needed.",
  ].join("\n"),
  flags: emulatorFlags,
  examples: [
    "anvil & service emulator --rpcUrl http://127.0.0.1:8545",
    "service emulator --timeScale 1000   # webhooks only: no node needed",
    "service emulator --rpcUrl http://127.0.0.1:8545 --state emu.sqlite --port 8080",
    "service emulator --rpcUrl http://127.0.0.1:8545 --timeScale 1000 --deliveryTimeout 2s",
    "service emulator --rpcUrl http://127.0.0.1:8545 --approvalDelay 2m --signingDelay 5s-20s",
    "service emulator --rpcUrl http://127.0.0.1:8545 --apiUser SIGNER:ci --apiUser VIEWER",
    "service emulator trigger --eventType transaction.created --resourceId tx-1 --count 3",
  ],
  async run({ flags: f }, ctx) {
    const out = ctx.out;
    const emu = await launchEmulator({
      host: f.host,
      port: f.port,
      rpcUrl: f.rpcUrl,
      chainId: f.chainId,
      state: f.state,
      timeScale: f.timeScale,
      vaultAccounts: f.vaultAccounts,
      mnemonic: f.mnemonic,
      faults: f.fault,
      apiUsers: f.apiUser,
      approvalDelay: f.approvalDelay,
      signingDelay: f.signingDelay,
      logRequests: f.verbose === true,
      log: (line) => void out.log(line),
      webhooks: {
        deliveryTimeoutMs: f.deliveryTimeout,
        concurrency: f.webhookConcurrency,
        breaker: {
          windowMs: f.window,
          immediateAbove: f.immediateAbove,
          sustainedFrom: f.sustainedFrom,
          sustainedForMs: f.sustainedFor,
          minAttempts: f.minAttempts,
          bandResetsAfterIdleMs: null,
        },
      },
    }, "The emulator could not start");
    // Take SIGINT, SIGTERM and SIGHUP from their default action: they now stop cleanly. They
    // stay taken until the emulator has stopped: Ctrl-C under `deno task` or a launcher brings a
    // second SIGINT, which must not end the process before the key directory is removed.
    const release = ctx.takeSignals?.(STOP_SIGNALS) ?? (() => {});
    const stop = whenStopped(ctx.signal);
    await writeAll(
      ctx.io.stdout,
      JSON.stringify({
        event: "ready",
        apiBaseUrl: emu.apiBaseUrl,
        apiKey: emu.apiKey,
        privateKeyPath: emu.privateKeyPath,
        apiUsers: emu.apiUsers.map((u) => ({
          name: u.name,
          role: u.role,
          apiKey: u.apiKey,
          privateKeyPath: u.privateKeyPath,
        })),
        consoleUrl: emu.consoleUrl,
        jwksUrl: emu.jwksUrl,
        adminUrl: emu.adminUrl,
      }) + "\n",
    );
    const why = await stop;
    await out.log(`stopping (${why})`);
    try {
      await emu.stop();
    } finally {
      release();
    }
    return 0;
  },
});

/**
 * Starts the emulator (loaded only now); a failure other than a mistake in its options (exit 2)
 * is exit 1, its message after `failed`.
 */
export async function launchEmulator(
  options: EmulatorOptions,
  failed: string,
): Promise<RunningEmulator> {
  const { startEmulator } = await import("../emulator/mod.ts");
  try {
    return await startEmulator(options);
  } catch (e) {
    if (e instanceof EmulatorConfigError) throw e; // exit 2 (errors.ts)
    throw new CliError(`${failed}: ${e instanceof Error ? e.message : String(e)}`, 1);
  }
}

/**
 * `service emulator [flags]` serves; `service emulator trigger ...` creates
 * notifications in a running one (cli.md).
 */
export const emulatorCommand: Command = {
  ...serveCommand,
  verbs: groupVerbs({
    trigger: [
      "Create notifications in a running emulator.",
      async () => (await import("./emulator_trigger.ts")).emulatorTriggerCommand,
    ],
  }),
  async run(args, ctx, path) {
    if (args[0] !== "trigger") return await serveCommand.run(args, ctx, path);
    const trigger = await emulatorCommand.verbs!.trigger.load();
    return await trigger.run(args.slice(1), ctx, `${path} trigger`);
  },
};
