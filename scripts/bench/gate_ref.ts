/**
 * Which commit the regression gate (`gate.ts`) compares the working tree
 * with, when none is named: the last commit of `main` that your branch
 * starts from (`git merge-base HEAD main`), i.e. what your branch's work
 * replaces; when that is HEAD itself (on `main`, or a branch with no
 * commit of its own), `HEAD~1`. A named REF wins. The choice is pure
 * ({@linkcode chooseRef}); {@linkcode gitFacts} asks git for the facts.
 *
 * @module
 */

/** What git says about the checkout. */
export interface GitFacts {
  /** HEAD's commit. */
  head: string;
  /** `git merge-base HEAD main`, when there is a `main`. */
  mergeBase?: string;
  /** HEAD~1, when HEAD has a parent. */
  parent?: string;
}

/** The chosen REF: a revision for git, and why it was chosen. */
export interface RefChoice {
  ref: string;
  why: string;
}

/** Chooses REF (see the module doc); throws when there is nothing to compare with. */
export function chooseRef(named: string | undefined, facts: GitFacts): RefChoice {
  if (named !== undefined && named !== "") return { ref: named, why: "named on the command line" };
  if (facts.mergeBase && facts.mergeBase !== facts.head) {
    return { ref: facts.mergeBase, why: "the last commit of main this branch starts from" };
  }
  if (facts.parent) {
    return {
      ref: facts.parent,
      why: facts.mergeBase ? "HEAD~1 (HEAD is on main)" : "HEAD~1 (no main branch)",
    };
  }
  throw new Error("nothing to compare with: HEAD has no parent and no main; name a REF");
}

/** Runs git in `cwd`; its trimmed output, or undefined when it fails. */
async function git(cwd: string, args: string[]): Promise<string | undefined> {
  const out = await new Deno.Command("git", { args, cwd, stdout: "piped", stderr: "null" })
    .output();
  return out.success ? new TextDecoder().decode(out.stdout).trim() : undefined;
}

/** Asks git in `cwd` for HEAD, its merge base with main and its parent. */
export async function gitFacts(cwd: string): Promise<GitFacts> {
  const head = await git(cwd, ["rev-parse", "--verify", "HEAD"]);
  if (!head) throw new Error(`${cwd} is not a git checkout with a commit`);
  return {
    head,
    mergeBase: await git(cwd, ["merge-base", "HEAD", "main"]),
    parent: await git(cwd, ["rev-parse", "--verify", "--quiet", "HEAD~1"]),
  };
}

/** The full commit id of `rev` in `cwd`; throws with what to do when git does not know it. */
export async function commitOf(cwd: string, rev: string): Promise<string> {
  const sha = await git(cwd, ["rev-parse", "--verify", "--quiet", `${rev}^{commit}`]);
  if (!sha) throw new Error(`REF "${rev}" is not a commit here (try a branch, a tag or HEAD~1)`);
  return sha;
}
