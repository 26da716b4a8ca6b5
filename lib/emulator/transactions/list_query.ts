/**
 * The query of `GET /v1/transactions` as the official SDKs send it (the
 * TypeScript SDK's `TransactionsApi.getTransactions`): the filters
 * `status`, `sourceType`/`sourceId`, `destType`/`destId`, `assets`,
 * `txHash`, `before`/`after` (epoch ms of creation, both strict, as the
 * SDK words them: created before / after the instant given, so `before=X`
 * and `after=X` both leave out a transaction created at X), `sourceWalletId`/
 * `destWalletId`, the order `orderBy` (`createdAt` | `lastUpdated`) and
 * `sort` (`ASC` | `DESC`, default DESC), `limit` (1-500, default 200), and
 * the page cursors `next`/`prev` that the answer's `next-page`/`prev-page`
 * headers carry. A cursor holds the whole query and the position, so
 * `?next=<cursor>` alone gives the next page (what the TypeScript SDK
 * sends; the header's whole URL given as `next` works too) as does the
 * header's URL (what the older SDK follows). Bad input
 * is a `BadRequestError` naming the parameter.
 *
 * @module
 */

import { bad, intParam, listParam, oneOf, timeParam } from "../http/params.ts";
import { decodeCursor, encodeCursor } from "../http/cursor.ts";

/** The peer types the SDK's `sourceType` and `destType` filters share. */
const PEER_TYPES = [
  "VAULT_ACCOUNT",
  "EXCHANGE_ACCOUNT",
  "INTERNAL_WALLET",
  "EXTERNAL_WALLET",
  "CONTRACT",
  "FIAT_ACCOUNT",
  "NETWORK_CONNECTION",
  "COMPOUND",
] as const;

/** The source types of the SDK's `sourceType` filter. */
export const SOURCE_TYPES = [...PEER_TYPES, "UNKNOWN", "GAS_STATION", "END_USER_WALLET"] as const;

/** The destination types of the SDK's `destType` filter. */
export const DEST_TYPES = [...PEER_TYPES, "ONE_TIME_ADDRESS", "END_USER_WALLET"] as const;

/** Which transactions a listing wants and in which order. */
export interface TransactionFilter {
  /** Only these statuses (all when empty). */
  statuses: string[];
  /** Source type and id, when given. */
  sourceType?: string;
  /** Source id (e.g. the vault account). */
  sourceId?: string;
  /** Destination type, when given. */
  destType?: string;
  /** Destination id. */
  destId?: string;
  /** Only these asset ids (all when empty). */
  assets: string[];
  /** Only this chain hash. */
  txHash?: string;
  /** Created strictly before (epoch ms). */
  before?: number;
  /** Created strictly after (epoch ms). */
  after?: number;
  /** An end-user wallet filter was given: the emulator has none, so nothing matches. */
  endUserWallet: boolean;
  /** Order key. */
  orderBy: "createdAt" | "lastUpdated";
  /** Direction. */
  sort: "ASC" | "DESC";
  /** Page size. */
  limit: number;
}

/** A position in a listing: the order key and row number of a row at a page's edge. */
export interface PagePosition {
  /** The order key's value of that row (epoch ms). */
  key: number;
  /** Its row number (ties). */
  seq: number;
}

/** A parsed listing request: the filter and, for a follow-up page, where it starts. */
export interface TransactionListQuery {
  /** What to list. */
  filter: TransactionFilter;
  /** The filter's query string (what a page cursor carries, checked again when it comes back). */
  filterQuery: string;
  /** `next`: rows after `at`; `prev`: rows before it; absent: the first page. */
  page?: { direction: "next" | "prev"; at: PagePosition };
}

/** The filter of a first-page query string. */
function filterOf(q: URLSearchParams): TransactionFilter {
  const limit = intParam(q, "limit", 200, 1, 500);
  const sort = (q.get("sort") || "DESC").toUpperCase();
  if (sort !== "ASC" && sort !== "DESC") {
    bad(`sort must be ASC or DESC, got ${JSON.stringify(sort)}.`);
  }
  const orderBy = oneOf(q, "orderBy", ["createdAt", "lastUpdated"] as const) ?? "createdAt";
  return {
    statuses: listParam(q, "status"),
    sourceType: oneOf(q, "sourceType", SOURCE_TYPES),
    sourceId: q.get("sourceId") || undefined,
    destType: oneOf(q, "destType", DEST_TYPES),
    destId: q.get("destId") || undefined,
    assets: listParam(q, "assets"),
    txHash: q.get("txHash") || undefined,
    before: timeParam(q, "before"),
    after: timeParam(q, "after"),
    endUserWallet: Boolean(q.get("sourceWalletId") || q.get("destWalletId")),
    orderBy,
    sort,
    limit,
  };
}

/**
 * Parses the query string of `GET /v1/transactions`.
 *
 * @example
 * ```ts
 * parseTransactionListQuery(new URLSearchParams("txHash=0xab&limit=10"));
 * ```
 */
export function parseTransactionListQuery(q: URLSearchParams): TransactionListQuery {
  const next = q.get("next");
  const prev = q.get("prev");
  if (next && prev) bad("Give next or prev, not both.");
  let token = next || prev;
  if (!token) {
    const own = new URLSearchParams(q);
    return { filter: filterOf(own), filterQuery: own.toString() };
  }
  // the whole header value (a URL) passed as the cursor: take the cursor out of it
  if (token.includes("?")) {
    token = new URLSearchParams(token.slice(token.indexOf("?") + 1)).get(next ? "next" : "prev") ??
      token;
  }
  const c = decodeCursor(token);
  const at = { key: c?.k, seq: c?.s };
  if (typeof c?.q !== "string" || !Number.isInteger(at.key) || !Number.isInteger(at.seq)) {
    bad(
      `${next ? "next" : "prev"} is not a cursor this emulator gave out (take it from the ` +
        "next-page or prev-page header); omit it to start again.",
    );
  }
  // the filter is checked again, as on a first page: a cursor is client input
  const filterQuery = c.q;
  return {
    filter: filterOf(new URLSearchParams(filterQuery)),
    filterQuery,
    page: { direction: next ? "next" : "prev", at: at as PagePosition },
  };
}

/**
 * The cursor of the page `direction` of `at` under the filter whose query
 * string is `filterQuery`.
 *
 * @example
 * ```ts
 * pageCursor("status=COMPLETED&limit=10", "next", { key: 1700000000000, seq: 12 });
 * ```
 */
export function pageCursor(
  filterQuery: string,
  direction: "next" | "prev",
  at: PagePosition,
): string {
  return encodeCursor({ d: direction, q: filterQuery, k: at.key, s: at.seq });
}
