/**
 * The ports `fetch` never connects to (the Fetch standard's "bad ports",
 * https://fetch.spec.whatwg.org/#port-blocking; Deno follows it and answers
 * "Requests to port 1 are blocked"), so that a URL on one of them is
 * explained in our words: nothing there can be reached by an HTTP client.
 *
 * @module
 */

const BAD_PORTS = new Set([
  0,
  1,
  7,
  9,
  11,
  13,
  15,
  17,
  19,
  20,
  21,
  22,
  23,
  25,
  37,
  42,
  43,
  53,
  69,
  77,
  79,
  87,
  95,
  101,
  102,
  103,
  104,
  109,
  110,
  111,
  113,
  115,
  117,
  119,
  123,
  135,
  137,
  139,
  143,
  161,
  179,
  389,
  427,
  465,
  512,
  513,
  514,
  515,
  526,
  530,
  531,
  532,
  540,
  548,
  554,
  556,
  563,
  587,
  601,
  636,
  989,
  990,
  993,
  995,
  1719,
  1720,
  1723,
  2049,
  3659,
  4045,
  4190,
  5060,
  5061,
  6000,
  6566,
  6665,
  6666,
  6667,
  6668,
  6669,
  6679,
  6697,
  10080,
]);

/**
 * Why `url` cannot be fetched because of its port, or `undefined` when its
 * port is allowed (or it is not an http(s)/ws(s) URL).
 *
 * @example
 * ```ts
 * blockedPortReason("http://127.0.0.1:1");
 * // "port 1 is one that HTTP clients never connect to (a blocked port of the Fetch standard)"
 * ```
 */
export function blockedPortReason(url: string): string | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return undefined;
  }
  if (!/^(https?|wss?):$/.test(parsed.protocol) || parsed.port === "") return undefined;
  const port = Number(parsed.port);
  if (!BAD_PORTS.has(port)) return undefined;
  return `port ${port} is one that HTTP clients never connect to (a blocked port of the Fetch ` +
    `standard)`;
}
