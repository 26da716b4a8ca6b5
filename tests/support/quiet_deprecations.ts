/**
 * Preloaded by `deno task test` (`deno test --preload`, scripts/run_tests.ts):
 * drops Node's DEP0040 warning ("The `punycode` module is deprecated"), which
 * node-fetch's URL parser (under web3's and the platform's web3 provider's HTTP
 * clients, test peers only) triggers on load. Every other warning still shows.
 *
 * @module
 */

import process from "node:process";

const emit = process.emitWarning.bind(process);
process.emitWarning = ((warning: string | Error, ...rest: unknown[]) => {
  const options = rest[0];
  const code = typeof options === "object" && options !== null
    ? (options as { code?: string }).code
    : rest[1];
  if (
    code === "DEP0040" ||
    (warning as Error)?.name === "DeprecationWarning" &&
      /punycode/.test(String((warning as Error).message))
  ) return;
  return (emit as (...a: unknown[]) => void)(warning, ...rest);
}) as typeof process.emitWarning;
