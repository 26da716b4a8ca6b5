/**
 * The seed's forge example over HTTP with its first transaction held for approval 70 s:
 * forge gives up on eth_sendTransaction after 45 s and sends it again; the repeat joins
 * the send in flight, and the script completes with exactly three transactions.
 */
import { heldForSeventySeconds } from "./forge_held.ts";

heldForSeventySeconds("http");
