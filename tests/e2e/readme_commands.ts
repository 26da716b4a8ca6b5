/**
 * Every command of the `sh` blocks of README.md and of every `docs/*.md`
 * runs, as written, against a real anvil and the emulator: the lines are
 * read from the files (`readme_blocks.ts`), so a changed example is a tested
 * example, in reading order (`docs/` as README.md's "Documentation" list
 * orders it, then README.md). A line written in several files (README.md's
 * examples are copies of lines of `docs/`) runs once, where it first appears.
 * The walk-through block is `readme_walkthrough_test.ts`'s.
 *
 * The files are split into {@linkcode PARTS}, each run by its own test file
 * (`readme_commands_test.ts` and `readme_commands_<part>_test.ts`) with its
 * own anvil, emulator and scratch directory, so that the parts run side by
 * side; `readme_commands_test.ts` also checks that every file with `sh`
 * blocks belongs to exactly one part.
 *
 * Each line is run by
 * `sh` in a scratch directory with `service` and `service-json-rpc` on PATH
 * (`deno run -A main.ts`, the module the npm package and the binaries
 * bundle), anvil/cast/forge, and the variables the examples use set to real
 * values: `$NODE` (anvil, started with chain id 11155111 as the examples
 * say), `$W` (a webhook whose endpoint records deliveries), `$N` (one of its
 * notifications), `$WS` (a webhook whose endpoint answers 503, suspended by
 * the emulator's breaker), `$TX`, `$SIGNATURE` and `body.json` (a real delivery),
 * `$BASE`/`$KEY`/`$PEM`/`$ADMIN` (an emulator), and the connection variables;
 * a part whose lines use none of `$W`, `$N`, `$TX`, `$SIGNATURE`, `body.json`
 * (or `$WS`) does not make that webhook (or the suspended one).
 * Only these are substituted: the ports (8545 -> anvil, 4000 and 3000 -> free
 * ones), `PORT/TOKEN` (the address the line before printed), and
 * `npx -y deno@2.9.6` -> the Deno running the tests (no download); `deno
 * task` lines run in the checkout ("from a clone"), the others in a scratch
 * directory.
 *
 * Lines that cannot run here are listed in NOT_HERE with the reason; a
 * documented line that is neither run nor listed fails the test, and so does a
 * NOT_HERE entry that matches nothing.
 *
 * @module
 */

import assert from "node:assert/strict";
import { type Anvil, foundryBin, ROOT, runCli, startAnvil } from "../support/tools.ts";
import { type CliChild, spawnCli } from "./cli_child.ts";
import { cleanEnv } from "../support/main_command.ts";
import { waitFor } from "../support/wait_for.ts";
import { freePort, shBlocks } from "./readme_blocks.ts";

/** Documented lines that cannot run here, and why. */
export const NOT_HERE: { pattern: RegExp; why: string }[] = [
  {
    pattern: /^npm i -g \.\/(dist\/)?service-cli-\*\.tgz$/,
    why:
      "a global install into this machine's npm prefix; tests/package/npm_package_test.ts installs the packed tarball the same way (npm install -g, into a scratch prefix) and runs it, and tests/scripts/pack_fresh_clone_test.ts packs it from a fresh clone",
  },
  {
    pattern: /^npx -y deno@2\.9\.6 task pack$/,
    why:
      "tests/scripts/pack_fresh_clone_test.ts runs this very task (deno task pack) in a fresh clone and checks the tarball, and tests/package/npm_package_test.ts installs what it packs: a third pack here would only cost the suite time",
  },
  {
    pattern: /^npx -y deno@2\.9\.6 task test$/,
    why: "it is this test suite",
  },
  {
    pattern: /^deno task compile/,
    why:
      "deno compile downloads its runtime (denort) from the internet, unreachable here; the release workflow runs it, and tests/package runs the bundle it embeds",
  },
  {
    pattern: /^export SERVICE_API_KEY=\.\.\. /,
    why: "placeholders for your credentials; this test exports the emulator's instead",
  },
  {
    pattern: /^service whoami --profile sandbox/,
    why:
      "the profile's placeholder sandbox URL cannot be reached here; tests/cli/config_whoami_test.ts runs whoami with a profile against the emulator",
  },
  {
    pattern: /script\/Deploy\.s\.sol .*0xVAULT0/,
    why:
      "placeholders (your deploy script and vault address); tests/e2e/rpc_clients_test.ts runs forge script --broadcast through the bridge",
  },
];

/** Lines that run until Ctrl-C: started, their first output line awaited, stopped with SIGINT at the end. */
const LONG_RUNNING = [
  /^service rpc --http --rpcUrl \$NODE$/,
  /^service notifications tail .*--follow$/,
  /^service webhooks listen /,
  // the emulator itself (flags only, with or without a node), not a verb such as `trigger`
  /^service emulator(?: --\w+(?: [^-\s]\S*)?)*$/,
];

/** Expected exit codes other than 0. */
const EXIT_CODES: [RegExp, number][] = [[/--failOnSuspension|--fail-on-suspension/, 8]];

interface Capture {
  port: number;
  deliveries: { body: string; signature: string }[];
  close(): Promise<void>;
}

/** A webhook endpoint that records each delivery's raw body and signature, answering 200. */
function captureServer(): Capture {
  const deliveries: Capture["deliveries"] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (req) => {
    deliveries.push({
      body: await req.text(),
      signature: req.headers.get("service-webhook-signature") ?? "",
    });
    return new Response("ok");
  });
  return { port: server.addr.port, deliveries, close: () => server.shutdown() };
}

/** `bash -c line` in `cwd` with `env` (the README's blocks are for bash/zsh users): code and output. */
async function sh(line: string, cwd: string, env: Record<string, string>) {
  const out = await new Deno.Command("bash", {
    args: ["-c", line],
    cwd,
    clearEnv: true,
    env,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
    // a guard against a hang, not a time limit: the demo line (anvil, the emulator, forge, the
    // webhook side) took more than 90 s beside the rest of the suite on a loaded machine
    signal: AbortSignal.timeout(180_000),
  }).output();
  const dec = new TextDecoder();
  return { code: out.code, stdout: dec.decode(out.stdout), stderr: dec.decode(out.stderr) };
}

/** Gzipped CSV of an NDJSON delivery log (header row of the fields). */
async function csvGz(ndjson: string): Promise<Uint8Array> {
  const rows = ndjson.trim().split("\n").map((l) => JSON.parse(l));
  const fields = [...new Set(rows.flatMap((r) => Object.keys(r)))];
  const csv = [fields.join(","), ...rows.map((r) => fields.map((f) => r[f] ?? "").join(","))]
    .join("\n") + "\n";
  const stream = new Blob([csv]).stream().pipeThrough(new CompressionStream("gzip"));
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

/**
 * The documentation's files in parts that run side by side, each in its own test file (named
 * after the part; the first is `readme_commands_test.ts`'s). Each file with `sh` blocks is in
 * exactly one part: the lines of a file run in order, in one scratch directory.
 */
export const PARTS: readonly { name: string; files: readonly string[] }[] = [
  { name: "readme", files: ["README.md", "docs/development.md"] },
  { name: "rpc", files: ["docs/rpc.md", "docs/emulator.md"] },
  { name: "webhooks", files: ["docs/webhooks.md"] },
  { name: "cli", files: ["docs/cli.md", "docs/breaker.md"] },
];

/** One documented command line: the block it is in and its text. */
export interface DocCommand {
  /** The file (`README.md`, `docs/rpc.md`, ...). */
  file: string;
  /** Where: `FILE block at line N`. */
  block: string;
  /** The line as written (continuations joined, comment removed). */
  text: string;
}

/**
 * Every command line of the `sh` blocks outside the walk-through, in reading order; sample
 * output (the emulator's ready line) is not a command, a line written twice is kept once.
 */
export function documentedCommands(): DocCommand[] {
  const blocks = shBlocks().filter((b) => !b.walkthrough);
  const seen = new Set<string>();
  return blocks.flatMap((b) =>
    b.commands.map((text) => ({ file: b.file, block: `${b.file} block at line ${b.line}`, text }))
  ).filter((l) => {
    if (l.text.startsWith("{") || seen.has(l.text)) return false;
    seen.add(l.text);
    return true;
  });
}

/** The NOT_HERE entry of a line, if it has one. */
export function notHere(text: string): { pattern: RegExp; why: string } | undefined {
  return NOT_HERE.find((n) => n.pattern.test(text));
}

/**
 * Runs every documented line of the files of part `name` that is not NOT_HERE, in reading
 * order, each with its expected exit code; the long-running ones are stopped with SIGINT at
 * the end and must exit 0.
 */
export async function runPart(name: string): Promise<void> {
  const part = PARTS.find((p) => p.name === name);
  assert.ok(part, `no part named ${name}`);
  const toRun = documentedCommands().filter((c) => part.files.includes(c.file) && !notHere(c.text));
  assert.ok(toRun.length > 0, `part ${name} has no documented command to run`);
  const all = toRun.map((c) => c.text).join("\n");
  const needsWebhook = /\$(W|N|TX|SIGNATURE)\b|body\.json/.test(all);
  const needsSuspended = /\$WS\b/.test(all);

  const tmp = await Deno.realPath(await Deno.makeTempDir({ prefix: "service-readme-" }));
  const bin = `${tmp}/bin`;
  await Deno.mkdir(bin);
  const deno = Deno.execPath();
  await Deno.writeTextFile(
    `${bin}/service`,
    `#!/bin/sh\nexec "${deno}" run -A "${ROOT}main.ts" "$@"\n`,
    {
      mode: 0o755,
    },
  );
  await Deno.writeTextFile(
    `${bin}/service-json-rpc`,
    `#!/bin/sh\nexec "${deno}" run -A "${ROOT}main.ts" rpc "$@"\n`,
    { mode: 0o755 },
  );
  const fixture = await Deno.readTextFile(`${ROOT}tests/fixtures/breaker/band_4h_quiet.ndjson`);
  await Deno.writeTextFile(`${tmp}/deliveries.ndjson`, fixture);
  await Deno.writeTextFile(`${tmp}/log.ndjson`, fixture);
  await Deno.writeFile(`${tmp}/deliveries.csv.gz`, await csvGz(fixture));

  const capture = captureServer();
  const failing = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    () => new Response(null, { status: 503 }),
  );
  let anvil: Anvil | undefined;
  let emulator: CliChild | undefined;
  const background: { line: string; child: CliChild }[] = [];
  try {
    anvil = await startAnvil(["--chain-id", "11155111"]);
    emulator = spawnCli(["emulator", "--rpcUrl", anvil.url, "--timeScale", "1000"]);
    const ready = JSON.parse(
      await emulator.waitLine(() => true, "the emulator's ready line", 60_000),
    );
    const connection = {
      SERVICE_API_BASE_URL: ready.apiBaseUrl,
      SERVICE_API_KEY: ready.apiKey,
      SERVICE_API_PRIVATE_KEY_PATH: ready.privateKeyPath,
    };
    const cli = async (args: string[]) => {
      const r = await runCli(args, { env: connection });
      assert.deepEqual(r.code, 0, `service ${args.join(" ")}: ${r.stderr}`);
      return r.stdout;
    };
    /** `count` transaction.created notifications for `resourceId`, from the emulator. */
    const created = (resourceId: string, count = 1) =>
      cli([
        "emulator",
        "trigger",
        "--eventType",
        "transaction.created",
        "--resourceId",
        resourceId,
        "--count",
        String(count),
      ]);
    const newWebhook = async () =>
      JSON.parse(
        await cli([
          "webhooks",
          "create",
          "--url",
          `http://127.0.0.1:${capture.port}/hook`,
          "--events",
          "transaction.created",
          "--format",
          "json",
        ]),
      ).id as string;
    const vars: Record<string, string> = {};
    // "Why was my endpoint suspended?": an endpoint that answers 503, suspended by its first attempt
    if (needsSuspended) {
      const WS = JSON.parse(
        await cli([
          "webhooks",
          "create",
          "--url",
          `http://127.0.0.1:${failing.addr.port}/hook`,
          "--events",
          "connection.removed",
          "--format",
          "json",
        ]),
      ).id as string;
      await cli(["emulator", "trigger", "--eventType", "connection.removed"]);
      await waitFor(
        "the failing endpoint's suspension",
        async () =>
          JSON.parse(await cli(["webhooks", "get", "--webhookId", WS, "--format", "json"]))
            .status === "SUSPENDED",
      );
      vars.WS = WS;
    }
    if (needsWebhook) {
      const W = await newWebhook();
      await created("tx-1", 2);
      await waitFor("two deliveries", () => capture.deliveries.length >= 2);
      await Deno.writeTextFile(`${tmp}/body.json`, capture.deliveries[0].body);
      const N = JSON.parse(
        (await cli(["notifications", "list", "--webhookId", W, "--format", "ndjson"]))
          .split("\n")[0],
      ).id;
      Object.assign(vars, { W, N, TX: "tx-1", SIGNATURE: capture.deliveries[0].signature });
    }
    // `service config set … --privateKey ./api.pem` stores the key file's path: give it one
    await Deno.copyFile(ready.privateKeyPath, `${tmp}/api.pem`);
    const env: Record<string, string> = cleanEnv({
      PATH: [bin, foundryBin("cast").replace(/\/cast$/, ""), Deno.env.get("PATH") ?? ""].join(":"),
      // profiles (service config) are written here, not into the user's config directory
      XDG_CONFIG_HOME: `${tmp}/config`,
      ...connection,
      NODE: anvil.url,
      ...vars,
      BASE: ready.apiBaseUrl,
      KEY: ready.apiKey,
      PEM: ready.privateKeyPath,
      ADMIN: ready.adminUrl,
    });
    const listenPort = freePort();
    let printedAddress = "";
    for (const { text, block } of toRun) {
      const line = text
        .replaceAll("127.0.0.1:8545", `127.0.0.1:${anvil.port}`)
        .replaceAll("--port 4000", `--port ${listenPort}`)
        .replaceAll("127.0.0.1:3000", `127.0.0.1:${capture.port}`)
        .replaceAll("http://127.0.0.1:PORT/TOKEN", printedAddress || "PORT/TOKEN")
        .replaceAll(
          "ws://127.0.0.1:PORT/TOKEN",
          printedAddress.replace(/^http:/, "ws:") || "PORT/TOKEN",
        )
        .replaceAll("npx -y deno@2.9.6 ", `"${deno}" `);
      const where = `${block}: ${text}`;
      if (Deno.env.get("README_TEST_DEBUG")) console.error(new Date().toISOString(), where);
      // the node the examples start is the test's anvil, already running (as in the walk-through
      // test): `sh -c "anvil &"` would leave an anvil holding the output pipe open
      if (line === "anvil &") continue;
      // lines that would spoil $W for the next ones act on a webhook of their own
      const lineEnv = /^service webhooks (delete|disable) /.test(line)
        ? { ...env, W: await newWebhook() }
        : env;
      if (LONG_RUNNING.some((p) => p.test(text))) {
        const [, ...args] = line.split(/\s+/).map((w) => w.replace(/^\$(\w+)$/, (_, v) => env[v]));
        const child = spawnCli(args, lineEnv, tmp);
        background.push({ line: text, child });
        if (/tail .*--follow/.test(line)) {
          // it prints when something happens: once it follows, make something happen
          await child.waitStderr("following notifications", 60_000);
          await created("tx-2");
        }
        const first = await child.waitLine(() => true, `the first line of ${where}`, 60_000);
        if (args[0] === "rpc") printedAddress = first.trim();
        // the examples' $BASE/$KEY/... stay the plain emulator's: one with custody delays would
        // make every later transaction example wait its minutes
        // (and one with a node: the examples after it send transactions)
        if (args[0] === "emulator" && line.includes("--rpcUrl") && !line.includes("Delay")) {
          const r = JSON.parse(first);
          Object.assign(env, {
            BASE: r.apiBaseUrl,
            KEY: r.apiKey,
            PEM: r.privateKeyPath,
            ADMIN: r.adminUrl,
          });
        }
        continue;
      }
      // `deno task` lines are "from a clone": they run in the checkout
      const r = await sh(line, /^(npx -y deno@\S+|deno) task /.test(text) ? ROOT : tmp, lineEnv);
      const expected = EXIT_CODES.find(([p]) => p.test(text))?.[1] ?? 0;
      assert.deepEqual(r.code, expected, `${where}\nexited ${r.code}: ${r.stderr.slice(-2000)}`);
      if (/eth_accounts/.test(line)) {
        assert.deepEqual(JSON.parse(r.stdout).result.length > 0, true, `${where}: ${r.stdout}`);
      }
    }
    for (const { line, child } of background.splice(0).reverse()) {
      assert.deepEqual(await child.stop("SIGINT"), 0, `${line}: ${child.stderr().slice(-2000)}`);
    }
  } finally {
    for (const { child } of background.reverse()) await child.stop("SIGKILL").catch(() => {});
    if (emulator) await emulator.stop("SIGINT");
    await anvil?.stop();
    await capture.close();
    await failing.shutdown();
    await Deno.remove(tmp, { recursive: true });
  }
}
