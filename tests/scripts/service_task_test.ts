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

import assert from "node:assert/strict";
import { ROOT, startAnvil } from "../support/tools.ts";
import { mainCommand } from "../support/main_command.ts";

async function task(args: string[], cwd: string) {
  const out = await mainCommand(args, {
    program: ["task", "--quiet", "--config", `${ROOT}deno.json`, "service"],
    cwd,
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
    assert.deepEqual(sim.code, 0, sim.stderr);
    assert.match(sim.stdout, /"type":"summary"/);
    const rpc = await task(["rpc", "--emulator", "--rpcUrl", anvil.url, "--", "pwd"], dir);
    assert.deepEqual(rpc.code, 0, rpc.stderr);
    assert.deepEqual(rpc.stdout.trim(), dir, "the child runs in the caller's directory");
    // the npm packages are checked in the process that runs the program (a preload), not in a
    // Deno process of their own first: the task's one `deno run` is the child's parent
    const tasks = JSON.parse(await Deno.readTextFile(`${ROOT}deno.json`)).tasks;
    assert.deepEqual(tasks.service.match(/deno run/g)?.length, 1, tasks.service);
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
    assert.deepEqual(parent.code, 0, parent.stderr);
    assert.match(parent.stdout, /--preload \S*scripts\/preload_deps\.ts \S*main\.ts rpc /);
    assert.deepEqual(lockExists(), lockBefore, "no deno.lock appeared in the checkout");
  } finally {
    await anvil.stop();
    await Deno.remove(dir, { recursive: true });
  }
});
