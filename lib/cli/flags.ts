/**
 * The flag rules of `../shared/spec/cli.md`: camelCase names with kebab-case
 * aliases, `--flag value` and `--flag=value`, booleans that really parse
 * `false`, environment-variable fallbacks (the flag wins), repeatable flags,
 * and one-line usage errors that name the flag and the accepted form.
 *
 * Each command declares its flags once as a {@linkcode FlagSpecs} object; the
 * same object renders its `--help`. Every `integer`, `number` and `duration`
 * flag declares its inclusive range (`min`, `max`; milliseconds for a
 * duration), checked here and nowhere else, so that a value that cannot work
 * (`--timeout 0`, a window of 100 years, a timer beyond what timers can
 * wait) is a usage error naming the range; {@linkcode checkFlagSpecs}
 * refuses a declaration without one. A `required` flag that neither the
 * command line nor any source gives is a usage error, in the same words for
 * every command: `Missing --webhookId for "service webhooks get": give
 * --webhookId <ID> or set SERVICE_WEBHOOK_ID.`
 *
 * @module
 */

import { UsageError } from "./errors.ts";
import {
  type DurationRange,
  formatDuration,
  parseDuration,
  parseDurationRange,
  parseTime,
} from "../core/durations.ts";
import { closest } from "./text.ts";
import { placeholderOf } from "./flag_help.ts";

/** The kinds of value a flag takes. */
export type FlagType =
  | "string"
  | "boolean"
  | "integer"
  | "number"
  | "list"
  | "duration"
  | "durationRange"
  | "time";

/** One flag of a command. */
export interface FlagSpec {
  /** What the value is. `list` is comma-separated; `duration` is `500ms|30s|60m|4h|1d` or ms; `durationRange` is a duration or `MIN-MAX` of two (`5s-20s`); `time` is epoch ms, ISO 8601 or a duration back from now. */
  readonly type: FlagType;
  /** One line for `--help`. */
  readonly description: string;
  /** Environment variable read when the flag is absent. */
  readonly env?: string;
  /** The value when neither flag nor variable is given. */
  readonly default?: string | number | boolean | readonly string[];
  /** The flag may be given several times; the value is an array. */
  readonly multiple?: boolean;
  /** The accepted values (compared case-sensitively unless `upper`). */
  readonly choices?: readonly string[];
  /** Upper-case the value before checking `choices`. */
  readonly upper?: boolean;
  /** Inclusive lower bound for `integer`/`number`, milliseconds for `duration`/`durationRange` (required for those types). */
  readonly min?: number;
  /** Inclusive upper bound for `integer`/`number`, milliseconds for `duration`/`durationRange` (required for those types). */
  readonly max?: number;
  /** A one-letter alias, e.g. `v` for `-v`. */
  readonly short?: string;
  /** Placeholder shown in help, e.g. `ID`. */
  readonly placeholder?: string;
  /** Its value is the next argument even when that starts with `--` (`--compare "--minAttempts 20"`). */
  readonly takesFlags?: boolean;
  /** A secret: its value is never repeated in any message. */
  readonly secret?: boolean;
  /** Hidden from `--help` (kept for compatibility). */
  readonly hidden?: boolean;
  /**
   * The command cannot run without it: when neither the command line nor a
   * source (`env`, `.env`, profile) gives it (or the value is empty),
   * {@linkcode parseFlags} throws a usage error naming the flag and its
   * variable. Not with `default`.
   */
  readonly required?: boolean;
}

/** A command's flags, by camelCase name. */
export type FlagSpecs = Readonly<Record<string, FlagSpec>>;

/** The parsed value type of one flag. */
export type ValueOf<F extends FlagSpec> = F["type"] extends "boolean" ? boolean
  : F["type"] extends "integer" | "number" | "duration" | "time" ? number
  : F["type"] extends "list" ? string[]
  : F["type"] extends "durationRange" ? DurationRange
  : string;

/**
 * The parsed values of a {@linkcode FlagSpecs}: arrays for `multiple`, else a
 * value, or `undefined` unless the flag has a default or is `required`.
 */
export type ParsedFlags<S extends FlagSpecs> = {
  -readonly [K in keyof S]: S[K] extends { multiple: true } ? ValueOf<S[K]>[]
    : S[K] extends { default: unknown } ? ValueOf<S[K]>
    : S[K] extends { required: true } ? ValueOf<S[K]>
    : ValueOf<S[K]> | undefined;
};

/** What {@linkcode parseFlags} returns. */
export interface ParseResult<S extends FlagSpecs> {
  /** The flag values. */
  flags: ParsedFlags<S>;
  /** Arguments that are not flags, before any `--`. */
  positionals: string[];
  /** Everything after `--`, or `undefined` when there was no `--`. */
  rest: string[] | undefined;
  /** Names of the flags that were given on the command line (not from env or default). */
  given: Set<string>;
  /** For each flag taken from a {@linkcode ValueSource}: where it came from (no value). */
  origins: Map<string, string>;
}

/**
 * One place a flag's value can come from when the command line does not
 * give it: the environment, a `.env` file, a profile (see `config_sources.ts`).
 * {@linkcode parseFlags} asks the sources in order; the first answer wins.
 */
export interface ValueSource {
  /** The value of flag `name` from this source, or `undefined`. */
  lookup(name: string, spec: FlagSpec): string | undefined;
  /** Names the place, for messages: `SERVICE_PORT (environment)`. Never holds a value. */
  describe(name: string, spec: FlagSpec): string;
}

/**
 * The environment as a {@linkcode ValueSource}: each flag's `env` variable.
 *
 * @example
 * ```ts
 * const source = environmentSource((n) => n === "SERVICE_PORT" ? "8545" : undefined);
 * ```
 */
export function environmentSource(
  env: (name: string) => string | undefined,
  label = "environment",
): ValueSource {
  return {
    lookup: (_name, spec) => (spec.env ? env(spec.env) : undefined),
    describe: (_name, spec) => `${spec.env} (${label})`,
  };
}

/** Options of {@linkcode parseFlags}. */
export interface ParseOptions {
  /** The command as the user typed it, for messages, e.g. `service webhooks list`. */
  command: string;
  /** Environment lookup (used when `sources` is absent); default: none. */
  env?: (name: string) => string | undefined;
  /**
   * Where absent flags are looked up, first answer wins (after the command
   * line, before the default); default: `env` alone.
   */
  sources?: readonly ValueSource[];
  /** Clock for `time` flags given as a duration back from now; default `Date.now`. */
  now?: () => number;
  /** Maximum number of positionals; default: unlimited. */
  maxPositionals?: number;
}

/** `apiKey` → `api-key`. */
export function kebab(name: string): string {
  return name.replace(/[A-Z]/g, (c) => "-" + c.toLowerCase());
}

const RANGED: ReadonlySet<FlagType> = new Set(["integer", "number", "duration", "durationRange"]);

/**
 * Checks a command's flag declarations: every `integer`, `number`,
 * `duration` and `durationRange` flag has a finite `min` and `max` with `min <= max`, and a
 * numeric default inside them; a `required` flag has no default (it could
 * never be missing). Throws a `TypeError` naming the flag (a
 * programming error, found by any test that loads the command).
 *
 * @example
 * ```ts
 * checkFlagSpecs({ timeout: { type: "duration", min: 100, max: 600_000, description: "" } });
 * ```
 */
export function checkFlagSpecs(specs: FlagSpecs): void {
  for (const [name, s] of Object.entries(specs)) {
    if (s.required && s.default !== undefined) {
      throw new TypeError(
        `Flag --${name} is required and has a default: give it one or the other.`,
      );
    }
    if (!RANGED.has(s.type)) continue;
    if (
      typeof s.min !== "number" || typeof s.max !== "number" || !Number.isFinite(s.min) ||
      !Number.isFinite(s.max) || s.min > s.max
    ) {
      throw new TypeError(`Flag --${name} (${s.type}) must declare a finite range min <= max.`);
    }
    if (typeof s.default === "number" && (s.default < s.min || s.default > s.max)) {
      throw new TypeError(`Flag --${name}: its default ${s.default} is outside its range.`);
    }
  }
}

/** The range of a ranged flag (its `min` and `max`: {@linkcode checkFlagSpecs}), for messages. */
function rangeText(spec: FlagSpec): string {
  if (spec.type === "integer" || spec.type === "number") return `${spec.min} to ${spec.max}`;
  return `from ${formatDuration(spec.min!)} to ${formatDuration(spec.max!)}`;
}

const ACCEPTED: Record<FlagType, string> = {
  string: "a text value",
  boolean: "true or false",
  integer: "a whole number",
  number: "a number",
  list: "a comma-separated list",
  duration: "a duration such as 500ms, 30s, 60m, 4h, 1d (or milliseconds)",
  durationRange: "a duration such as 90s or 2m, or a range MIN-MAX such as 5s-20s",
  time: "epoch milliseconds, an ISO 8601 time, or a duration back from now such as 24h",
};

function convert(
  spec: FlagSpec,
  raw: string,
  where: string,
  now: () => number,
): string | number | boolean | string[] | DurationRange {
  const bad = (what: string): never => {
    const shown = spec.secret ? "" : ` ${JSON.stringify(raw)}`;
    throw new UsageError(`Invalid value${shown} for ${where}: ${what}.`);
  };
  // ranged types always declare both bounds (checkFlagSpecs)
  const outside = (lo: number, hi = lo) => lo < spec.min! || hi > spec.max!;
  switch (spec.type) {
    case "boolean": {
      const v = raw.toLowerCase();
      if (["true", "1", "yes", "on", ""].includes(v)) return true;
      if (["false", "0", "no", "off"].includes(v)) return false;
      return bad("expected true or false");
    }
    case "integer":
    case "number": {
      const n = raw.trim() === "" ? NaN : Number(raw);
      if (!Number.isFinite(n) || (spec.type === "integer" && !Number.isInteger(n))) {
        return bad(`expected ${ACCEPTED[spec.type]}`);
      }
      return outside(n) ? bad(`expected ${rangeText(spec)}`) : n;
    }
    case "duration": {
      const d = parseDuration(raw);
      if (d === undefined || !Number.isFinite(d)) return bad(`expected ${ACCEPTED.duration}`);
      return outside(d) ? bad(`expected a duration ${rangeText(spec)}`) : d;
    }
    case "durationRange": {
      const r = parseDurationRange(raw);
      if (r === undefined) return bad(`expected ${ACCEPTED.durationRange} (MIN at most MAX)`);
      return outside(r.minMs, r.maxMs) ? bad(`expected durations ${rangeText(spec)}`) : r;
    }
    case "time": {
      const t = parseTime(raw, now);
      if (t === undefined) return bad(`expected ${ACCEPTED.time}`);
      return t;
    }
    case "list": {
      const items = raw.split(",").map((s) => s.trim()).filter((s) => s !== "");
      return spec.choices ? items.map((i) => checkChoice(spec, i, where, raw)) : items;
    }
    default:
      return spec.choices ? checkChoice(spec, raw, where, raw) : raw;
  }
}

/** The one message of a missing `required` flag: the flag, how to give it, its variable. */
function missingText(name: string, spec: FlagSpec, command: string): string {
  const form = spec.type === "boolean" ? `--${name}` : `--${name} ${placeholderOf(spec)}`;
  return `Missing --${name} for "${command}": give ${form}${
    spec.env ? ` or set ${spec.env}` : ""
  }.`;
}

/** `value` (upper-cased for an `upper` flag) if it is one of the flag's choices. */
function checkChoice(spec: FlagSpec, given: string, where: string, raw: string): string {
  const value = spec.upper ? given.toUpperCase() : given;
  if (!spec.choices!.includes(value)) {
    throw new UsageError(
      `Invalid value ${JSON.stringify(raw)} for ${where}: expected one of ${
        spec.choices!.join(", ")
      }.`,
    );
  }
  return value;
}

/**
 * Parses `args` against `specs`. Throws {@linkcode UsageError} (exit 2) for an
 * unknown flag, a missing or malformed value, or too many positionals.
 *
 * @example
 * ```ts
 * const { flags } = parseFlags({ pageSize: { type: "integer", description: "", default: 100 } },
 *   ["--page-size=5"], { command: "service notifications list" });
 * flags.pageSize; // 5
 * ```
 */
export function parseFlags<S extends FlagSpecs>(
  specs: S,
  args: readonly string[],
  options: ParseOptions,
): ParseResult<S> {
  checkFlagSpecs(specs);
  const now = options.now ?? Date.now;
  const byName = new Map<string, string>();
  for (const name of Object.keys(specs)) {
    byName.set(name, name);
    byName.set(kebab(name), name);
    byName.set(name.toLowerCase(), name);
    const short = specs[name].short;
    if (short) byName.set(short, name);
  }
  const values: Record<string, unknown> = {};
  const given = new Set<string>();
  const positionals: string[] = [];
  let rest: string[] | undefined;
  const help = `Run "${options.command} --help" for the accepted flags.`;

  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    if (arg === "--") {
      rest = args.slice(i + 1);
      break;
    }
    if (!/^--?[A-Za-z]/.test(arg)) {
      positionals.push(arg);
      continue;
    }
    const body = arg.replace(/^--?/, "");
    const eq = body.indexOf("=");
    const key = eq === -1 ? body : body.slice(0, eq);
    const name = byName.get(key);
    if (name === undefined) {
      const all = Object.keys(specs).filter((n) => !specs[n].hidden);
      const guess = closest(key, all, kebab);
      const hint = guess
        ? ` Did you mean --${guess}?`
        : key === "json" && !specs.format
        ? ` "${options.command}" prints no records: it has no --json or --format.`
        : "";
      throw new UsageError(
        `Unknown flag "${arg.split("=")[0]}" for "${options.command}".${hint} ${help}`,
      );
    }
    const spec = specs[name];
    const where = `--${name}`;
    let raw: string;
    if (eq !== -1) raw = body.slice(eq + 1);
    else if (spec.type === "boolean") {
      // `--x false` as well as `--x=false`: a following true/false is the value.
      const next = args[i + 1];
      if (next !== undefined && /^(true|false)$/i.test(next)) {
        raw = next;
        i++;
      } else raw = "true";
    } else {
      const next = args[i + 1];
      if (next === undefined || (!spec.takesFlags && /^--[A-Za-z]/.test(next))) {
        throw new UsageError(
          `Missing value for --${name}: expected ${
            spec.placeholder ?? ACCEPTED[spec.type]
          }. ${help}`,
        );
      }
      raw = next;
      i++;
    }
    const value = convert(spec, raw, where, now);
    // a repeated list flag adds its items, another repeated flag its value
    values[name] = spec.multiple
      ? [...(values[name] as unknown[] ?? []), ...[value].flat()]
      : value;
    given.add(name);
  }

  const sources = options.sources ?? (options.env ? [environmentSource(options.env)] : []);
  const origins = new Map<string, string>();
  for (const [name, spec] of Object.entries(specs)) {
    if (values[name] !== undefined) continue;
    const source = sources.find((s) => (s.lookup(name, spec) ?? "") !== "");
    if (source) {
      const where = source.describe(name, spec);
      const v = convert(spec, source.lookup(name, spec)!, where, now);
      values[name] = spec.multiple && !Array.isArray(v) ? [v] : v;
      origins.set(name, where);
    } else if (spec.default !== undefined) {
      values[name] = Array.isArray(spec.default) ? [...spec.default] : spec.default;
    } else if (spec.multiple) {
      values[name] = [];
    }
  }
  for (const [name, spec] of Object.entries(specs)) {
    const v = values[name];
    // An empty value (`--webhookId=`, an empty list) is as missing as an absent one.
    if (spec.required && (v === undefined || v === "" || (Array.isArray(v) && v.length === 0))) {
      throw new UsageError(missingText(name, spec, options.command));
    }
  }
  if (options.maxPositionals !== undefined && positionals.length > options.maxPositionals) {
    throw new UsageError(
      `Unexpected argument "${
        positionals[options.maxPositionals]
      }" for "${options.command}". ${help}`,
    );
  }
  return { flags: values as ParsedFlags<S>, positionals, rest, given, origins };
}
