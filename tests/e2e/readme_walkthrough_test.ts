/**
 * The docs cannot rot: the webhook walk-through (the `sh` block after the
 * `<!-- walkthrough ... -->` marker, in `docs/emulator.md`) is read and run as
 * written, line by line: `anvil &` starts a real anvil, `service ... &` is
 * spawned and its first line awaited, `export K=<field>` takes the value
 * from what was printed before (the emulator's ready line, the webhook's
 * `id`), every other `service` line is run and must exit 0. Only the ports
 * are swapped for free ones (8545 -> anvil's, 4000 -> a free port, 3000 ->
 * the app: a real receiver that checks each signature with jose).
 *
 * And every `service webhooks` / `service notifications` example line in
 * README.md and `docs/` names a verb that exists and only flags that verb's `--help` lists.
 */
import assert from "node:assert/strict";
import { type Anvil, runCli, startAnvil } from "../support/tools.ts";
import { startReceiver } from "../support/receiver.ts";
import { memoryIo } from "../support/memory_io.ts";
import { run } from "../../lib/cli/mod.ts";
import { type CliChild, spawnCli } from "./cli_child.ts";
import { freePort, README, shBlocks, words } from "./readme_blocks.ts";

/** The lines of the sh block after the walkthrough marker. */
function walkthrough(): string[] {
  const block = shBlocks().find((b) => b.walkthrough);
  assert.ok(block, "the docs have a walkthrough marker followed by a sh block");
  return block.commands;
}

Deno.test("the docs' webhook walk-through runs as written", async () => {
  const lines = walkthrough();
  assert.ok(lines.every((l) => /^(anvil &|service |export )/.test(l)), lines.join("\n"));
  const appOptions: { jwksUrl?: string } = {};
  const app = startReceiver(appOptions);
  const listenPort = freePort();
  const ports = (l: string, anvil?: Anvil) =>
    l.replaceAll("127.0.0.1:8545", anvil ? `127.0.0.1:${anvil.port}` : "127.0.0.1:8545")
      .replaceAll("127.0.0.1:4000", `127.0.0.1:${listenPort}`)
      .replaceAll("--port 4000", `--port ${listenPort}`)
      .replaceAll("127.0.0.1:3000", `127.0.0.1:${app.port}`);
  let anvil: Anvil | undefined;
  const background: CliChild[] = [];
  const env: Record<string, string> = {};
  const printed: Record<string, string> = {};
  const outputs: Record<string, string> = {};
  try {
    for (const raw of lines) {
      const line = ports(raw, anvil);
      if (line === "anvil &") {
        anvil = await startAnvil();
        continue;
      }
      if (line.startsWith("export ")) {
        for (const [, k, field] of line.matchAll(/(\w+)=<(\w+)>/g)) {
          assert.ok(printed[field] !== undefined, `nothing printed ${field} before "${line}"`);
          env[k] = printed[field];
        }
        continue;
      }
      const args = words(line).slice(1);
      if (args.at(-1) === "&") {
        const child = spawnCli(args.slice(0, -1), env);
        background.push(child);
        const first = await child.waitLine(() => true, `the first line of "${line}"`, 60_000);
        const parsed = JSON.parse(first.startsWith("{") ? first : JSON.stringify({ url: first }));
        for (const [k, v] of Object.entries(parsed)) if (typeof v === "string") printed[k] = v;
        if (args[0] === "emulator") appOptions.jwksUrl = parsed.jwksUrl;
        continue;
      }
      const r = await runCli(args, { env });
      assert.deepEqual(r.code, 0, `"${line}" exited ${r.code}: ${r.stderr}`);
      outputs[args.slice(0, 2).join(" ")] = r.stdout;
      try {
        const obj = JSON.parse(r.stdout);
        if (typeof obj?.id === "string") printed.id = obj.id;
      } catch { /* not one JSON value */ }
      if (args[0] === "emulator" && args[1] === "trigger") await app.waitForCount(3);
    }
    // what the walk-through promises: the app got each delivery, signed (jose), through listen
    assert.deepEqual(app.received.length, 3);
    assert.ok(app.received.every((r) => r.signatureOk), "deliveries verified by jose at the app");
    assert.deepEqual(new Set(app.received.map((r) => r.json.resourceId)), new Set(["tx-1"]));
    const listen = background.find((c) => c.lines[0]?.includes(String(listenPort)))!;
    const deliveryLines = () => listen.lines.filter((l) => l.includes('"event":"delivery"'));
    await listen.waitLine((_) => deliveryLines().length >= 3, "3 delivery lines");
    for (const l of deliveryLines()) assert.deepEqual(JSON.parse(l).signatureVerified, true);
    const tail = outputs["notifications tail"].trim().split("\n").map((l) => JSON.parse(l));
    // each delivered notification: its creation, then its change to COMPLETED
    assert.deepEqual(tail.filter((l) => l.change === "created").length, 3);
    assert.deepEqual(
      tail.filter((l) => l.change === "status").map((l) => [l.previousStatus, l.status]),
      [["IN_PROGRESS", "COMPLETED"], ["IN_PROGRESS", "COMPLETED"], ["IN_PROGRESS", "COMPLETED"]],
    );
    assert.deepEqual(tail.length, 6);
    assert.deepEqual(JSON.parse(outputs["notifications resend-all"]).count, 3);
  } finally {
    for (const c of background.reverse()) {
      const code = await c.stop("SIGINT");
      assert.deepEqual(code, 0, c.stderr());
    }
    await anvil?.stop();
    await app.close();
  }
});

Deno.test("every webhooks/notifications example in README.md and docs/ names a real verb and real flags", async () => {
  const examples = [
    ...README.matchAll(/^(?:\S+ \| )?service (webhooks|notifications) (\S+)(.*)$/gm),
  ]
    .map((m) => ({ group: m[1], verb: m[2], rest: m[3].replace(/\s+#.*$/, "") }));
  assert.ok(examples.length >= 20, `found ${examples.length} examples`);
  const helps = new Map<string, string>();
  for (const e of examples) {
    const key = `${e.group} ${e.verb}`;
    if (!helps.has(key)) {
      const io = memoryIo();
      const code = await run([e.group, e.verb, "--help"], { io });
      assert.deepEqual(code, 0, `service ${key} --help: ${io.err()}`);
      helps.set(key, io.out());
    }
    const help = helps.get(key)!;
    for (const [, flag] of e.rest.matchAll(/(?:^|\s)(--[A-Za-z-]+)/g)) {
      const camel = "--" + flag.slice(2).replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());
      assert.ok(
        new RegExp(`${camel}[ =\\]\n]`).test(help),
        `docs: "service ${key}${e.rest}" uses ${flag}, which "service ${key} --help" does not list`,
      );
    }
  }
  assert.match([...helps.keys()].join(","), /webhooks listen.*|notifications resend-all/);
});
