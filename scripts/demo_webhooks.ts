/**
 * The webhook half of `deno task demo` (alone: `deno task demo webhooks`):
 * no chain at all. Starts `service emulator` without `--rpcUrl` (webhooks
 * only), a `service webhooks listen` receiver, registers it with
 * `service webhooks create`, fires three events with `service emulator
 * trigger`, shows the signed deliveries, and resends the last 24 hours with
 * one platform call (`service notifications resend-all --wait`).
 *
 * @module
 */

/** A spawned `service` process whose standard output is read line by line. */
interface Spawned {
  /** The next line of standard output. */
  line(): Promise<string>;
  /** SIGTERM and wait. */
  stop(): Promise<void>;
}

function spawnService(root: string, args: string[], env: Record<string, string>): Spawned {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", `${root}main.ts`, ...args],
    env: { NO_COLOR: "1", RUST_BACKTRACE: "0", ...env },
    stdout: "piped",
    stderr: "null",
  }).spawn();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  return {
    async line() {
      for (;;) {
        const i = buffer.indexOf("\n");
        if (i >= 0) {
          const l = buffer.slice(0, i);
          buffer = buffer.slice(i + 1);
          return l;
        }
        const { value, done } = await reader.read();
        if (done) throw new Error(`service ${args[0]} ended early`);
        buffer += value;
      }
    },
    async stop() {
      try {
        child.kill("SIGTERM");
      } catch { /* already gone */ }
      await child.status;
      await reader.cancel().catch(() => {});
    },
  };
}

async function service(
  root: string,
  args: string[],
  env: Record<string, string>,
): Promise<string> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", `${root}main.ts`, ...args],
    env: { NO_COLOR: "1", RUST_BACKTRACE: "0", ...env },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder().decode(out.stdout).trim();
  const err = new TextDecoder().decode(out.stderr).trim();
  if (out.code !== 0) throw new Error(`service ${args.join(" ")}: exit ${out.code}\n${err}`);
  return [text, err].filter(Boolean).join("\n");
}

/** Runs the webhook demo; `bold` styles the headings. */
export async function webhooksDemo(root: string, bold: (s: string) => string): Promise<void> {
  const show = (title: string, cmd: string) => console.log(`\n${bold("▶ " + title)}\n  $ ${cmd}`);
  show("A webhook-only emulator: no chain, no --rpcUrl", "service emulator --timeScale 1000");
  const emu = spawnService(root, ["emulator", "--timeScale", "1000"], {});
  let listen: Spawned | undefined;
  try {
    const ready = JSON.parse(await emu.line());
    console.log(`  ready: ${ready.apiBaseUrl} (console ${ready.consoleUrl.split("?")[0]})`);
    const env = {
      SERVICE_API_BASE_URL: ready.apiBaseUrl,
      SERVICE_API_KEY: ready.apiKey,
      SERVICE_API_PRIVATE_KEY_PATH: ready.privateKeyPath,
    };
    show("A local receiver that verifies signatures", "service webhooks listen --port 0");
    listen = spawnService(root, ["webhooks", "listen", "--port", "0", "--format", "table"], env);
    const hookUrl = await listen.line();
    console.log(`  listening on ${hookUrl}`);
    show(
      "Register it",
      `service webhooks create --url ${hookUrl} --events transaction.created --format json`,
    );
    const hook = JSON.parse(
      await service(root, [
        "webhooks",
        "create",
        "--url",
        hookUrl,
        "--events",
        "transaction.created",
        "--format",
        "json",
      ], env),
    );
    console.log(`  webhook ${hook.id}: ${hook.status}`);
    const wenv = { ...env, SERVICE_WEBHOOK_ID: hook.id };
    show(
      "Fire three events",
      "service emulator trigger --eventType transaction.created --resourceId tx-1 --count 3",
    );
    await service(root, [
      "emulator",
      "trigger",
      "--eventType",
      "transaction.created",
      "--resourceId",
      "tx-1",
      "--count",
      "3",
    ], env);
    for (let i = 0; i < 3; i++) console.log(`  [listen] ${await listen.line()}`);
    show(
      "Resend the last 24 hours: one platform call, a job",
      "service notifications resend-all --wait",
    );
    console.log(
      (await service(root, ["notifications", "resend-all", "--wait"], wenv)).split("\n")
        .map((l) => `  ${l}`).join("\n"),
    );
    for (let i = 0; i < 3; i++) console.log(`  [listen] ${await listen.line()}`);
  } finally {
    await listen?.stop();
    await emu.stop();
  }
}
