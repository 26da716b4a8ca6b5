/**
 * Reading the documentation's examples for the README tests: the fenced `sh`
 * blocks of README.md and of every `docs/*.md` as command lines (backslash
 * continuations joined, comments and blank lines dropped), shell-like word
 * splitting, and a free port. Used by `readme_walkthrough_test.ts` (the
 * webhook walk-through) and `readme_commands_test.ts` (every other block).
 *
 * @module
 */

import { ROOT } from "../support/tools.ts";

/** One documentation file: its path from the checkout's root and its text. */
export interface DocFile {
  /** `README.md` or `docs/<name>.md`. */
  path: string;
  /** The file's text. */
  text: string;
}

/**
 * Every `docs/*.md` in reading order (the order of README.md's "Documentation" list, then any
 * other by name), then README.md, whose examples are copies of lines of `docs/`: the files whose
 * examples the tests run, in the order they run them.
 */
export async function docFiles(): Promise<DocFile[]> {
  const readme = await Deno.readTextFile(`${ROOT}README.md`);
  const names: string[] = [];
  for await (const e of Deno.readDir(`${ROOT}docs`)) {
    if (e.isFile && e.name.endsWith(".md")) names.push(`docs/${e.name}`);
  }
  const list = readme.slice(readme.indexOf("\n## Documentation"));
  const listed = [...list.matchAll(/\]\((docs\/[\w-]+\.md)\)/g)].map((m) => m[1]);
  const order = [...new Set(listed)].filter((p) => names.includes(p));
  const paths = [...order, ...names.filter((n) => !order.includes(n)).sort(), "README.md"];
  return await Promise.all(
    paths.map(async (path) => ({ path, text: await Deno.readTextFile(`${ROOT}${path}`) })),
  );
}

/** README.md and every `docs/*.md`, read once. */
export const DOCS: DocFile[] = await docFiles();

/** The text of README.md and every `docs/*.md`, one after the other. */
export const README: string = DOCS.map((d) => d.text).join("\n");

/** The marker before the walk-through block (run by readme_walkthrough_test.ts). */
export const WALKTHROUGH_MARKER = "<!-- walkthrough";

/** One fenced `sh` block: where it is and its command lines. */
export interface ShBlock {
  /** The file it is in (`README.md`, `docs/rpc.md`, ...). */
  file: string;
  /** 1-based line of the opening fence. */
  line: number;
  /** True for the block after the walk-through marker. */
  walkthrough: boolean;
  /** Command lines: continuations joined, comments removed, blank lines dropped. */
  commands: string[];
}

/** Splits a block's text into command lines. */
export function commandLines(text: string): string[] {
  return text.replace(/\\\n\s*/g, "").split("\n")
    .map((l) => l.replace(/(^|\s+)#.*$/, "").trim())
    .filter((l) => l !== "");
}

/** Every fenced `sh` block of `docs` (`docs/*.md` in reading order, then README.md), in order. */
export function shBlocks(docs: DocFile[] = DOCS): ShBlock[] {
  const blocks: ShBlock[] = [];
  for (const { path, text } of docs) {
    const marker = text.indexOf(WALKTHROUGH_MARKER);
    let walkthroughAt = -1;
    if (marker >= 0) walkthroughAt = text.indexOf("```sh\n", marker);
    for (const m of text.matchAll(/```sh\n([\s\S]*?)```/g)) {
      blocks.push({
        file: path,
        line: text.slice(0, m.index).split("\n").length,
        walkthrough: m.index === walkthroughAt,
        commands: commandLines(m[1]),
      });
    }
  }
  return blocks;
}

/** Splits a command line into words (double and single quotes; no expansions). */
export function words(line: string): string[] {
  const out: string[] = [];
  const re = /"([^"]*)"|'([^']*)'|(\S+)/g;
  for (const m of line.matchAll(re)) out.push(m[1] ?? m[2] ?? m[3]);
  return out;
}

/** A port that was free a moment ago on 127.0.0.1. */
export function freePort(): number {
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (l.addr as Deno.NetAddr).port;
  l.close();
  return port;
}
