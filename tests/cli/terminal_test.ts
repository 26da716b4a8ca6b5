/**
 * The terminal (issue #13): progress on its own line and erased before any
 * output, `| head` ending quietly, tables that fit the terminal (`--wide` for
 * everything, pipes unchanged), suggestions for mistyped commands and verbs,
 * `service help <command> [verb]`, `--json` and `--no-color`.
 *
 * Terminal behaviour runs on a real pseudo-terminal (util-linux `script`, its
 * width set with `stty cols`), and the broken pipe through a real `| head`
 * in bash. What a user sees is read back through {@linkcode screen}, a small
 * terminal model (carriage return, erase line, newline), so a progress line
 * glued to a row shows up as the glued row a user would see.
 */
import assert from "node:assert/strict";
import { memoryIo } from "../support/memory_io.ts";
import { startFixture } from "../support/emulator_fixture.ts";
import { ROOT, runCli } from "../support/tools.ts";
import { cleanEnv } from "../support/main_command.ts";
import { assertPeer, hasCommand, skipWithout } from "../support/required.ts";
import { type Io, Output, run } from "../../lib/cli/mod.ts";
import { shortenMiddle } from "../../lib/cli/output.ts";

const haveScript = await hasCommand("script", ["-V"]);

/**
 * What a terminal shows for `raw`: `\r` goes back to the first column,
 * `ESC[2K`/`ESC[K` erase the line (from the cursor), `\n` starts the next
 * line; other escape sequences (colours) take no room.
 */
function screen(raw: string): string[] {
  const lines: string[] = [];
  let line: string[] = [];
  let col = 0;
  for (let i = 0; i < raw.length; i++) {
    const ch = raw[i];
    if (ch === "\x1b") {
      // deno-lint-ignore no-control-regex
      const m = /^\x1b\[([0-9;?]*)([A-Za-z])/.exec(raw.slice(i));
      if (m) {
        if (m[2] === "K") line = m[1] === "2" ? [] : line.slice(0, col);
        i += m[0].length - 1;
        continue;
      }
    }
    if (ch === "\r") col = 0;
    else if (ch === "\n") {
      lines.push(line.join("").trimEnd());
      line = [];
      col = 0;
    } else {
      line[col++] = ch;
    }
  }
  if (line.length) lines.push(line.join("").trimEnd());
  return lines;
}

/**
 * Runs the CLI on a pseudo-terminal `cols` columns wide; returns what was written to it.
 * `columnsVar`: the `COLUMNS` the CLI sees (`script` sets its own, so it is set inside).
 */
async function onTerminal(
  args: string[],
  env: Record<string, string>,
  cols = 100,
  columnsVar?: number,
): Promise<{ code: number; raw: string }> {
  const cli = [Deno.execPath(), "run", "-A", `${ROOT}main.ts`, ...args].map((a) => `'${a}'`)
    .join(" ");
  const columns = columnsVar === undefined ? "unset COLUMNS" : `export COLUMNS=${columnsVar}`;
  const r = await new Deno.Command("script", {
    args: ["-qec", `stty cols ${cols} rows 50; ${columns}; exec ${cli}`, "/dev/null"],
    clearEnv: true,
    env: cleanEnv(env),
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const td = new TextDecoder();
  return { code: r.code, raw: td.decode(r.stdout) + td.decode(r.stderr) };
}

Deno.test("screen(): a progress line not erased before a row shows glued to it", () => {
  assert.deepEqual(screen("\r\x1b[2Kfetched 1\r\x1b[2Kid1\n"), ["id1"]);
  assert.deepEqual(screen("\r\x1b[2Kfetched 1id1\n"), ["fetched 1id1"]);
  assert.deepEqual(screen("ab\r\ncd\r\n"), ["ab", "cd"]);
});

Deno.test({
  name: "on a 100-column terminal, list --all: progress never glued to a row, rows fit, ids cut",
  ignore: skipWithout(haveScript),
  async fn() {
    assertPeer("script (util-linux)", haveScript);
    const fx = await startFixture();
    try {
      const hook = (await fx.api<{ id: string }>("POST", "/v1/webhooks", {
        body: { url: "http://127.0.0.1:9/h", events: ["vault_account.created"] },
      })).data;
      const made = await fx.admin("POST", "/notifications", {
        eventType: "vault_account.created",
        resourceId: crypto.randomUUID(),
        count: 250,
      });
      assert.deepEqual(made.status, 201);
      const env = {
        SERVICE_API_KEY: fx.emu.apiKey,
        SERVICE_API_PRIVATE_KEY_PATH: fx.emu.privateKeyPath,
        SERVICE_API_BASE_URL: fx.emu.apiBaseUrl,
      };
      const args = ["notifications", "list", "--webhookId", hook.id, "--all", "--pageSize", "20"];
      const r = await onTerminal(args, env, 100);
      assert.deepEqual(r.code, 0, r.raw);
      assert.match(r.raw, /fetched 20 of 250 notifications/, "the progress line was shown");
      const shown = screen(r.raw).filter((l) => l !== "");
      assert.deepEqual(shown.length, 251, shown.slice(0, 5).join("\n"));
      assert.match(shown[0], /^ID +STATUS +EVENTTYPE +RESOURCEID +CREATEDAT\b/);
      for (const l of shown) {
        assert.ok(!l.includes("fetched"), "a progress line glued to a row");
        assert.ok([...l].length <= 100, `${[...l].length} columns: ${l}`);
      }
      const idWidth = shown[0].indexOf("STATUS") - 2;
      assert.ok(idWidth < 36, `the id column narrowed to fit (${idWidth})`);
      const ids = new Set(
        (made.data.data as { id: string }[]).map((n) => shortenMiddle(n.id, idWidth)),
      );
      const first = shown[1].split(/ +/)[0];
      assert.match(first, /^[0-9a-f-]+…[0-9a-f-]+$/, "a long id is cut in the middle");
      assert.ok(ids.has(first), `${first} is one of the ids, cut to its column`);

      const wide = await onTerminal([...args, "--wide"], env, 100);
      assert.deepEqual(wide.code, 0, wide.raw);
      const wideRows = screen(wide.raw).filter((l) => /^[0-9a-f]{8}-/.test(l));
      assert.deepEqual(wideRows.length, 250);
      for (const l of wideRows) {
        assert.ok(!l.includes("…"), `unexpected "…" in ${JSON.stringify(l)}`);
        assert.match(l, /^[0-9a-f-]{36} {2}/, "--wide: the whole id");
      }

      // COLUMNS, when set, is the width (the terminal here is 100 wide)
      const narrow = await onTerminal(args, env, 100, 95);
      assert.deepEqual(narrow.code, 0, narrow.raw);
      const narrowRows = screen(narrow.raw).filter((l) => l !== "" && !l.startsWith("fetched"));
      assert.deepEqual(narrowRows.length, 251);
      for (const l of narrowRows) assert.ok([...l].length <= 95, `${[...l].length} columns: ${l}`);
      assert.ok(narrowRows.some((l) => [...l].length > 90), "the rows use the width given");
    } finally {
      await fx.stop();
    }
  },
});

Deno.test("piped, the table is what scripts always saw: whole ids, declared widths, no progress", async () => {
  const fx = await startFixture();
  try {
    const hook = (await fx.api<{ id: string }>("POST", "/v1/webhooks", {
      body: { url: "http://127.0.0.1:9/h", events: ["vault_account.created"] },
    })).data;
    const made = await fx.admin("POST", "/notifications", {
      eventType: "vault_account.created",
      count: 3,
    });
    assert.deepEqual(made.status, 201);
    const r = await runCli(
      ["notifications", "list", "--webhookId", hook.id, "--all", "--format", "table"],
      {
        env: {
          SERVICE_API_KEY: fx.emu.apiKey,
          SERVICE_API_PRIVATE_KEY_PATH: fx.emu.privateKeyPath,
          SERVICE_API_BASE_URL: fx.emu.apiBaseUrl,
          COLUMNS: "40",
        },
      },
    );
    assert.deepEqual(r.code, 0, r.stderr);
    assert.deepEqual(r.stderr, "");
    const lines = r.stdout.trimEnd().split("\n");
    assert.deepEqual(lines.length, 4);
    for (const n of made.data.data as { id: string }[]) {
      const row = lines.find((l) => l.startsWith(n.id));
      assert.ok(row, `the row of ${n.id}`);
      assert.deepEqual(row.slice(36, 38), "  ", "the id column keeps its declared width of 36");
      assert.match(
        row.slice(38),
        /^(COMPLETED|FAILED|IN_PROGRESS|ON_HOLD) +vault_account\.created +/,
      );
    }
    assert.ok(!r.stdout.includes("…"), 'unexpected "…" in output');
  } finally {
    await fx.stop();
  }
});

Deno.test("| head -1 ends the command quietly with exit 0 (a real pipe in bash)", async () => {
  const dir = await Deno.makeTempDir({ prefix: "service-head-" });
  try {
    // 20,000 notifications: megabytes of ndjson, far more than a pipe buffers.
    const lines = Array.from({ length: 20_000 }, (_, i) =>
      JSON.stringify({
        webhookId: "w1",
        notificationId: `n${i}`,
        sentTime: 1_700_000_000_000 + i,
        responseCode: 200,
      }));
    await Deno.writeTextFile(`${dir}/log.ndjson`, lines.join("\n") + "\n");
    const cli = [Deno.execPath(), "run", "-A", `${ROOT}main.ts`, "breaker", "simulate"]
      .concat([`${dir}/log.ndjson`, "--notifications", "--format", "ndjson"])
      .map((a) => `'${a}'`).join(" ");
    const r = await new Deno.Command("bash", {
      args: ["-c", `${cli} 2>"${dir}/err" | head -1; echo "status=\${PIPESTATUS[0]}"`],
      clearEnv: true,
      env: cleanEnv(),
      stdout: "piped",
      stderr: "piped",
    }).output();
    const out = new TextDecoder().decode(r.stdout).trim().split("\n");
    assert.deepEqual(out.length, 2, out.join("\n"));
    assert.match(out[0], /^\{"type":"notification","notificationId":"n0"/);
    assert.deepEqual(out[1], "status=0", "the command's own exit code");
    assert.deepEqual(await Deno.readTextFile(`${dir}/err`), "", "nothing on standard error");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("Output erases its progress line before writing to standard output, and at the end", async () => {
  const events: string[] = [];
  const dec = new TextDecoder();
  const io: Io = {
    stdout: { write: (p) => (events.push(`out:${dec.decode(p)}`), Promise.resolve(p.length)) },
    stderr: { write: (p) => (events.push(`err:${dec.decode(p)}`), Promise.resolve(p.length)) },
    stdin: new ReadableStream(),
    stdoutIsTerminal: true,
    stderrIsTerminal: true,
    env: () => undefined,
  };
  const out = new Output(io, { format: "ndjson" });
  void out.progress("fetched 1");
  void out.write("row1\n");
  void out.progress("fetched 2");
  await out.log("a warning");
  await out.progress("fetched 3");
  await out.clearProgress();
  await out.clearProgress();
  assert.deepEqual(events, [
    "err:\r\x1b[2Kfetched 1",
    "err:\r\x1b[2K",
    "out:row1\n",
    "err:\r\x1b[2Kfetched 2",
    "err:\r\x1b[2K",
    "err:a warning\n",
    "err:\r\x1b[2Kfetched 3",
    "err:\r\x1b[2K",
  ]);
});

Deno.test("shortenMiddle keeps both ends of an id", () => {
  const id = "6b3e4d22-1c0f-4d57-9a43-5c1a0de791eb";
  assert.deepEqual(shortenMiddle(id, 16), "6b3e4d22…de791eb");
  assert.deepEqual(shortenMiddle(id, 36), id);
  assert.deepEqual(shortenMiddle(id, 40), id);
  assert.deepEqual([...shortenMiddle(id, 9)].length, 9);
});

Deno.test("a table fits the given width; --wide and a pipe keep it whole", async () => {
  const records = [{ id: "6b3e4d22-1c0f-4d57-9a43-5c1a0de791eb", note: "x".repeat(80) }];
  const cols = [{ header: "id", value: "id", width: 36 }, { header: "note", value: "note" }];
  const tty = { ...memoryIo(), stdoutIsTerminal: true, stdoutColumns: 60 };
  await new Output(tty, { format: "table" }).records(records, cols);
  for (const l of tty.out().trimEnd().split("\n")) assert.ok([...l].length <= 60, l);
  assert.match(tty.out(), /…/);
  const wide = { ...memoryIo(), stdoutIsTerminal: true, stdoutColumns: 60 };
  await new Output(wide, { format: "table", wide: true }).records(records, cols);
  const pipe = { ...memoryIo(), stdoutColumns: 60 };
  await new Output(pipe, { format: "table" }).records(records, cols);
  const whole = `ID${" ".repeat(36)}NOTE\n${records[0].id}  ${"x".repeat(80)}\n`;
  assert.deepEqual(wide.out(), whole);
  assert.deepEqual(pipe.out(), whole);
});

async function cli(args: string[], io = memoryIo()) {
  const code = await run(args, { io });
  return { code, out: io.out(), err: io.err() };
}

Deno.test("mistyped commands and verbs get a suggestion (as flags do), exit 2", async () => {
  const c = await cli(["notification", "list"]);
  assert.deepEqual(c.code, 2);
  assert.match(c.err, /Unknown command "notification".*Did you mean "service notifications"\?/);
  assert.deepEqual(c.err.trim().split("\n").length, 1);
  const v = await cli(["notifications", "lst"]);
  assert.deepEqual(v.code, 2);
  assert.match(v.err, /Unknown verb "lst".*Did you mean "service notifications list"\?/);
  const w = await cli(["webhooks", "lisen"]);
  assert.match(w.err, /Did you mean "service webhooks listen"\?/);
  const f = await cli(["webhooks", "list", "--pagesise", "3"]);
  assert.match(f.err, /Did you mean --pageSize\?/);
  const none = await cli(["zzzzzz"]);
  assert.deepEqual(none.code, 2);
  assert.ok(!none.err.includes("Did you mean"), 'unexpected "Did you mean" in output');
});

Deno.test("service help <command> [verb] is <command> [verb] --help", async () => {
  for (
    const path of [["notifications"], ["notifications", "list"], ["breaker", "simulate"], [
      "rpc",
    ], ["completions"]]
  ) {
    const viaHelp = await cli(["help", ...path]);
    const viaFlag = await cli([...path, "--help"]);
    assert.deepEqual(viaHelp.code, 0, path.join(" "));
    assert.deepEqual(viaHelp.out, viaFlag.out, path.join(" "));
    assert.match(viaHelp.out, new RegExp(`Usage: service ${path.join(" ")}`));
  }
  const group = await cli(["webhooks", "help", "listen"]);
  assert.deepEqual(group.out, (await cli(["webhooks", "listen", "--help"])).out);
  const top = await cli(["help"]);
  assert.deepEqual(top.code, 0);
  assert.match(top.out, /Commands:/);
  const bad = await cli(["help", "notification"]);
  assert.deepEqual(bad.code, 2);
  assert.match(bad.err, /Did you mean "service notifications"\?/);
});

const FIXTURE = `${ROOT}tests/fixtures/breaker/exactly_50_percent.ndjson`;

Deno.test("--json is --format json; with another --format it is a usage error", async () => {
  const json = await cli(["breaker", "simulate", FIXTURE, "--json"]);
  const format = await cli(["breaker", "simulate", FIXTURE, "--format", "json"]);
  assert.deepEqual(json.code, 0, json.err);
  assert.deepEqual(json.out, format.out);
  JSON.parse(json.out);
  assert.deepEqual(
    (await cli(["breaker", "simulate", FIXTURE, "--json", "--format=json"])).code,
    0,
  );
  const none = await cli(["completions", "bash", "--json"]);
  assert.deepEqual(none.code, 2);
  assert.match(none.err, /"service completions" prints no records: it has no --json or --format/);
  const clash = await cli(["breaker", "simulate", FIXTURE, "--json", "--format", "ndjson"]);
  assert.deepEqual(clash.code, 2);
  assert.match(clash.err, /--json and --format ndjson/);
});

Deno.test("--no-color (and --noColor, and NO_COLOR) turn colour off on a terminal", async () => {
  const args = ["breaker", "simulate", "/nonexistent/log.ndjson"];
  const term = (env: Record<string, string> = {}) => ({
    ...memoryIo("", env),
    stderrIsTerminal: true,
  });
  const coloured = await cli(args, term());
  assert.deepEqual(coloured.code, 1);
  assert.ok(coloured.err.startsWith("\x1b[31merror:"), coloured.err);
  for (const flag of ["--no-color", "--noColor"]) {
    const plain = await cli([...args, flag], term());
    assert.deepEqual(plain.code, 1);
    assert.match(plain.err, /^error: /);
    assert.ok(!plain.err.includes("\x1b"), "unexpected escape sequence in output");
  }
  const env = await cli(args, term({ NO_COLOR: "1" }));
  assert.ok(!env.err.includes("\x1b"), "unexpected escape sequence in output");
});

Deno.test({
  name: "on a terminal, width goes to the cells that need it: times whole, short cells not padded",
  ignore: skipWithout(haveScript),
  async fn() {
    assertPeer("script (util-linux)", haveScript);
    const fx = await startFixture();
    try {
      const url = "http://127.0.0.1:9/receiver/receiver/hook"; // 41: cut to 19 before
      const hook = (await fx.api<{ id: string }>("POST", "/v1/webhooks", {
        body: { url, events: ["connection.added"] },
      })).data;
      const made = await fx.admin("POST", "/notifications", {
        eventType: "connection.added",
        resourceId: "tx-1",
        count: 2,
      });
      assert.deepEqual(made.status, 201);
      const env = {
        SERVICE_API_KEY: fx.emu.apiKey,
        SERVICE_API_PRIVATE_KEY_PATH: fx.emu.privateKeyPath,
        SERVICE_API_BASE_URL: fx.emu.apiBaseUrl,
      };
      const iso = /\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z/g;
      for (const cols of [100, 160]) {
        const r = await onTerminal(["notifications", "list", "--webhookId", hook.id], env, cols);
        assert.deepEqual(r.code, 0, r.raw);
        const shown = screen(r.raw).filter((l) => l !== "");
        assert.match(shown[0], /^ID +STATUS +EVENTTYPE +RESOURCEID +CREATEDAT +UPDATEDAT$/);
        assert.deepEqual(shown.length, 3, shown.join("\n"));
        for (const l of shown.slice(1)) {
          assert.ok([...l].length <= cols, `${[...l].length} columns: ${l}`);
          assert.deepEqual(
            l.match(iso)?.length,
            2,
            `createdAt and updatedAt whole at ${cols}: ${l}`,
          );
          // RESOURCEID is as wide as its header (10), not its declared 36
          assert.match(l, / tx-1 {8}\d{4}-/, `RESOURCEID no wider than needed at ${cols}: ${l}`);
        }
        if (cols === 160) assert.ok(!r.raw.includes("…"), "160 columns hold every cell whole");
      }
      // 108 columns hold every cell whole (the shortest event name is 16 characters)
      const w = await onTerminal(["webhooks", "list"], env, 110);
      assert.deepEqual(w.code, 0, w.raw);
      const rows = screen(w.raw).filter((l) => l !== "");
      assert.match(rows[0], /^ID +STATUS +EVENTS +URL$/);
      const mine = rows.find((l) => l.startsWith(hook.id));
      assert.ok(mine, rows.join("\n"));
      assert.match(
        mine,
        / connection\.added {2}http/,
        "EVENTS as wide as its cells, not its declared 30",
      );
      assert.ok(mine.endsWith(url), `the URL whole: ${mine}`);
    } finally {
      await fx.stop();
    }
  },
});

Deno.test({
  name: "empty lists on a terminal say so: no profiles, no webhooks (piped: as before)",
  ignore: skipWithout(haveScript),
  async fn() {
    assertPeer("script (util-linux)", haveScript);
    const config = await Deno.makeTempDir({ prefix: "no-profiles-" });
    const fx = await startFixture();
    try {
      const profiles = await onTerminal(["config", "list"], { XDG_CONFIG_HOME: config });
      assert.deepEqual(profiles.code, 0, profiles.raw);
      assert.deepEqual(
        screen(profiles.raw).filter((l) => l !== "")[0],
        "no profiles (service config set --profile NAME ... saves one)",
      );
      const env = {
        SERVICE_API_KEY: fx.emu.apiKey,
        SERVICE_API_PRIVATE_KEY_PATH: fx.emu.privateKeyPath,
        SERVICE_API_BASE_URL: fx.emu.apiBaseUrl,
      };
      const hooks = await onTerminal(["webhooks", "list"], env);
      assert.deepEqual(hooks.code, 0, hooks.raw);
      assert.match(screen(hooks.raw).filter((l) => l !== "")[0], /^no webhooks \(/);
      const piped = await runCli(["webhooks", "list", "--format", "table"], { env });
      assert.deepEqual([piped.code, piped.stdout], [
        0,
        `ID${" ".repeat(36)}STATUS     EVENTS${" ".repeat(26)}URL\n`,
      ]);
      const ndjson = await runCli(["config", "list"], { env: { XDG_CONFIG_HOME: config } });
      assert.deepEqual([ndjson.code, ndjson.stdout], [0, ""]);
    } finally {
      await fx.stop();
      await Deno.remove(config, { recursive: true });
    }
  },
});
