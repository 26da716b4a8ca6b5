/**
 * Reading the README's examples for the README tests: its fenced `sh`
 * blocks as command lines (backslash continuations joined, comments and
 * blank lines dropped), shell-like word splitting, and a free port. Used by
 * `readme_walkthrough_test.ts` (the webhook walk-through) and
 * `readme_commands_test.ts` (every other block).
 *
 * @module
 */

import { ROOT } from "../support/tools.ts";

/** The README's text. */
export const README: string = await Deno.readTextFile(`${ROOT}README.md`);

/** The marker before the walk-through block (run by readme_walkthrough_test.ts). */
export const WALKTHROUGH_MARKER = "<!-- walkthrough";

/** One fenced `sh` block: its first line number in README.md and its command lines. */
export interface ShBlock {
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

/** Every fenced `sh` block of `readme`, in order. */
export function shBlocks(readme: string = README): ShBlock[] {
  const blocks: ShBlock[] = [];
  const marker = readme.indexOf(WALKTHROUGH_MARKER);
  let walkthroughAt = -1;
  if (marker >= 0) walkthroughAt = readme.indexOf("```sh\n", marker);
  for (const m of readme.matchAll(/```sh\n([\s\S]*?)```/g)) {
    blocks.push({
      line: readme.slice(0, m.index).split("\n").length,
      walkthrough: m.index === walkthroughAt,
      commands: commandLines(m[1]),
    });
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
