// The solc command-line surface forge uses, over the npm `solc` package:
// `--version`, and `--standard-json` (input on stdin, output on stdout) with
// `--base-path`/`--allow-paths`/`--include-path` for imports.
import { createRequire } from "node:module";
import { readFileSync } from "node:fs";
import { isAbsolute, resolve } from "node:path";

const require = createRequire(import.meta.url);
const solc = require("solc");

const args = process.argv.slice(2);
const full = solc.version(); // e.g. 0.8.30+commit.73712a01.Emscripten.clang
const [semver, rest = ""] = full.split("+");
const commit = (rest.match(/commit\.[0-9a-f]+/) ?? ["commit.00000000"])[0];

if (args.includes("--version") || args.includes("-v")) {
  process.stdout.write(
    `solc, the solidity compiler commandline interface\nVersion: ${semver}+${commit}.Linux.g++\n`,
  );
  process.exit(0);
}

if (!args.includes("--standard-json")) {
  process.stderr.write("this solc wrapper supports only --version and --standard-json\n");
  process.exit(1);
}

const roots = [];
for (let i = 0; i < args.length; i++) {
  if (["--base-path", "--include-path", "--allow-paths"].includes(args[i]) && args[i + 1]) {
    for (const p of args[i + 1].split(",")) if (p) roots.push(p);
    i++;
  }
}
roots.push(process.cwd());

function findImports(path) {
  const candidates = isAbsolute(path) ? [path] : roots.map((r) => resolve(r, path));
  for (const c of candidates) {
    try {
      return { contents: readFileSync(c, "utf8") };
    } catch { /* try the next root */ }
  }
  return { error: `File not found: ${path}` };
}

const chunks = [];
process.stdin.on("data", (c) => chunks.push(c));
process.stdin.on("end", () => {
  const input = Buffer.concat(chunks).toString("utf8");
  const output = solc.compile(input, { import: findImports });
  process.stdout.write(output);
});
