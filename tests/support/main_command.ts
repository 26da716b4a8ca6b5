/**
 * The one place that decides the environment of a child `service` process
 * (`deno run -A main.ts ...`, or a shell or task that runs it): a clean
 * environment, as a user's shell would give, with only
 *
 * - `PATH` and `HOME` from the test's own environment (`HOME` defaults to `/tmp`),
 * - `DENO_DIR` when the test run has one (so the child finds the same cache),
 * - `DENO_TLS_CA_STORE=system` (the registry's certificate is in the system store),
 * - `RUST_BACKTRACE=0` (no backtrace after a Deno error) and `NO_COLOR=1`,
 *
 * plus whatever the caller adds (which wins, e.g. a longer `PATH`).
 *
 * @module
 */

/** The checkout's root directory, with a trailing slash. */
export const ROOT = new URL("../../", import.meta.url).pathname;

/** The clean environment of a child process, with `extra` added (and winning). */
export function cleanEnv(extra: Record<string, string> = {}): Record<string, string> {
  const denoDir = Deno.env.get("DENO_DIR");
  return {
    PATH: Deno.env.get("PATH") ?? "",
    HOME: Deno.env.get("HOME") ?? "/tmp",
    ...(denoDir ? { DENO_DIR: denoDir } : {}),
    DENO_TLS_CA_STORE: "system",
    RUST_BACKTRACE: "0",
    NO_COLOR: "1",
    ...extra,
  };
}

/** Options of {@linkcode mainCommand}: those of `Deno.Command`, with `env` added to the clean one. */
export interface MainCommandOptions extends Omit<Deno.CommandOptions, "args" | "clearEnv"> {
  /** Variables added to {@linkcode cleanEnv}'s. */
  env?: Record<string, string>;
  /** Runs the child under `ulimit -n` this many descriptors (through bash), for flood tests. */
  fileLimit?: number;
  /**
   * Deno's arguments before `args` (default `["run", "-A", "<checkout>/main.ts"]`), e.g.
   * `["task", "--quiet", ..., "service"]` or the npm package's bundle.
   */
  program?: string[];
}

/**
 * `deno run -A main.ts ...args` as a user would run it: a clean environment
 * ({@linkcode cleanEnv} plus `options.env`), in the checkout (unless `cwd`),
 * stdin closed and stdout/stderr piped (unless given).
 */
export function mainCommand(args: string[], options: MainCommandOptions = {}): Deno.Command {
  const { env, program = ["run", "-A", `${ROOT}main.ts`], fileLimit, ...rest } = options;
  const [command, argv] = withFileLimit([...program, ...args], fileLimit);
  return new Deno.Command(command, {
    ...rest,
    cwd: rest.cwd ?? ROOT,
    stdin: rest.stdin ?? "null",
    stdout: rest.stdout ?? "piped",
    stderr: rest.stderr ?? "piped",
    args: argv,
    clearEnv: true,
    env: cleanEnv(env),
  });
}

/**
 * The command and arguments that run Deno with `args`, under `ulimit -n
 * fileLimit` when given (bash sets the limit, then becomes Deno).
 */
export function withFileLimit(args: string[], fileLimit?: number): [string, string[]] {
  if (fileLimit === undefined) return [Deno.execPath(), args];
  return ["bash", ["-c", `ulimit -n ${fileLimit} && exec "$0" "$@"`, Deno.execPath(), ...args]];
}
