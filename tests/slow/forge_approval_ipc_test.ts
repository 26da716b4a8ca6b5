/**
 * The seed's forge example over IPC with its first transaction held for approval 70 s:
 * forge's IPC requests have no 45 s timeout (measured: it waits), and the script
 * completes with exactly three transactions.
 */
import { heldForSeventySeconds } from "./forge_held.ts";

heldForSeventySeconds("ipc");
