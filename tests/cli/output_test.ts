import assert from "node:assert/strict";
import { type Io, Output } from "../../lib/cli/mod.ts";

function memoryIo(opts: { terminal?: boolean; env?: Record<string, string> } = {}) {
  const chunks = { out: [] as string[], err: [] as string[] };
  const dec = new TextDecoder();
  const io: Io = {
    stdout: { write: (p) => (chunks.out.push(dec.decode(p)), Promise.resolve(p.length)) },
    stderr: { write: (p) => (chunks.err.push(dec.decode(p)), Promise.resolve(p.length)) },
    stdin: new ReadableStream(),
    stdoutIsTerminal: opts.terminal ?? false,
    stderrIsTerminal: opts.terminal ?? false,
    env: (n) => opts.env?.[n],
  };
  return { io, out: () => chunks.out.join(""), err: () => chunks.err.join("") };
}

const rows = [{ id: "a", status: "FAILED", createdAt: 1767225600000 }, {
  id: "bb",
  status: "COMPLETED",
  createdAt: 0,
}];
const cols = [{ header: "id", value: "id", width: 4 }, {
  header: "status",
  value: "status",
  width: 9,
}, {
  header: "createdAt",
  value: "createdAt",
}];

Deno.test("the default format is table on a terminal and ndjson otherwise", () => {
  assert.deepEqual(new Output(memoryIo({ terminal: true }).io).format, "table");
  assert.deepEqual(new Output(memoryIo().io).format, "ndjson");
});

Deno.test("ndjson prints one record a line; json wraps them in {data}", async () => {
  const a = memoryIo();
  await new Output(a.io, { format: "ndjson" }).records(rows, cols);
  assert.deepEqual(a.out().trim().split("\n").map((l) => JSON.parse(l)), rows);
  const b = memoryIo();
  await new Output(b.io, { format: "json" }).records(rows, cols);
  assert.deepEqual(JSON.parse(b.out()), { data: rows });
});

Deno.test("table streams aligned columns and shows ms times as ISO", async () => {
  const t = memoryIo();
  await new Output(t.io, { format: "table" }).records(rows, cols);
  assert.deepEqual(t.out().split("\n"), [
    "ID    STATUS     CREATEDAT",
    "a     FAILED     2026-01-01T00:00:00.000Z",
    "bb    COMPLETED  0",
    "",
  ]);
});

Deno.test("colour and progress appear only on a terminal, and never with NO_COLOR", async () => {
  const plain = memoryIo();
  const o1 = new Output(plain.io);
  await o1.progress("fetched 1");
  await o1.warn("careful");
  assert.deepEqual(plain.err(), "warning: careful\n");
  const tty = memoryIo({ terminal: true });
  const o2 = new Output(tty.io);
  await o2.progress("fetched 1");
  await o2.warn("careful");
  assert.deepEqual(tty.err().includes("\r\x1b[2Kfetched 1"), true);
  assert.deepEqual(tty.err().includes("\x1b[33mwarning:"), true);
  const noColor = memoryIo({ terminal: true, env: { NO_COLOR: "1" } });
  await new Output(noColor.io).warn("careful");
  assert.deepEqual(noColor.err(), "warning: careful\n");
});
