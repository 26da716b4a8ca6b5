/**
 * `deno task service ...` behaves as the installed `service` does: it runs in
 * the caller's directory (deno tasks start in the config's directory; the
 * task goes back to `INIT_CWD`), so relative paths and the child of `rpc`
 * are the user's; and it leaves no `deno.lock` in the checkout (locking is
 * off on purpose: package-lock.json locks the npm packages, there are no
 * remote imports). How it was seen to fail: with the old task
 * (`deno run -A main.ts`) the relative file is not found and `pwd` prints the
 * checkout.
 */

import { assertEquals, assertMatch } from "../support/expect.ts";
import { ROOT, startAnvil } from "../support/tools.ts";

async function task(args: string[], cwd: string) {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["task", "--quiet", "--config", `${ROOT}deno.json`, "service", ...args],
    cwd,
    clearEnv: true,
    env: {
      PATH: Deno.env.get("PATH") ?? "",
      HOME: Deno.env.get("HOME") ?? "/tmp",
      ...(Deno.env.get("DENO_DIR") ? { DENO_DIR: Deno.env.get("DENO_DIR")! } : {}),
      DENO_TLS_CA_STORE: "system",
      RUST_BACKTRACE: "0",
      NO_COLOR: "1",
    },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
    signal: AbortSignal.timeout(60_000),
  }).output();
  const dec = new TextDecoder();
  return { code: out.code, stdout: dec.decode(out.stdout), stderr: dec.decode(out.stderr) };
}

function lockExists(): boolean {
  try {
    Deno.statSync(`${ROOT}deno.lock`);
    return true;
  } catch {
    return false;
  }
}

Deno.test("deno task service runs in the caller's directory and leaves no deno.lock", async () => {
  const lockBefore = lockExists();
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "service-task-" }));
  const anvil = await startAnvil();
  try {
    await Deno.copyFile(
      `${ROOT}tests/fixtures/breaker/band_4h_quiet.ndjson`,
      `${dir}/deliveries.ndjson`,
    );
    const sim = await task(["breaker", "simulate", "deliveries.ndjson", "--format", "ndjson"], dir);
    assertEquals(sim.code, 0, sim.stderr);
    assertMatch(sim.stdout, /"type":"summary"/);
    const rpc = await task(["rpc", "--emulator", "--rpcUrl", anvil.url, "--", "pwd"], dir);
    assertEquals(rpc.code, 0, rpc.stderr);
    assertEquals(rpc.stdout.trim(), dir, "the child runs in the caller's directory");
    // the npm packages are checked in the process that runs the program (a preload), not in a
    // Deno process of their own first: the task's one `deno run` is the child's parent
    const tasks = JSON.parse(await Deno.readTextFile(`${ROOT}deno.json`)).tasks;
    assertEquals(tasks.service.match(/deno run/g)?.length, 1, tasks.service);
    const parent = await task(
      [
        "rpc",
        "--emulator",
        "--rpcUrl",
        anvil.url,
        "--",
        "sh",
        "-c",
        "tr '\\0' ' ' < /proc/$PPID/cmdline",
      ],
      dir,
    );
    assertEquals(parent.code, 0, parent.stderr);
    assertMatch(parent.stdout, /--preload \S*scripts\/preload_deps\.ts \S*main\.ts rpc /);
    assertEquals(lockExists(), lockBefore, "no deno.lock appeared in the checkout");
  } finally {
    await anvil.stop();
    await Deno.remove(dir, { recursive: true });
  }
});
