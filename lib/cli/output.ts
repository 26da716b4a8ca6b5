/**
 * Output for commands: data on standard output (`table`, `json`, `ndjson`),
 * logs, warnings and progress on standard error. Colour only on a terminal and
 * never with `NO_COLOR` or `--no-color`; progress only when standard error is
 * a terminal, on its own line, erased before anything is written to standard
 * output and at the end. Tables on a terminal fit its width (long cells are
 * shortened in the middle; `--wide` prints them whole); piped, they are as
 * they always were. A reader that goes away (`| head`) ends the command
 * quietly: {@linkcode StdoutClosedError}, exit 0.
 * Every string shown to a person (tables, `key: value` objects, prose on
 * either stream: {@linkcode Output.text}, `log`, `warn`, `error`, progress)
 * goes through `shown()` (`shown.ts`): secrets redacted, control characters
 * escaped (`\x1b`, `\n`). JSON and ndjson records, and `write`, are as given.
 * Commands never touch `console` or `Deno.std*`: they get an {@linkcode Io}.
 *
 * @module
 */

import { CliError, ExitCode } from "./errors.ts";
import { cell, cells, type Column, layout, row } from "./table.ts";
import { shown } from "./shown.ts";

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
  /** The terminal's width in columns when standard output is a terminal. Absent: unknown. */
  stdoutColumns?: number;
}

/**
 * Standard output was closed by its reader (`service … | head -1`): the
 * command ends quietly with exit 0, as `git log | head` appears to users.
 *
 * @example
 * ```ts
 * throw new StdoutClosedError();
 * ```
 */
export class StdoutClosedError extends CliError {
  /** No message is shown for it. */
  constructor(options?: { cause?: unknown }) {
    super("Standard output was closed by its reader.", ExitCode.ok, options);
    this.name = "StdoutClosedError";
  }
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

export { shortenMiddle } from "./table.ts";
export { escapeControls, shown } from "./shown.ts";
export type { Column } from "./table.ts";

/** Rows a terminal table measures its widths from before printing (the rest stream). */
const SAMPLE_ROWS = 200;

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
  /** Whether tables print every cell whole (`--wide`), even wider than the terminal. */
  readonly wide: boolean;
  #progressShown = false;
  /** Every stream write goes through this chain, so a progress line and data never interleave. */
  #queue: Promise<void> = Promise.resolve();

  /**
   * `format` defaults to `table` on a terminal, else `ndjson`; `verbose` to
   * false; `color: false` (`--no-color`) turns colour off; `wide` keeps
   * table cells whole.
   */
  constructor(
    io: Io,
    options: { format?: Format; verbose?: boolean; color?: boolean; wide?: boolean } = {},
  ) {
    this.io = io;
    this.format = options.format ?? (io.stdoutIsTerminal ? "table" : "ndjson");
    this.verbose = options.verbose ?? false;
    this.wide = options.wide ?? false;
    this.color = options.color !== false && io.stderrIsTerminal && !io.env("NO_COLOR");
  }

  #serial(step: () => Promise<void>): Promise<void> {
    const next = this.#queue.then(step);
    this.#queue = next.catch(() => {});
    return next;
  }

  /**
   * Writes text to standard output as it is (erasing a progress line first): JSON, help, text
   * this program composed. A line holding anything from outside goes through {@linkcode text}.
   */
  write(text: string): Promise<void> {
    return this.#serial(async () => {
      await this.#erase();
      await writeAll(this.io.stdout, text);
    });
  }

  /**
   * Prose for people on standard output: one line, secrets redacted and control characters
   * escaped (a newline in it too), then a newline.
   */
  text(line: string): Promise<void> {
    return this.write(shown(line) + "\n");
  }

  /**
   * Writes one line to standard error (erasing a progress line first), secrets redacted and
   * control characters escaped: a newline in `line` is shown as `\n`, so one call is one line.
   */
  log(line: string): Promise<void> {
    return this.#stderrLine(shown(line));
  }

  #stderrLine(text: string): Promise<void> {
    return this.#serial(async () => {
      await this.#erase();
      await writeAll(this.io.stderr, text + "\n");
    });
  }

  /** Writes a line to standard error only with `--verbose`. */
  async debug(line: string): Promise<void> {
    if (this.verbose) await this.log(line);
  }

  /** A warning on standard error, yellow on a terminal. */
  warn(line: string): Promise<void> {
    return this.#tagged("warning", 33, line);
  }

  /** An error line on standard error, red on a terminal. */
  error(line: string): Promise<void> {
    return this.#tagged("error", 31, line);
  }

  #tagged(tag: string, colour: number, line: string): Promise<void> {
    return this.#stderrLine(
      `${this.color ? `\x1b[${colour}m${tag}:\x1b[0m` : `${tag}:`} ${shown(line)}`,
    );
  }

  /**
   * Replaces the progress line on standard error; nothing unless stderr is a
   * terminal. The line is erased before the next write to either stream.
   */
  progress(text: string): Promise<void> {
    if (!this.io.stderrIsTerminal) return Promise.resolve();
    // Callers often do not wait for progress (`void out.progress(...)`): a failed write of it is
    // cosmetic and must not become an unhandled rejection.
    return this.#serial(async () => {
      this.#progressShown = true;
      await writeAll(this.io.stderr, `\r\x1b[2K${shown(text)}`);
    }).catch(() => {});
  }

  /** Erases the progress line, if one is shown (also done at the end of every command). */
  clearProgress(): Promise<void> {
    return this.#serial(() => this.#erase());
  }

  async #erase(): Promise<void> {
    if (!this.#progressShown) return;
    this.#progressShown = false;
    await writeAll(this.io.stderr, "\r\x1b[2K");
  }

  /**
   * Prints records as they arrive, in the chosen format. `json` collects them
   * into `{data: [...]}`; `ndjson` and `table` stream (a table on a terminal
   * after its first rows, to measure them; with none, `empty` instead of the
   * header). Returns the number printed.
   */
  async records(
    records: AsyncIterable<Record<string, unknown>> | Iterable<Record<string, unknown>>,
    columns: Column[],
    options: {
      /** What a terminal shows instead of a bare header when there is no record (`no webhooks`). */
      empty?: string;
    } = {},
  ): Promise<number> {
    let n = 0;
    if (this.format === "json") {
      const all = await Array.fromAsync(records);
      await this.write(JSON.stringify({ data: all }, null, 2) + "\n");
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
    const terminal = this.io.stdoutIsTerminal;
    // piped, the header at once; on a terminal, after the first rows, whose widths it takes
    let print = terminal ? undefined : await this.table(columns);
    const held: string[][] = [];
    for await (const r of records) {
      held.push(cells(columns, r));
      n++;
      if (print || held.length >= SAMPLE_ROWS) {
        print ??= await this.table(columns, held);
        await print(held.splice(0));
      }
    }
    if (n === 0 && terminal && options.empty !== undefined) {
      await this.write(options.empty + "\n");
      return 0;
    }
    print ??= await this.table(columns, held);
    await print(held);
    return n;
  }

  /**
   * Starts a table: prints its header now and returns a function that prints rows (cells as
   * `cells()` of lib/cli/table.ts gives them) with the same widths, e.g. as `tail --follow` finds
   * them. On a terminal the widths are measured from `sample` (none: the declared widths).
   */
  async table(
    columns: Column[],
    sample: readonly string[][] = [],
  ): Promise<(rows: readonly string[][]) => Promise<void>> {
    // Cells from cells() are shown() already; cells a command made itself are made so here.
    const safe = (rows: readonly string[][]) => rows.map((r) => r.map(shown));
    // fitted to a terminal (not piped, not --wide) whose width is known
    const fits = this.io.stdoutIsTerminal && !this.wide && (this.io.stdoutColumns ?? 0) > 0;
    const table = layout(columns, safe(sample), fits ? this.io.stdoutColumns : undefined);
    const head = row(table, columns.map((c) => c.header.toUpperCase()));
    await this.write(
      this.color && this.io.stdoutIsTerminal ? `\x1b[1m${head.trimEnd()}\x1b[0m\n` : head,
    );
    return async (rows) => {
      if (rows.length) await this.write(safe(rows).map((r) => row(table, r)).join(""));
    };
  }

  /** What a command did: `line` as prose ({@linkcode text}) in a table, else `obj` ({@linkcode object}). */
  outcome(line: string, obj: Record<string, unknown>): Promise<void> {
    return this.format === "table" ? this.text(line) : this.object(obj);
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
    stdout: {
      // the operating system's broken pipe (EPIPE): the reader went away
      write: (p) =>
        Deno.stdout.write(p).catch((e) => {
          throw e?.name === "BrokenPipe" || e?.code === "EPIPE"
            ? new StdoutClosedError({ cause: e })
            : e;
        }),
    },
    stderr: Deno.stderr,
    stdin: Deno.stdin.readable,
    stdoutIsTerminal: Deno.stdout.isTerminal(),
    stdoutColumns: terminalColumns(),
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

/**
 * The width of the terminal on standard output, if it is one: `COLUMNS` when it is a positive
 * whole number (as `ls` and other terminal programs honour it, e.g. `COLUMNS=200 service …` on a
 * narrow window), else the terminal's own size.
 */
function terminalColumns(): number | undefined {
  try {
    if (!Deno.stdout.isTerminal()) return undefined;
    const given = Deno.env.get("COLUMNS");
    if (given !== undefined && /^[1-9][0-9]{0,4}$/.test(given.trim())) return Number(given);
    return Deno.consoleSize().columns || undefined;
  } catch {
    return undefined;
  }
}
