/**
 * An in-memory {@linkcode Io} for running CLI commands in-process: standard
 * input from bytes or text, standard output and error collected as text.
 * Not a mock of anything: the command runs for real, only its streams are
 * buffers.
 *
 * @module
 */

import type { Io } from "../../lib/cli/mod.ts";
import { concatBytes } from "../../lib/core/mod.ts";

/** An Io whose output can be read back. */
export interface MemoryIo extends Io {
  /** Everything written to standard output so far. */
  out(): string;
  /** Everything written to standard error so far. */
  err(): string;
}

/** Builds a {@linkcode MemoryIo}; `stdin` is given as text or bytes (default: empty). */
export function memoryIo(
  stdin: string | Uint8Array = "",
  env: Record<string, string> = {},
): MemoryIo {
  const out: Uint8Array[] = [];
  const err: Uint8Array[] = [];
  const bytes = typeof stdin === "string" ? new TextEncoder().encode(stdin) : stdin;
  const dec = (parts: Uint8Array[]) => new TextDecoder().decode(concatBytes(parts));
  return {
    stdout: { write: (p) => (out.push(p.slice()), Promise.resolve(p.length)) },
    stderr: { write: (p) => (err.push(p.slice()), Promise.resolve(p.length)) },
    stdin: new ReadableStream({
      start(c) {
        if (bytes.length) c.enqueue(bytes);
        c.close();
      },
    }),
    stdoutIsTerminal: false,
    stderrIsTerminal: false,
    env: (name) => env[name],
    out: () => dec(out),
    err: () => dec(err),
  };
}
