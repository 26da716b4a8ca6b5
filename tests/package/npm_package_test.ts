/**
 * The npm package as users get it: `deno task pack`'s tarball
 * (`dist/service-cli-<version>.tgz`, holding the bundle — entry and chunks — that `deno compile` also embeds) installed with `npm install -g` into a
 * temporary prefix with an empty HOME, its Deno runtime resolved by npm as
 * an optional dependency from a registry (a local one, see
 * `local_registry.ts`); then, with the registry pointed at
 * `http://127.0.0.1:9` so nothing can be fetched, and no `deno` on PATH, the
 * commands `service` and `service-json-rpc` run: the version, the seed's
 * `eth_accounts` example through the drop-in name against a real anvil, and
 * `breaker simulate` on a fixture (compared with the source run). Also
 * `npx`, exit codes and signals through the launcher, the permissions Deno
 * gets (exactly the listed ones: no `-A`, no `--allow-ffi`), the platform
 * commands (`whoami`, `webhooks create`/`list`) against the package's own
 * emulator, and the emulator's key directory removed when Ctrl-C reaches the
 * launcher's whole process group.
 *
 * @module
 */

import assert from "node:assert/strict";
import { ROOT, runCli, startAnvil } from "../support/tools.ts";
import { pack, PACKAGE_NAME } from "../../scripts/pack.ts";
import {
  LAUNCH_FLAGS,
  PERMISSIONS,
  RPC_V8_FLAGS,
  RUNTIME_FLAGS,
  V8_FLAGS,
} from "../../scripts/bundle.ts";
import { startLocalRegistry } from "./local_registry.ts";

const DENO_PACKAGE = "@deno/linux-x64-glibc";
const VERSION = JSON.parse(await Deno.readTextFile(`${ROOT}deno.json`)).version;
const FIXTURE = `${ROOT}tests/fixtures/breaker/band_4h_quiet.ndjson`;
const OFFLINE = "http://127.0.0.1:9";

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** A user's environment: empty HOME, no deno on PATH, the registry unreachable (unless given). */
function userEnv(tmp: string, registry = OFFLINE): Record<string, string> {
  // system directories, less any that holds a deno (a machine may link one into /usr/local/bin)
  const path = ["/usr/local/bin", "/usr/bin", "/bin"].filter((d) => !existsSync(`${d}/deno`));
  const node = new TextDecoder().decode(
    new Deno.Command("sh", { args: ["-c", "command -v node"] }).outputSync().stdout,
  ).trim();
  return {
    PATH: [`${tmp}/prefix/bin`, node.replace(/\/node$/, ""), ...path].join(":"),
    HOME: `${tmp}/home`,
    npm_config_registry: registry,
    npm_config_cache: `${tmp}/home/.npm`,
    npm_config_update_notifier: "false",
    NO_COLOR: "1",
  };
}

async function sh(
  cmd: string,
  args: string[],
  env: Record<string, string>,
  cwd: string,
  timeoutMs = 60_000,
): Promise<Run> {
  const out = await new Deno.Command(cmd, {
    args,
    env,
    clearEnv: true,
    cwd,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
    signal: AbortSignal.timeout(timeoutMs),
  }).output();
  const dec = new TextDecoder();
  return { code: out.code, stdout: dec.decode(out.stdout), stderr: dec.decode(out.stderr) };
}

function existsSync(p: string): boolean {
  try {
    Deno.lstatSync(p);
    return true;
  } catch {
    return false;
  }
}

async function exists(p: string): Promise<boolean> {
  try {
    await Deno.lstat(p);
    return true;
  } catch {
    return false;
  }
}

Deno.test("npm package: packed, installed -g offline with an empty HOME, service and service-json-rpc run", async (t) => {
  const tmp = await Deno.makeTempDir({ prefix: "service-pkg-test-" });
  await Deno.mkdir(`${tmp}/home`);
  await Deno.mkdir(`${tmp}/work`);
  const anvil = await startAnvil();
  try {
    // packed into this test's own directory: `deno task pack` (the README test) may run beside it
    const dist = `${tmp}/dist/`;
    const tarball = await pack(dist);
    assert.deepEqual(tarball, `${dist}${PACKAGE_NAME}-${VERSION}.tgz`);
    const listing = await sh("tar", ["tzf", tarball], userEnv(tmp), tmp);
    const files = listing.stdout.trim().split("\n").sort();
    // the program's chunks (one per lazily loaded part, hashed names) are the only other files
    const chunks = files.filter((f) => /^package\/lib\/program\/[\w-]+-[A-Z0-9]{8}\.js$/.test(f));
    assert.ok(chunks.length >= 10, `the program is split into chunks: ${files.join(" ")}`);
    // split so that a start parses only what its command needs: the entry is the dispatch only
    const program = `${dist}npm/lib/program/`;
    const entry = await Deno.readTextFile(`${program}service.js`);
    let total = 0;
    for await (const e of Deno.readDir(program)) total += (await Deno.stat(program + e.name)).size;
    assert.ok(entry.length * 20 < total, `entry ${entry.length} bytes of ${total}`);
    assert.ok(!entry.includes("SubscriptionHub"), "the bridge's code is in its own chunk");
    // the reference the README links to (docs/*.md) ships beside it
    const docs = [...Deno.readDirSync(new URL("../../docs/", import.meta.url))]
      .filter((e) => e.name.endsWith(".md")).map((e) => `package/docs/${e.name}`).sort();
    assert.ok(docs.length >= 5, `docs: ${docs}`);
    assert.deepEqual(files.filter((f) => !chunks.includes(f)), [
      "package/README.md",
      "package/bin/service-json-rpc.cjs",
      "package/bin/service.cjs",
      ...docs,
      "package/lib/launch.cjs",
      "package/lib/program/service.js",
      "package/package.json",
    ]);

    const registry = await startLocalRegistry([DENO_PACKAGE], tmp);
    try {
      await t.step("npm install -g resolves the Deno runtime from the registry", async () => {
        const r = await sh(
          "npm",
          ["install", "-g", "--prefix", `${tmp}/prefix`, "--no-audit", "--no-fund", tarball],
          userEnv(tmp, registry.url),
          `${tmp}/work`,
        );
        assert.deepEqual(r.code, 0, r.stderr);
        assert.ok(registry.requested.includes(DENO_PACKAGE), registry.requested.join(","));
        const installed = `${tmp}/prefix/lib/node_modules/${PACKAGE_NAME}`;
        assert.ok(await exists(`${installed}/node_modules/${DENO_PACKAGE}/deno`), "deno runtime");
        assert.ok(
          await exists(`${tmp}/prefix/bin/service`) &&
            await exists(`${tmp}/prefix/bin/service-json-rpc`),
        );
      });
      await t.step("npx runs the package (fresh npx cache, its default command)", async () => {
        const r = await sh(
          "npm",
          // what `npx -y service-cli --version` runs: the bin named after the package
          ["exec", "--yes", `--package=${tarball}`, "--", PACKAGE_NAME, "--version"],
          { ...userEnv(tmp, registry.url), PATH: userEnv(tmp).PATH.split(":").slice(1).join(":") },
          `${tmp}/work`,
        );
        assert.deepEqual(r.code, 0, r.stderr);
        assert.deepEqual(r.stdout.trim(), `service ${VERSION}`);
      });
    } finally {
      await registry.close();
    }
    const env = userEnv(tmp);
    // the user's PATH has no deno: the runtime can only come from the package
    assert.deepEqual(
      (await sh("sh", ["-c", "command -v deno || echo none"], env, tmp)).stdout.trim(),
      "none",
    );
    await Deno.remove(`${tmp}/home/.npm`, { recursive: true });

    await t.step("service --version and service-json-rpc --version, offline", async () => {
      for (const command of ["service", "service-json-rpc"]) {
        const r = await sh(command, ["--version"], env, `${tmp}/work`);
        assert.deepEqual(r.code, 0, r.stderr);
        assert.deepEqual(r.stdout.trim(), `service ${VERSION}`);
      }
    });

    await t.step(
      "service-json-rpc --http --emulator -- curl eth_accounts (the seed's example)",
      async () => {
        const r = await sh(
          "service-json-rpc",
          [
            "--http",
            "--emulator",
            "--rpcUrl",
            `http://127.0.0.1:${anvil.port}`,
            "--",
            "curl",
            "-s",
            "-X",
            "POST",
            "-H",
            "Content-Type: application/json",
            "--data",
            '{"method":"eth_accounts","id":1,"jsonrpc":"2.0"}',
            "{}",
          ],
          env,
          `${tmp}/work`,
        );
        assert.deepEqual(r.code, 0, r.stderr);
        const reply = JSON.parse(r.stdout);
        assert.deepEqual(reply.id, 1);
        // anvil's first funded account: the emulator's vault account 0 (anvil's mnemonic)
        assert.deepEqual(
          reply.result[0].toLowerCase(),
          "0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266",
        );
      },
    );

    await t.step(
      "the program runs with the package's V8 and launch flags and permissions",
      async () => {
        // the bridge's child reads the command line of its parent: the Deno process running rpc
        const cmdline = "tr '\\0' '\\n' < /proc/$PPID/cmdline";
        const args = ["--emulator", "--rpcUrl", `http://127.0.0.1:${anvil.port}`, "--", "sh", "-c"];
        const rpc = await sh("service-json-rpc", [...args, cmdline], env, `${tmp}/work`);
        assert.deepEqual(rpc.code, 0, rpc.stderr);
        const argv = rpc.stdout.split("\n");
        // rpc's own V8 flags (the emulator's are checked below: the others')
        assert.ok(argv.includes(`--v8-flags=${RPC_V8_FLAGS.join(",")}`), rpc.stdout);
        for (const f of [...LAUNCH_FLAGS, ...RUNTIME_FLAGS]) {
          assert.ok(argv.includes(f), `${f}: ${rpc.stdout}`);
        }
        // exactly the listed permissions: no -A, no FFI, system information only the user id
        assert.deepEqual(argv.filter((a) => /^(-A|--allow-|--deny-|--no-prompt)/.test(a)), [
          "--allow-net",
          "--allow-read",
          "--allow-write",
          "--allow-env",
          "--allow-run",
          "--allow-sys=uid",
          "--no-prompt",
        ]);
        assert.deepEqual(
          argv.filter((a) => a.startsWith("--allow-")).length,
          PERMISSIONS.length - 1,
        );
        assert.ok(argv.some((a) => a.endsWith("/lib/program/service.js")), rpc.stdout);
        const viaService = await sh("service", ["rpc", ...args, cmdline], env, `${tmp}/work`);
        assert.deepEqual(viaService.code, 0, viaService.stderr);
        assert.deepEqual(viaService.stdout, rpc.stdout);
      },
    );

    await t.step("the child's exit code comes back through the launcher", async () => {
      const r = await sh(
        "service-json-rpc",
        [
          "--emulator",
          "--rpcUrl",
          `http://127.0.0.1:${anvil.port}`,
          "--",
          "sh",
          "-c",
          "exit 7",
        ],
        env,
        `${tmp}/work`,
      );
      assert.deepEqual(r.code, 7, r.stderr);
      const usage = await sh("service", ["breaker", "simulate", "--window", "0"], env, tmp);
      assert.deepEqual(usage.code, 2, usage.stderr);
    });

    await t.step("service breaker simulate on a fixture, in the caller's directory", async () => {
      await Deno.copyFile(FIXTURE, `${tmp}/work/deliveries.ndjson`);
      const r = await sh(
        "service",
        ["breaker", "simulate", "deliveries.ndjson", "--format", "ndjson"],
        env,
        `${tmp}/work`,
      );
      assert.deepEqual(r.code, 0, r.stderr);
      const source = await runCli(["breaker", "simulate", FIXTURE, "--format", "ndjson"]);
      assert.deepEqual(source.code, 0, source.stderr);
      assert.deepEqual(r.stdout, source.stdout);
      assert.match(r.stdout, /"type":"summary"/);
    });

    await t.step(
      "Ctrl-C to the launcher's process group stops the emulator and removes its key",
      async () => {
        const child = new Deno.Command("service", {
          args: ["emulator", "--rpcUrl", `http://127.0.0.1:${anvil.port}`],
          env,
          clearEnv: true,
          cwd: `${tmp}/work`,
          detached: true,
          stdin: "null",
          stdout: "piped",
          stderr: "piped",
        }).spawn();
        const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
        let text = "";
        while (!text.includes("\n")) {
          const { value, done } = await reader.read();
          if (done) break;
          text += value;
        }
        const ready = JSON.parse(text.split("\n")[0]);
        const dir = ready.privateKeyPath.replace(/\/api\.pem$/, "");
        assert.ok(await exists(ready.privateKeyPath), "the key exists while the emulator runs");
        // the platform commands through the package: request tokens signed (RS256) and checked
        const platform = {
          ...env,
          SERVICE_API_KEY: ready.apiKey,
          SERVICE_API_PRIVATE_KEY_PATH: ready.privateKeyPath,
          SERVICE_API_BASE_URL: ready.apiBaseUrl,
        };
        const who = await sh("service", ["whoami", "--format", "json"], platform, `${tmp}/work`);
        assert.deepEqual(who.code, 0, who.stderr);
        assert.deepEqual(JSON.parse(who.stdout).environment, "local");
        const made = await sh(
          "service",
          [
            "webhooks",
            "create",
            "--url",
            "http://127.0.0.1:9/hook",
            "--events",
            "transaction.created",
            "--format",
            "json",
          ],
          platform,
          `${tmp}/work`,
        );
        assert.deepEqual(made.code, 0, made.stderr);
        const webhookId = JSON.parse(made.stdout).id;
        const list = await sh(
          "service",
          ["webhooks", "list", "--format", "ndjson"],
          platform,
          `${tmp}/work`,
        );
        assert.deepEqual(list.code, 0, list.stderr);
        assert.ok(list.stdout.includes(webhookId), list.stdout);
        // Ctrl-C on a terminal reaches the launcher and Deno (one process group): a clean stop,
        // exit 0 every time (it was 0 or 130 at random while the launcher's copy killed Deno)
        for (
          const args of [
            ["webhooks", "listen", "--port", "0"],
            ["notifications", "tail", "--webhookId", webhookId, "--follow", "--interval", "100ms"],
          ]
        ) {
          for (let i = 0; i < 3; i++) {
            const r = await ctrlCOnTerminal(["service", ...args], platform, `${tmp}/work`);
            assert.deepEqual(r.code, 0, `${args.slice(0, 2).join(" ")} run ${i + 1}: ${r.raw}`);
            assert.match(r.raw, /stopped \(SIGINT\)/);
          }
        }
        // the Deno process (the launcher's child) runs with the package's V8 flags
        const deno = (await Deno.readTextFile(`/proc/${child.pid}/task/${child.pid}/children`))
          .trim().split(" ")[0];
        const argv = (await Deno.readTextFile(`/proc/${deno}/cmdline`)).split("\0");
        assert.ok(
          argv.includes("emulator") && argv.includes(`--v8-flags=${V8_FLAGS.join(",")}`),
          argv.join(" "),
        );
        Deno.kill(-child.pid, "SIGINT"); // node and deno both get it, as from a terminal
        const [status, err] = await Promise.all([
          child.status,
          new Response(child.stderr).text(),
          reader.cancel(),
        ]);
        assert.deepEqual(status.code, 0, err);
        assert.deepEqual(await exists(dir), false, `${dir} left behind`);
      },
    );
  } finally {
    await anvil.stop();
    await Deno.remove(tmp, { recursive: true });
  }
});

/**
 * Runs `command` on a pseudo-terminal (util-linux `script`), waits until it says "Ctrl-C to
 * stop", then types Ctrl-C: the terminal sends SIGINT to its foreground process group, here
 * the npm launcher (node) and the Deno process it started. Returns the exit code and the screen.
 */
async function ctrlCOnTerminal(
  command: string[],
  env: Record<string, string>,
  cwd: string,
): Promise<{ code: number; raw: string }> {
  const line = command.map((a) => `'${a}'`).join(" ");
  const child = new Deno.Command("script", {
    args: ["-qec", `stty cols 200; exec ${line}`, "/dev/null"],
    env,
    clearEnv: true,
    cwd,
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const writer = child.stdin.getWriter();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let raw = "";
  while (!raw.includes("Ctrl-C to stop")) {
    const { value, done } = await reader.read();
    if (done) break;
    raw += value;
  }
  await writer.write(new TextEncoder().encode("\x03"));
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    raw += value;
  }
  const [status, err] = await Promise.all([child.status, new Response(child.stderr).text()]);
  await writer.close().catch(() => {});
  return { code: status.code, raw: raw + err };
}
