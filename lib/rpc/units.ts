/**
 * Conversions between JSON-RPC quantities (hex wei) and the platform's
 * decimal strings (ether for amounts, gwei for fees). Exact: bigint only.
 *
 * @module
 */

import { BadRequestError } from "../core/mod.ts";

/**
 * Parses a JSON-RPC quantity (`0x`-hex, or a decimal string/number as some
 * clients send) into a bigint. Throws `BadRequestError` when it is not one.
 */
export function parseQuantity(value: unknown, name: string): bigint {
  if (typeof value === "bigint") return value;
  if (typeof value === "number" && Number.isSafeInteger(value) && value >= 0) {
    return BigInt(value);
  }
  if (typeof value === "string") {
    if (/^0x[0-9a-fA-F]+$/.test(value)) return BigInt(value);
    if (/^\d+$/.test(value)) return BigInt(value);
  }
  throw new BadRequestError(
    `${name} must be a hex quantity such as 0x1 (got ${JSON.stringify(value)})`,
  );
}

/**
 * Formats `value` with `decimals` decimals, without trailing zeros.
 *
 * @example
 * ```ts
 * formatUnits(1500000000000000000n, 18); // "1.5"
 * formatUnits(2000000000n, 9); // "2"
 * ```
 */
export function formatUnits(value: bigint, decimals: number): string {
  const negative = value < 0n;
  const v = negative ? -value : value;
  const base = 10n ** BigInt(decimals);
  const whole = v / base;
  const frac = (v % base).toString().padStart(decimals, "0").replace(/0+$/, "");
  return `${negative ? "-" : ""}${whole}${frac ? "." + frac : ""}`;
}
