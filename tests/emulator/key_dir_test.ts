/**
 * No secret left behind: the in-memory emulator's key directory
 * (`service-emulator-<pid>-*` holding `api.pem`) is removed on every exit
 * path. SIGINT, SIGTERM and SIGHUP are sent to the whole process group, as a
 * terminal does (the emulator is spawned in a new session, `detached`):
 * under `deno task service emulator` the task runner and the emulator both
 * get Ctrl-C, the case that left `api.pem` behind. Where no code runs
 * (SIGKILL, a crash), the next emulator removes the directories of dead
 * owners, and only those of this user whose process is dead.
 *
 * Each emulator runs with its own TMPDIR, so the sweep is observable and
 * touches nothing else. How it was seen to fail: with the signals released
 * before `emu.stop()` (the old code) the `deno task` case keeps the
 * directory; without `removeStaleOwnedDirs` the SIGKILL case does.
 */

import assert from "node:assert/strict";
import { ROOT, startAnvil } from "../support/tools.ts";
import { mainCommand } from "../support/main_command.ts";

interface Running {
  child: Deno.ChildProcess;
  ready: { privateKeyPath: string };
  /** All of standard error, once the process has ended. */
  stderr: Promise<string>;
  /** Resolves when standard error contains `text`. */
  waitStderr(text: string): Promise<void>;
}

async function exists(p: string): Promise<boolean> {
  try {
    await Deno.lstat(p);
    return true;
  } catch {
    return false;
  }
}

/** Spawns `deno <args>` in a new session (its own process group) and waits for the ready line. */
async function spawnGroup(args: string[], tmpdir: string, cwd: string): Promise<Running> {
  const child = mainCommand([], { program: args, cwd, env: { TMPDIR: tmpdir }, detached: true })
    .spawn();
  let err = "";
  const waiters = new Set<() => void>();
  const stderr = (async () => {
    for await (const chunk of child.stderr.pipeThrough(new TextDecoderStream())) {
      err += chunk;
      for (const w of [...waiters]) w();
    }
    return err;
  })();
  const waitStderr = (text: string) =>
    new Promise<void>((resolve) => {
      const check = () => {
        if (!err.includes(text)) return;
        waiters.delete(check);
        resolve();
      };
      waiters.add(check);
      check();
    });
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let text = "";
  while (!text.includes("\n")) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`no ready line: ${await stderr}`);
    text += value;
  }
  void reader.closed.catch(() => {});
  // keep reading (and discard) so the child never blocks on a full pipe
  void (async () => {
    try {
      while (!(await reader.read()).done) { /* discard */ }
    } catch { /* cancelled */ }
  })();
  return { child, ready: JSON.parse(text.split("\n")[0]), stderr, waitStderr };
}

const emulatorArgs = (
  rpcUrl: string,
) => ["run", "-A", `${ROOT}main.ts`, "emulator", "--rpcUrl", rpcUrl];

async function signalGroupAndCheck(
  run: Running,
  signal: Deno.Signal,
): Promise<void> {
  const dir = run.ready.privateKeyPath.replace(/\/api\.pem$/, "");
  assert.ok(await exists(run.ready.privateKeyPath), "api.pem exists while the emulator runs");
  Deno.kill(-run.child.pid, signal);
  await run.child.status;
  const err = await run.stderr;
  assert.deepEqual(await exists(dir), false, `${signal} to the group left ${dir}: ${err}`);
}

Deno.test("emulator key directory: removed on SIGINT/SIGTERM/SIGHUP to the group, also under deno task", async (t) => {
  const anvil = await startAnvil();
  const tmp = await Deno.makeTempDir({ prefix: "emu-keydir-" });
  try {
    await t.step(
      "Ctrl-C to `deno task service emulator` (runner and emulator both get SIGINT)",
      async () => {
        const run = await spawnGroup(
          [
            "task",
            "--quiet",
            "--config",
            `${ROOT}deno.json`,
            "service",
            "emulator",
            "--rpcUrl",
            anvil.url,
          ],
          tmp,
          tmp,
        );
        await signalGroupAndCheck(run, "SIGINT");
      },
    );
    await t.step("Ctrl-C twice: the second arrives while the emulator is stopping", async () => {
      const run = await spawnGroup(emulatorArgs(anvil.url), tmp, tmp);
      const dir = run.ready.privateKeyPath.replace(/\/api\.pem$/, "");
      // Back to back: the second comes while the first is being handled (the emulator now stops
      // fast enough that waiting for its "stopping" line first could find the group gone).
      Deno.kill(-run.child.pid, "SIGINT");
      try {
        Deno.kill(-run.child.pid, "SIGINT");
      } catch (e) {
        if (!(e instanceof Deno.errors.NotFound)) throw e; // the group had already ended
      }
      await run.waitStderr("stopping (SIGINT)");
      await run.child.status;
      assert.deepEqual(
        await exists(dir),
        false,
        `a second Ctrl-C left ${dir}: ${await run.stderr}`,
      );
    });
    for (const signal of ["SIGTERM", "SIGHUP"] as const) {
      await t.step(`${signal} to the emulator's group`, async () => {
        const run = await spawnGroup(emulatorArgs(anvil.url), tmp, tmp);
        await signalGroupAndCheck(run, signal);
      });
    }
    assert.deepEqual([...Deno.readDirSync(tmp)].map((e) => e.name), []);
  } finally {
    await anvil.stop();
    await Deno.remove(tmp, { recursive: true });
  }
});

Deno.test("emulator key directory: after SIGKILL the next emulator removes it, and only dead owners' ones", async () => {
  const anvil = await startAnvil();
  const tmp = await Deno.makeTempDir({ prefix: "emu-keydir-" });
  try {
    const killed = await spawnGroup(emulatorArgs(anvil.url), tmp, tmp);
    const killedDir = killed.ready.privateKeyPath.replace(/\/api\.pem$/, "");
    Deno.kill(-killed.child.pid, "SIGKILL");
    await killed.child.status;
    await killed.stderr;
    assert.ok(await exists(killed.ready.privateKeyPath), "SIGKILL leaves the key (no code ran)");
    // a live owner's directory (this test's process) and an old-style one without a pid stay
    const live = `${tmp}/service-emulator-${Deno.pid}-live`;
    const noPid = `${tmp}/service-emulator-oldstyle`;
    await Deno.mkdir(live);
    await Deno.mkdir(noPid);
    const next = await spawnGroup(emulatorArgs(anvil.url), tmp, tmp);
    try {
      assert.deepEqual(await exists(killedDir), false, "the dead emulator's directory is removed");
      assert.ok(await exists(live), "a live process's directory stays");
      assert.ok(await exists(noPid), "a directory with no owner pid stays");
    } finally {
      await signalGroupAndCheck(next, "SIGINT");
    }
  } finally {
    await anvil.stop();
    await Deno.remove(tmp, { recursive: true });
  }
});
