/**
 * Duration and number flags are checked once, in the flag layer, against the
 * range each flag declares, and the message names that range: for every
 * command, every duration (and every number flag). A declaration without a
 * range cannot load: `leaf()` checks it, and every command module is loaded
 * here.
 *
 * Seen to fail: without the range check in `flags.ts`, `--timeout 0` parsed
 * (then every request timed out) and the table below exits 0 or 1, not 2.
 */

import assert from "node:assert/strict";
import { run } from "../../lib/cli/mod.ts";
import { checkFlagSpecs, parseFlags } from "../../lib/cli/flags.ts";
import { memoryIo } from "../support/memory_io.ts";

function throwsType(fn: () => unknown, includes = ""): void {
  assert.throws(fn, (e: unknown) => e instanceof TypeError && e.message.includes(includes));
}

Deno.test("a number or duration flag without a range, or with a default outside it, is refused", () => {
  throwsType(
    () => checkFlagSpecs({ t: { type: "duration", description: "" } }),
    "--t (duration) must declare a finite range",
  );
  throwsType(
    () => checkFlagSpecs({ n: { type: "integer", min: 1, description: "" } }),
    "--n (integer)",
  );
  throwsType(
    () => checkFlagSpecs({ n: { type: "number", min: 2, max: 1, description: "" } }),
  );
  throwsType(
    () => checkFlagSpecs({ n: { type: "number", min: 0, max: 1, default: 2, description: "" } }),
    "default 2 is outside",
  );
  throwsType(
    () => parseFlags({ t: { type: "duration", description: "" } }, [], { command: "x" }),
  );
  checkFlagSpecs({
    s: { type: "string", description: "" },
    b: { type: "boolean", description: "" },
  });
});

Deno.test("every command module loads: each of its flags declares a range where it needs one", async () => {
  let loaded = 0;
  // every module under lib/cli, subfolders included (verbs live in lib/cli/<command>/)
  const walk = async (dir: URL): Promise<void> => {
    for (const e of Deno.readDirSync(dir)) {
      if (e.isDirectory) await walk(new URL(`${e.name}/`, dir));
      if (!e.isFile || !e.name.endsWith(".ts")) continue;
      await import(new URL(e.name, dir).href); // leaf() throws for a spec without its range
      loaded++;
    }
  };
  await walk(new URL("../../lib/cli/", import.meta.url));
  assert.deepEqual(loaded >= 10, true, `${loaded} modules`);
});

/** [command words, flag, a value outside the range, the range the message must name]. */
const OUT_OF_RANGE: [string[], string, string, string][] = [
  // durations (ms when a plain number)
  [["webhooks", "list"], "--timeout", "0", "a duration from 100ms to 1h"],
  [["webhooks", "list"], "--timeout", "2h", "a duration from 100ms to 1h"],
  [["notifications", "list"], "--timeout", "99ms", "a duration from 100ms to 1h"],
  [["notifications", "resend-failed"], "--pollInterval", "0", "a duration from 100ms to 10m"],
  [["rpc"], "--timeout", "0", "a duration from 100ms to 1h"],
  [["rpc"], "--pollingInterval", "0", "a duration from 10ms to 1h"],
  [["rpc"], "--txTimeout", "0", "a duration from 1s to 24d"],
  [["rpc"], "--txTimeout", "30d", "a duration from 1s to 24d"],
  [["breaker", "simulate"], "--window", "0", "a duration from 1ms to 365d"],
  [["breaker", "simulate"], "--sustainedFor", "400d", "a duration from 1ms to 365d"],
  [["breaker", "simulate"], "--bandResetsAfterIdle", "0", "a duration from 1ms to 365d"],
  [["emulator"], "--deliveryTimeout", "0", "a duration from 10ms to 10m"],
  [["emulator"], "--window", "0", "a duration from 1ms to 365d"],
  [["emulator"], "--sustainedFor", "0", "a duration from 1ms to 365d"],
  [["emulator", "trigger"], "--timeout", "0", "a duration from 100ms to 1h"],
  // numbers
  [["webhooks", "list"], "--retries", "21", "0 to 20"],
  [["webhooks", "list"], "--pageSize", "0", "1 to 100"],
  [["notifications", "attempts"], "--pageSize", "101", "1 to 100"],
  [["rpc"], "--port", "65536", "0 to 65535"],
  [["breaker", "simulate"], "--minAttempts", "0", "1 to 1000000000"],
  [["breaker", "simulate"], "--immediateAbove", "1.5", "0 to 1"],
  [["breaker", "simulate"], "--plotWebhooks", "0", "1 to 500"],
  [["emulator"], "--timeScale", "0", "0.000001 to 1000000"],
  [["emulator"], "--chainId", "0", "1 to 9007199254740991"],
  [["emulator"], "--vaultAccounts", "10001", "1 to 10000"],
  [["emulator"], "--webhookConcurrency", "0", "1 to 256"],
  [["emulator"], "--minAttempts", "0", "1 to 1000000000"],
  [["emulator"], "--port", "-1", "0 to 65535"],
  [["emulator", "trigger"], "--count", "0", "1 to 10000"],
];

Deno.test("a value outside a flag's range exits 2 naming the flag and the range, for every command", async () => {
  for (const [words, flag, value, range] of OUT_OF_RANGE) {
    const io = memoryIo();
    const code = await run([...words, `${flag}=${value}`], { io });
    const what = `${words.join(" ")} ${flag}=${value}`;
    assert.deepEqual(code, 2, `${what}: ${io.err()}`);
    const esc = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
    assert.match(
      io.err(),
      new RegExp(
        `^error: Invalid value "${esc(value)}" for ${esc(flag)}: expected ${esc(range)}\\.\\n$`,
      ),
      what,
    );
  }
});

Deno.test("values that are not finite are refused, not read as Infinity or null", async () => {
  for (
    const [words, flag, value] of [
      [["emulator"], "--timeScale", "1e400"],
      [["breaker", "simulate"], "--immediateAbove", "NaN"],
      [["webhooks", "list"], "--timeout", "99999999999999999999999999"],
    ] as const
  ) {
    const io = memoryIo();
    assert.deepEqual(await run([...words, flag, value], { io }), 2, io.err());
    assert.match(io.err(), new RegExp(`for ${flag}: expected`));
  }
});

Deno.test("emulator options that cannot work exit 2 with one line (EmulatorConfigError)", async () => {
  const cases: [string[], RegExp][] = [
    [
      ["emulator", "--rpcUrl", "ftp://x"],
      /^error: Invalid --rpcUrl "ftp:\/\/x": expected an http\(s\) URL\.\n$/,
    ],
    [
      ["emulator", "--rpcUrl", "http://127.0.0.1:9", "--fault", "nonsense"],
      /^error: Invalid --fault: .*nonsense.*\n$/,
    ],
    [
      ["emulator", "--rpcUrl", "http://127.0.0.1:9", "--mnemonic", "not a mnemonic"],
      /^error: Invalid --mnemonic: expected a BIP-39 mnemonic phrase\.\n$/,
    ],
  ];
  for (const [args, message] of cases) {
    const io = memoryIo();
    assert.deepEqual(await run(args, { io }), 2, `${args.join(" ")}: ${io.err()}`);
    assert.match(io.err(), message, args.join(" "));
  }
});
