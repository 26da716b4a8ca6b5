/**
 * `service completions bash|zsh|fish` (issue #13): scripts generated from the
 * flag declarations. bash completes for real: the script is sourced in a
 * real `bash`, COMP_WORDS/COMP_CWORD are set as readline sets them, the
 * function is called and COMPREPLY is read back. fish completes for real
 * too (`complete -C`). zsh's completion system needs an interactive shell,
 * so zsh is checked for syntax and that loading the script registers
 * `_service` for both commands.
 */
import assert from "node:assert/strict";
import { memoryIo } from "../support/memory_io.ts";
import { assertPeer, hasCommand, skipWithout } from "../support/required.ts";
import { run } from "../../lib/cli/mod.ts";
import { COMMANDS } from "../../lib/cli/run.ts";

const haveZsh = await hasCommand("zsh", ["--version"]);
const haveFish = await hasCommand("fish", ["--version"]);

async function script(shell: string): Promise<string> {
  const io = memoryIo();
  assert.deepEqual(await run(["completions", shell], { io }), 0, io.err());
  const dir = await Deno.makeTempDir({ prefix: "service-completions-" });
  const path = `${dir}/service.${shell}`;
  await Deno.writeTextFile(path, io.out());
  return path;
}

async function sh(
  cmd: string,
  args: string[],
): Promise<{ code: number; out: string; err: string }> {
  const r = await new Deno.Command(cmd, {
    args,
    env: { HOME: "/nonexistent", TERM: "dumb" },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const td = new TextDecoder();
  return { code: r.code, out: td.decode(r.stdout), err: td.decode(r.stderr) };
}

/** What bash completes for the words typed (the last one is the word under the cursor). */
async function bashComplete(file: string, words: string[]): Promise<string[]> {
  const quoted = words.map((w) => `'${w}'`).join(" ");
  const fn = words[0] === "service-json-rpc" ? "_service_json_rpc" : "_service";
  const r = await sh("bash", [
    "-c",
    `source '${file}'; COMP_WORDS=(${quoted}); COMP_CWORD=${
      words.length - 1
    }; ${fn}; printf '%s\\n' "\${COMPREPLY[@]}"`,
  ]);
  assert.deepEqual(r.code, 0, r.err);
  assert.deepEqual(r.err, "");
  return r.out.split("\n").filter((l) => l !== "").sort();
}

/** The visible flags of a command or verb, from its declaration. */
async function flagsOf(command: string, verb?: string): Promise<string[]> {
  let c = await COMMANDS[command].load();
  if (verb) c = await c.verbs![verb].load();
  return Object.entries(c.flags!).filter(([, s]) => !s.hidden).map(([n]) => `--${n}`).sort();
}

Deno.test("a shell other than bash, zsh or fish is a usage error naming them", async () => {
  for (const args of [["completions"], ["completions", "powershell"]]) {
    const io = memoryIo();
    assert.deepEqual(await run(args, { io }), 2);
    assert.match(io.err(), /expected one of bash, zsh, fish/);
  }
});

Deno.test("bash completes commands, verbs, flags and flag values in a real bash", async () => {
  const f = await script("bash");
  try {
    assert.deepEqual(await bashComplete(f, ["service", "no"]), ["notifications"]);
    assert.deepEqual(await bashComplete(f, ["service", "co"]), ["completions", "config"]);
    assert.deepEqual(await bashComplete(f, ["service", "notifications", "res"]), [
      "resend",
      "resend-all",
      "resend-by-resource",
      "resend-failed",
    ]);
    assert.deepEqual(await bashComplete(f, ["service", "notifications", "list", "--ord"]), [
      "--order",
    ]);
    assert.deepEqual(await bashComplete(f, ["service", "notifications", "list", "--order", ""]), [
      "ASC",
      "DESC",
    ]);
    assert.deepEqual(
      await bashComplete(f, ["service", "breaker", "simulate", "x.ndjson", "--format", ""]),
      ["json", "ndjson", "table"],
    );
    assert.deepEqual(await bashComplete(f, ["service", "completions", "--noC"]), ["--noColor"]);
    // A flag that takes free text completes nothing of ours (bash falls back to file names).
    assert.deepEqual(
      await bashComplete(f, ["service", "notifications", "list", "--webhookId", ""]),
      [],
    );
    // Every visible flag of a verb, as declared, after "--".
    for (
      const [c, v] of [["notifications", "list"], ["webhooks", "listen"], ["breaker", "simulate"]]
    ) {
      assert.deepEqual(
        await bashComplete(f, ["service", c, v, "--"]),
        await flagsOf(c, v),
        `${c} ${v}`,
      );
    }
    assert.deepEqual(await bashComplete(f, ["service", "rpc", "--"]), await flagsOf("rpc"));
    // `service emulator` has flags of its own and a verb.
    assert.deepEqual(await bashComplete(f, ["service", "emulator", "tr"]), ["trigger"]);
    assert.deepEqual(await bashComplete(f, ["service", "emulator", "--vault"]), [
      "--vaultAccounts",
    ]);
    assert.deepEqual(
      await bashComplete(f, ["service", "emulator", "trigger", "--"]),
      await flagsOf("emulator", "trigger"),
    );
    // service-json-rpc is `service rpc`.
    assert.deepEqual(await bashComplete(f, ["service-json-rpc", "--emu"]), ["--emulator"]);
    // service help <command> <verb>.
    assert.deepEqual(await bashComplete(f, ["service", "help", "webh"]), ["webhooks"]);
    assert.deepEqual(await bashComplete(f, ["service", "help", "webhooks", "li"]), [
      "list",
      "listen",
    ]);
  } finally {
    await Deno.remove(f.replace(/\/[^/]+$/, ""), { recursive: true });
  }
});

Deno.test({
  name: "zsh: the script parses and registers _service for service and service-json-rpc",
  ignore: skipWithout(haveZsh),
  async fn() {
    assertPeer("zsh", haveZsh);
    const f = await script("zsh");
    try {
      const syntax = await sh("zsh", ["-n", f]);
      assert.deepEqual(syntax.code, 0, syntax.err);
      const dump = f.replace(/[^/]+$/, "zcompdump");
      const r = await sh("zsh", [
        "-fc",
        `autoload -U compinit; compinit -u -d '${dump}'; source '${f}'; ` +
        `print -r -- "\${_comps[service]} \${_comps[service-json-rpc]}"; whence -w _service_menu`,
      ]);
      assert.deepEqual(r.code, 0, r.err);
      assert.deepEqual(r.out.trim().split("\n"), ["_service _service", "_service_menu: function"]);
    } finally {
      await Deno.remove(f.replace(/\/[^/]+$/, ""), { recursive: true });
    }
  },
});

Deno.test({
  name: "fish completes commands, verbs, flags and flag values (complete -C)",
  ignore: skipWithout(haveFish),
  async fn() {
    assertPeer("fish", haveFish);
    const f = await script("fish");
    try {
      const syntax = await sh("fish", ["-n", f]);
      assert.deepEqual(syntax.code, 0, syntax.err);
      const complete = async (line: string) => {
        const r = await sh("fish", ["--no-config", "-c", `source '${f}'; complete -C '${line}'`]);
        assert.deepEqual(r.code, 0, r.err);
        return r.out.split("\n").filter((l) => l !== "").map((l) => l.split("\t")[0]).sort();
      };
      assert.deepEqual(await complete("service noti"), ["notifications"]);
      assert.deepEqual(await complete("service notifications resend-f"), ["resend-failed"]);
      assert.deepEqual(await complete("service notifications list --ord"), ["--order"]);
      assert.deepEqual(await complete("service notifications list --order "), ["ASC", "DESC"]);
      assert.deepEqual(await complete("service webhooks listen --forw"), [
        "--forwardTimeout",
        "--forwardTo",
      ]);
      assert.deepEqual(await complete("service-json-rpc --emu"), ["--emulator"]);
      const listFlags = await complete("service notifications list --");
      assert.deepEqual(listFlags, await flagsOf("notifications", "list"));
    } finally {
      await Deno.remove(f.replace(/\/[^/]+$/, ""), { recursive: true });
    }
  },
});

Deno.test("every command and verb is in the bash script", async () => {
  const f = await script("bash");
  try {
    const text = await Deno.readTextFile(f);
    for (const [name, entry] of Object.entries(COMMANDS)) {
      assert.ok(text.includes(name), name);
      for (const verb of Object.keys((await entry.load()).verbs ?? {})) {
        assert.ok(text.includes(`'${name} ${verb}')`), `${name} ${verb}`);
      }
    }
  } finally {
    await Deno.remove(f.replace(/\/[^/]+$/, ""), { recursive: true });
  }
});
