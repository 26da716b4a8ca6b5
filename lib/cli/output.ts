/**
 * Output for commands: data on standard output (`table`, `json`, `ndjson`),
 * logs, warnings and progress on standard error. Colour only on a terminal and
 * never with `NO_COLOR`; progress only when standard error is a terminal.
 * Commands never touch `console` or `Deno.std*`: they get an {@linkcode Io}.
 *
 * @module
 */

/** A byte sink, as `Deno.stdout` is. */
export interface Writer {
  /** Writes some of `p`; returns how many bytes were written. */
  write(p: Uint8Array): Promise<number>;
}

/** The process edge a command sees: streams, terminal flags and environment. */
export interface Io {
  /** Standard output: data for programs. */
  stdout: Writer;
  /** Standard error: logs, warnings, progress. */
  stderr: Writer;
  /** Standard input. */
  stdin: ReadableStream<Uint8Array>;
  /** Whether standard output is a terminal (default format `table`). */
  stdoutIsTerminal: boolean;
  /** Whether standard error is a terminal (colour, progress). */
  stderrIsTerminal: boolean;
  /** Whether standard input is a terminal (a command may ask a question). Absent: no. */
  stdinIsTerminal?: boolean;
  /** Environment lookup. */
  env: (name: string) => string | undefined;
}

/** Record formats of cli.md. */
export type Format = "table" | "json" | "ndjson";

/** The accepted values of `--format`. */
export const FORMATS: readonly Format[] = ["table", "json", "ndjson"];

const encoder = new TextEncoder();

/**
 * Writes all of `text` (a single `write` may be partial).
 *
 * @example
 * ```ts
 * await writeAll(Deno.stdout, "hello\n");
 * ```
 */
export async function writeAll(w: Writer, text: string | Uint8Array): Promise<void> {
  let bytes = typeof text === "string" ? encoder.encode(text) : text;
  while (bytes.length > 0) {
    const n = await w.write(bytes);
    bytes = bytes.subarray(n);
  }
}

/** A column of a table. */
export interface Column {
  /** Header text. */
  header: string;
  /** Field of the record, or a function computing the cell. */
  value: string | ((record: Record<string, unknown>) => unknown);
  /** Width the column is padded to (a longer value widens that row only), so tables stream. */
  width?: number;
}

/**
 * Renders a cell: times (ms numbers in fields named like `*At`/`*Time`) as ISO,
 * objects as JSON.
 */
function cell(v: unknown, key: string): string {
  if (v === undefined || v === null) return "-";
  if (typeof v === "number" && /(At|Time)$/.test(key) && v > 1e11) return new Date(v).toISOString();
  if (typeof v === "object") return JSON.stringify(v);
  return String(v);
}

/** The data-and-log writer a command uses. */
export class Output {
  /** The streams written to. */
  readonly io: Io;
  /** How records are printed. */
  readonly format: Format;
  /** Whether `debug` lines are shown. */
  readonly verbose: boolean;
  /** Whether standard error gets colour (a terminal, and no `NO_COLOR`). */
  readonly color: boolean;
  #progressShown = false;

  /** `format` defaults to `table` on a terminal, else `ndjson`; `verbose` to false. */
  constructor(io: Io, options: { format?: Format; verbose?: boolean } = {}) {
    this.io = io;
    this.format = options.format ?? (io.stdoutIsTerminal ? "table" : "ndjson");
    this.verbose = options.verbose ?? false;
    const noColor = io.env("NO_COLOR");
    this.color = io.stderrIsTerminal && (noColor === undefined || noColor === "");
  }

  /** Writes text to standard output as it is. */
  async write(text: string): Promise<void> {
    await writeAll(this.io.stdout, text);
  }

  /** Writes a line to standard error (clearing a progress line first). */
  async log(line: string): Promise<void> {
    await this.clearProgress();
    await writeAll(this.io.stderr, line + "\n");
  }

  /** Writes a line to standard error only with `--verbose`. */
  async debug(line: string): Promise<void> {
    if (this.verbose) await this.log(line);
  }

  /** A warning on standard error, yellow on a terminal. */
  async warn(line: string): Promise<void> {
    await this.log(this.color ? `\x1b[33mwarning:\x1b[0m ${line}` : `warning: ${line}`);
  }

  /** An error line on standard error, red on a terminal. */
  async error(line: string): Promise<void> {
    await this.log(this.color ? `\x1b[31merror:\x1b[0m ${line}` : `error: ${line}`);
  }

  /** Replaces the progress line on standard error; nothing unless stderr is a terminal. */
  async progress(text: string): Promise<void> {
    if (!this.io.stderrIsTerminal) return;
    this.#progressShown = true;
    await writeAll(this.io.stderr, `\r\x1b[2K${text}`);
  }

  /** Clears the progress line, if one is shown. */
  async clearProgress(): Promise<void> {
    if (!this.#progressShown) return;
    this.#progressShown = false;
    await writeAll(this.io.stderr, "\r\x1b[2K");
  }

  /**
   * Prints records as they arrive, in the chosen format. `json` collects them
   * into `{data: [...]}` (or `wrap(records)` when given); `ndjson` and `table`
   * stream. Returns the number printed.
   */
  async records(
    records: AsyncIterable<Record<string, unknown>> | Iterable<Record<string, unknown>>,
    columns: Column[],
    options: { wrap?: (data: Record<string, unknown>[]) => unknown } = {},
  ): Promise<number> {
    let n = 0;
    if (this.format === "json") {
      const all: Record<string, unknown>[] = [];
      for await (const r of records) all.push(r);
      await this.write(
        JSON.stringify(options.wrap ? options.wrap(all) : { data: all }, null, 2) + "\n",
      );
      return all.length;
    }
    if (this.format === "ndjson") {
      let buf = "";
      for await (const r of records) {
        buf += JSON.stringify(r) + "\n";
        n++;
        if (buf.length > 65536) {
          await this.write(buf);
          buf = "";
        }
      }
      if (buf) await this.write(buf);
      return n;
    }
    const widths = columns.map((c) => c.width ?? c.header.length);
    const line = (cells: string[]) =>
      cells.map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i]))).join("  ").trimEnd() +
      "\n";
    const head = line(columns.map((c) => c.header.toUpperCase()));
    await this.write(
      this.color && this.io.stdoutIsTerminal ? `\x1b[1m${head.trimEnd()}\x1b[0m\n` : head,
    );
    for await (const r of records) {
      await this.write(
        line(
          columns.map((c) =>
            typeof c.value === "string" ? cell(r[c.value], c.value) : cell(c.value(r), c.header)
          ),
        ),
      );
      n++;
    }
    return n;
  }

  /** Prints one object: JSON for `json`/`ndjson` (one line for ndjson), `key: value` lines for `table`. */
  async object(obj: Record<string, unknown>): Promise<void> {
    if (this.format === "json") return this.write(JSON.stringify(obj, null, 2) + "\n");
    if (this.format === "ndjson") return this.write(JSON.stringify(obj) + "\n");
    const keys = Object.keys(obj);
    const w = Math.max(0, ...keys.map((k) => k.length)) + 1;
    await this.write(
      keys.map((k) => `${(k + ":").padEnd(w)} ${cell(obj[k], k)}`).join("\n") + "\n",
    );
  }
}

/**
 * The real process edge: Deno's standard streams and environment.
 *
 * @example
 * ```ts
 * const io = denoIo();
 * ```
 */
export function denoIo(): Io {
  return {
    stdout: Deno.stdout,
    stderr: Deno.stderr,
    stdin: Deno.stdin.readable,
    stdoutIsTerminal: Deno.stdout.isTerminal(),
    stderrIsTerminal: Deno.stderr.isTerminal(),
    stdinIsTerminal: Deno.stdin.isTerminal(),
    env: (name) => {
      try {
        return Deno.env.get(name);
      } catch {
        return undefined;
      }
    },
  };
}
