/**
 * `deno task demo`: the bridge end to end with zero setup. Starts anvil (from
 * npm), then runs `service rpc --emulator` (an in-process platform emulator
 * with fresh credentials) around real `cast` calls and a real
 * `forge script --broadcast --unlocked --slow` that deploys and calls a
 * contract, and prints what happened; then the webhook side with no chain
 * at all (`demo_webhooks.ts`). `deno task demo webhooks` runs only that
 * part (no anvil needed). Installs the npm packages first when they are
 * missing.
 *
 * @module
 */

import { ensureNodeModules } from "./ensure_deps.ts";
import { foundryBin, startAnvil } from "./anvil.ts";
import { webhooksDemo } from "./demo_webhooks.ts";

const root = new URL("..", import.meta.url).pathname;
await ensureNodeModules("demo");
const bin = foundryBin;
const VAULT0 = "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266";
const VAULT1 = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";
const bold = (
  s: string,
) => (Deno.stdout.isTerminal() && !Deno.env.get("NO_COLOR") ? `\x1b[1m${s}\x1b[0m` : s);

if (Deno.args[0] === "webhooks") {
  await webhooksDemo(root, bold);
  Deno.exit(0);
}

for (const b of ["anvil", "cast", "forge"] as const) {
  try {
    Deno.statSync(bin(b));
  } catch {
    console.error(`demo: ${bin(b)} is missing: run "npm ci" first.`);
    Deno.exit(1);
  }
}

/** Runs `service rpc --emulator ... -- <child>` and prints the child's output. */
async function bridged(title: string, child: string[], cwd = root): Promise<string> {
  const shown = child.map((a) => (a.startsWith(root) ? a.slice(root.length) : a)).join(" ");
  console.log(
    `\n${bold("▶ " + title)}\n  $ service rpc --emulator --rpcUrl $ANVIL --http -- ${shown}`,
  );
  const out = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      `${root}main.ts`,
      "rpc",
      "--emulator",
      "--rpcUrl",
      anvilUrl,
      "--http",
      "--verbose",
      "--",
      ...child,
    ],
    cwd,
    env: { NO_COLOR: "1", RUST_BACKTRACE: "0", DENO_TLS_CA_STORE: "system" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const stdout = new TextDecoder().decode(out.stdout).trim();
  const stderr = new TextDecoder().decode(out.stderr).trim();
  const platformLines = stderr.split("\n").filter((l) =>
    /platform transaction|serving chain/.test(l)
  );
  for (const l of platformLines) console.log(`  [bridge] ${l}`);
  if (stdout) console.log(stdout.split("\n").map((l) => `  ${l}`).join("\n"));
  if (out.code !== 0) {
    console.error(stderr);
    throw new Error(`${title}: exit ${out.code}`);
  }
  return stdout;
}

const anvil = await startAnvil();
const anvilUrl = anvil.url;
const work = await Deno.makeTempDir({ prefix: "service-demo-" });
try {
  console.log(
    bold(`anvil on ${anvilUrl}; vault account 0 signs as ${VAULT0} (inside the emulator)`),
  );
  await bridged("Block number through the bridge (a read: passed to the node)", [
    bin("cast"),
    "block-number",
    "--rpc-url",
    "{}",
  ]);
  await bridged("eth_accounts (the platform's vault accounts)", [
    bin("cast"),
    "rpc",
    "eth_accounts",
    "--rpc-url",
    "{}",
  ]);
  await bridged("cast send --unlocked: a TRANSFER signed in custody", [
    bin("cast"),
    "send",
    "--unlocked",
    "--from",
    VAULT0,
    VAULT1,
    "--value",
    "0.01ether",
    "--rpc-url",
    "{}",
  ]);
  for (const p of ["foundry.toml", "src/Counter.sol", "script/Deploy.s.sol"]) {
    await Deno.mkdir(`${work}/${p.split("/").slice(0, -1).join("/")}`, { recursive: true });
    await Deno.copyFile(`${root}tests/fixtures/forge/${p}`, `${work}/${p}`);
  }
  await bridged(
    "forge script: deploy Counter, increment(), setNumber(42) — three custody transactions",
    [
      bin("forge"),
      "script",
      "script/Deploy.s.sol",
      "--use",
      `${root}scripts/solc/solc`,
      "--offline",
      "--broadcast",
      "--unlocked",
      "--slow",
      "--sender",
      VAULT0,
      "--rpc-url",
      "{}",
    ],
    work,
  );
  const run = JSON.parse(
    await Deno.readTextFile(`${work}/broadcast/Deploy.s.sol/31337/run-latest.json`),
  );
  const counter = run.transactions[0].contractAddress as string;
  await bridged(`Read the contract back (Counter at ${counter})`, [
    bin("cast"),
    "call",
    counter,
    "number()(uint256)",
    "--rpc-url",
    "{}",
  ]);
  console.log(
    `\n${
      bold("Done:")
    } every transaction above was created as a platform transaction, signed by the emulator's vault key and broadcast to anvil.`,
  );
  await webhooksDemo(root, bold);
} finally {
  await anvil.stop();
  await Deno.remove(work, { recursive: true }).catch(() => {});
}
