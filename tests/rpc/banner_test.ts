/**
 * `service rpc` without a child: standard output holds only the address
 * line (programs read it), standard error a banner as anvil prints one (the
 * chain, the asset, the exposed accounts, the addresses). Real anvil, the
 * emulator as the platform; the accounts are checked against anvil's own
 * `eth_accounts` (the emulator's vault accounts are anvil's funded ones).
 */
import assert from "node:assert/strict";
import { mainCommand } from "../support/main_command.ts";
import { anvilCall, type Stack, startStack } from "../support/rpc_stack.ts";

let stack: Stack;

Deno.test.beforeAll(async () => {
  stack = await startStack();
});

Deno.test.afterAll(async () => {
  await stack?.stop();
});

/** Runs the bridge until its banner is out, stops it, returns both streams. */
async function bannerRun(extra: string[]): Promise<{ stdout: string; stderr: string }> {
  const child = mainCommand(["rpc", ...stack.flags, ...extra]).spawn();
  let stdout = "";
  let stderr = "";
  let seen: () => void = () => {};
  const bannerOut = new Promise<void>((r) => (seen = r));
  const collect = async (s: ReadableStream<Uint8Array>, add: (t: string) => void) => {
    for await (const t of s.pipeThrough(new TextDecoderStream())) add(t);
  };
  const reading = Promise.all([
    collect(child.stdout, (t) => (stdout += t)),
    collect(child.stderr, (t) => {
      stderr += t;
      if (/Listening on .*\n/.test(stderr)) seen();
    }),
  ]);
  const timer = setTimeout(() => seen(), 30_000);
  await Promise.race([bannerOut, child.status]);
  clearTimeout(timer);
  child.kill("SIGTERM");
  const status = await child.status;
  await reading;
  assert.equal(status.code, 0, stderr);
  return { stdout, stderr };
}

Deno.test("HTTP: stdout is the address alone; stderr names chain, asset, every account, the address", async () => {
  const { stdout, stderr } = await bannerRun(["--http"]);
  const lines = stdout.split("\n");
  assert.equal(lines.length, 2, stdout);
  assert.equal(lines[1], "");
  const address = lines[0];
  assert.match(address, /^http:\/\/127\.0\.0\.1:\d+\/[0-9a-f]{32}$/);
  assert.match(stderr, /^Chain ID: +31337$/m);
  assert.match(stderr, new RegExp(`^Asset ID: +${stack.emulator.assetId}$`, "m"));
  const accounts = await anvilCall(stack.anvil.url, "eth_accounts") as string[];
  assert.ok(accounts.length >= 2);
  const shown = [...stderr.matchAll(/^\((\d+)\) (0x[0-9a-fA-F]{40})$/gm)];
  assert.deepEqual(
    shown.map((m) => m[2].toLowerCase()),
    accounts.map((a) => a.toLowerCase()),
  );
  assert.deepEqual(shown.map((m) => Number(m[1])), accounts.map((_, i) => i));
  assert.match(stderr, new RegExp(`^Listening on ${address.replaceAll(".", "\\.")}$`, "m"));
  assert.match(stderr, new RegExp(`^Reads go to ${stack.anvil.url.replaceAll(".", "\\.")}$`, "m"));
  // where the key goes, and where that address came from (issue 35)
  assert.match(stderr, /^The API key goes to http:\/\/127\.0\.0\.1:\d+\S* \(from --apiBaseUrl\)$/m);
  assert.ok(!stderr.includes(stack.emulator.apiKey), "no API key in the banner");
});

Deno.test("IPC: the banner gives the socket path; --vaultAccountIds narrows the accounts", async () => {
  const { stdout, stderr } = await bannerRun(["--vaultAccountIds", "1"]);
  const address = stdout.trim();
  assert.match(address, /\/rpc\.ipc$/);
  assert.ok(stderr.includes(`Listening on ${address} (IPC socket)`), stderr);
  const accounts = await anvilCall(stack.anvil.url, "eth_accounts") as string[];
  const shown = [...stderr.matchAll(/^\((\d+)\) (0x[0-9a-fA-F]{40})$/gm)].map((m) => m[2]);
  assert.deepEqual(shown.map((a) => a.toLowerCase()), [accounts[1].toLowerCase()]);
});
