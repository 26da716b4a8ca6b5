/**
 * The `.env` file: `KEY=value` lines read before the environment (the real
 * environment wins over them), as the platform's bridge reads one. Only the
 * variables that flags name are ever looked up; nothing from the file is put
 * into this process's or a child's environment, and no value is repeated in
 * a message.
 *
 * Accepted lines: blank, `# comment`, `KEY=value`, `export KEY=value`,
 * `KEY="double-quoted, with \n escapes"`, `KEY='single-quoted, literal'`;
 * an unquoted value ends at ` #`.
 *
 * @module
 */

import { UsageError } from "./errors.ts";

/**
 * Parses the text of a `.env` file. A malformed line is a usage error that
 * names the file and the line number, never its content.
 *
 * @example
 * ```ts
 * parseEnvFile('SERVICE_PORT=8545\n# note\nexport SERVICE_NOTE="a b"\n', ".env").get("SERVICE_NOTE"); // "a b"
 * ```
 */
export function parseEnvFile(text: string, path: string): Map<string, string> {
  const values = new Map<string, string>();
  const lines = text.replace(/^\uFEFF/, "").split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i].trim();
    if (line === "" || line.startsWith("#")) continue;
    const m = /^(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*)$/.exec(line);
    if (!m) {
      throw new UsageError(
        `Cannot read ${path}, line ${
          i + 1
        }: expected KEY=value (a comment starts with #). Fix the line, or skip the file with --noEnvFile.`,
      );
    }
    const [, key, rest] = m;
    let value: string;
    const quote = rest[0];
    if (quote === '"' || quote === "'") {
      const end = rest.indexOf(quote, 1);
      if (end === -1 || !/^\s*(#.*)?$/.test(rest.slice(end + 1))) {
        throw new UsageError(
          `Cannot read ${path}, line ${
            i + 1
          }: the quoted value of ${key} is not closed on its line.`,
        );
      }
      value = rest.slice(1, end);
      if (quote === '"') {
        value = value.replace(
          /\\([nrt"\\])/g,
          (_, c: string) => ({ n: "\n", r: "\r", t: "\t" } as Record<string, string>)[c] ?? c,
        );
      }
    } else {
      value = rest.replace(/\s+#.*$/, "").trim();
    }
    values.set(key, value);
  }
  return values;
}

/**
 * Reads a `.env` file. `required` (a path the user named with `--envFile`)
 * makes a missing file a usage error; otherwise a missing file is no file.
 *
 * @example
 * ```ts
 * const values = await readEnvFile("/work/project/.env", false);
 * ```
 */
export async function readEnvFile(
  path: string,
  required: boolean,
): Promise<Map<string, string> | undefined> {
  const text = await Deno.readTextFile(path).catch((e) => {
    if (e instanceof Deno.errors.NotFound && !required) return undefined;
    const why = e instanceof Deno.errors.NotFound ? "no such file" : e.message;
    throw new UsageError(`Cannot read the env file ${path}: ${why}. Check --envFile.`);
  });
  return text === undefined ? undefined : parseEnvFile(text, path);
}
