/**
 * Start-up time of `service --help`, `--version` and a subcommand's help,
 * against the baseline of Deno running an empty script, in one run (ratios,
 * since these machines are noisy).
 *
 *   deno run -A scripts/bench/startup.ts [runs=30]
 *
 * @module
 */

const root = new URL("../../", import.meta.url).pathname;
const runs = Number(Deno.args[0] ?? 30);
const empty = await Deno.makeTempFile({ suffix: ".ts" });
await Deno.writeTextFile(empty, "Deno.exit(0);\n");

async function time(args: string[]): Promise<number[]> {
  const xs: number[] = [];
  for (let i = 0; i < runs + 3; i++) {
    const t0 = performance.now();
    const { code } = await new Deno.Command(Deno.execPath(), {
      args,
      cwd: root,
      stdout: "null",
      stderr: "null",
    })
      .output();
    if (code !== 0) throw new Error(`${args.join(" ")} exited ${code}`);
    if (i >= 3) xs.push(performance.now() - t0); // first runs warm the cache
  }
  return xs.sort((a, b) => a - b);
}

const median = (xs: number[]) => xs[Math.floor(xs.length / 2)];
const p90 = (xs: number[]) => xs[Math.floor(xs.length * 0.9)];
const cases: [string, string[]][] = [
  ["deno, empty script (baseline)", ["run", "-A", empty]],
  ["service --help", ["run", "-A", "main.ts", "--help"]],
  ["service --version", ["run", "-A", "main.ts", "--version"]],
  ["service webhooks list --help", ["run", "-A", "main.ts", "webhooks", "list", "--help"]],
  ["service rpc --help", ["run", "-A", "main.ts", "rpc", "--help"]],
];
let base = 0;
console.log(`runs per case: ${runs}`);
for (const [name, args] of cases) {
  const xs = await time(args);
  if (!base) base = median(xs);
  console.log(
    `${name.padEnd(34)} median ${median(xs).toFixed(1).padStart(6)} ms  p90 ${
      p90(xs).toFixed(1).padStart(6)
    } ms  ` +
      `added ${(median(xs) - base).toFixed(1).padStart(5)} ms  ratio ${
        (median(xs) / base).toFixed(2)
      }`,
  );
}
await Deno.remove(empty);
