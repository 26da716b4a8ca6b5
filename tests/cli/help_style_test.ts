/**
 * Help in one style (issue #13): every command's and verb's `--help` is at
 * most 100 columns wide, writes every value placeholder as `<UPPER>`, lists
 * the command's own flags before the connection flags and those before the
 * common ones, and names flags in camelCase (the kebab-case spelling is an
 * accepted alias, never the one help teaches).
 */
import assert from "node:assert/strict";
import { memoryIo } from "../support/memory_io.ts";
import { run } from "../../lib/cli/mod.ts";
import { COMMANDS } from "../../lib/cli/run.ts";
import { connectionFlags } from "../../lib/cli/command.ts";
import { kebab } from "../../lib/cli/flags.ts";
import type { Command } from "../../lib/cli/command.ts";

/** Every help text: the top one, each command's, each verb's, with the flags of leaves. */
async function allHelp(): Promise<{ path: string; text: string; flags: string[] }[]> {
  const io = memoryIo();
  await run(["--help"], { io });
  const all = [{ path: "service", text: io.out(), flags: [] as string[] }];
  const add = (path: string, c: Command) => {
    assert.ok(c.help, `${path} renders its help`);
    all.push({ path, text: c.help(path), flags: Object.keys(c.flags ?? {}) });
  };
  for (const [name, entry] of Object.entries(COMMANDS)) {
    const c = await entry.load();
    add(`service ${name}`, c);
    for (const [verb, v] of Object.entries(c.verbs ?? {})) {
      add(`service ${name} ${verb}`, await v.load());
    }
  }
  return all;
}

const helps = await allHelp();

Deno.test("the help of every command and verb is rendered (and the same as --help prints)", async () => {
  assert.ok(helps.length >= 25, `${helps.length} help texts`);
  for (const h of helps.filter((h) => h.path.split(" ").length === 3).slice(0, 3)) {
    const io = memoryIo();
    assert.deepEqual(await run([...h.path.split(" ").slice(1), "--help"], { io }), 0);
    assert.deepEqual(io.out(), h.text);
  }
});

Deno.test("every help line is at most 100 columns", () => {
  for (const h of helps) {
    for (const line of h.text.split("\n")) {
      assert.ok([...line].length <= 100, `${h.path}: ${[...line].length} columns: ${line}`);
    }
  }
});

Deno.test("one placeholder style: <UPPER> in usage lines and flag lists", () => {
  for (const h of helps) {
    const beforeExamples = h.text.split("\nExamples:")[0];
    // The value of a flag, in a usage line or a flag list (positionals such as <command> aside).
    for (const m of beforeExamples.matchAll(/--[A-Za-z]+[ =](<[^>\s]*>)/g)) {
      assert.match(m[1], /^<[A-Z][A-Z0-9_|,.\-]*>$/, `${h.path}: placeholder ${m[1]}`);
    }
    // A flag in a usage line or a flag list is followed by <X>, never a bare X.
    for (const line of beforeExamples.split("\n")) {
      if (!/^(Usage:| {2}[-[])/.test(line)) continue;
      for (const m of line.matchAll(/--[A-Za-z]+ ([A-Z][A-Z0-9_|,.]*)\b/g)) {
        assert.ok(false, `${h.path}: bare placeholder ${m[1]} in: ${line}`);
      }
    }
  }
});

Deno.test("a command's own flags come first, then the connection flags, then the common ones", () => {
  const connection = new Set(Object.keys(connectionFlags));
  let withConnection = 0;
  for (const h of helps.filter((h) => h.flags.length)) {
    const own = h.text.indexOf("\nFlags:\n");
    const conn = h.text.indexOf("\nConnection flags:\n");
    const common = h.text.indexOf("\nCommon flags:\n");
    assert.ok(common > 0, `${h.path} has common flags`);
    if (conn !== -1) {
      withConnection++;
      assert.ok(own === -1 || own < conn, `${h.path}: own flags before connection flags`);
      assert.ok(conn < common, `${h.path}: connection flags before common flags`);
      const ownSection = own === -1 ? "" : h.text.slice(own, conn);
      for (const name of connection) {
        assert.ok(!ownSection.includes(`--${name} `), `${h.path}: --${name} in its own flags`);
      }
      const connSection = h.text.slice(conn, common);
      assert.match(connSection, /--(apiKey|apiBaseUrl) </, h.path);
    }
  }
  assert.ok(withConnection >= 15, `${withConnection} commands with connection flags`);
});

Deno.test("help names flags in camelCase, never in their kebab-case alias", () => {
  const names = new Set(helps.flatMap((h) => h.flags));
  for (const h of helps) {
    for (const name of names) {
      const k = kebab(name);
      if (k === name) continue;
      // What follows " -- " is the child's command line (cast's --rpc-url), not ours.
      const ours = h.text.replace(/ \\\n +/g, " ").split("\n").map((l) => l.split(" -- ")[0]).join(
        "\n",
      );
      assert.ok(
        !new RegExp(`--${k}\\b`).test(ours),
        `${h.path} writes --${k}; cli.md spells it --${name}`,
      );
    }
  }
});

Deno.test("--pollingInterval is the one name of the polling interval; --pollInterval still works", async () => {
  const resend = helps.find((h) => h.path === "service notifications resend-failed")!;
  assert.match(resend.text, /--pollingInterval <DURATION>/);
  assert.ok(!resend.text.includes("--pollInterval"), "the old name is hidden");
  const rpc = helps.find((h) => h.path === "service rpc")!;
  assert.match(rpc.text, /--pollingInterval <DURATION>/);
  for (const flag of ["--pollingInterval", "--pollInterval"]) {
    const io = memoryIo();
    const code = await run(
      ["notifications", "resend-failed", "--webhookId", "w", flag, "50ms"],
      { io },
    );
    assert.deepEqual(code, 2, flag);
    assert.match(io.err(), /a duration from 100ms to 10m/);
  }
});
