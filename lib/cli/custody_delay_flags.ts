/**
 * The two flags that make an emulator take as long as a real custody platform, declared once
 * for `service emulator` and `service rpc --emulator`; each transaction draws a uniform value
 * from a range.
 *
 * @module
 */

import type { FlagSpec } from "./flags.ts";

/** The longest custody delay a flag accepts: 24 hours (as the emulator's `MAX_CUSTODY_DELAY_MS`). */
const MAX_DELAY_MS = 24 * 3_600_000;

/** `--approvalDelay` and `--signingDelay`. */
export const CUSTODY_DELAY_FLAGS = {
  approvalDelay: {
    type: "durationRange",
    min: 0,
    max: MAX_DELAY_MS,
    placeholder: "DURATION|MIN-MAX",
    description:
      "Every new transaction waits this long in PENDING_AUTHORIZATION (an approval policy), e.g. 2m or 30s-3m (default: none).",
  },
  signingDelay: {
    type: "durationRange",
    min: 0,
    max: MAX_DELAY_MS,
    placeholder: "DURATION|MIN-MAX",
    description:
      "Every transaction waits this long in PENDING_SIGNATURE before it is signed (MPC signing), e.g. 5s-20s (default: none).",
  },
} as const satisfies Record<string, FlagSpec>;
