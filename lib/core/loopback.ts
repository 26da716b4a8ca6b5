/**
 * What the local servers (the bridge's HTTP transport, the emulator's
 * console) share to refuse browser attacks: whether a `Host` header names
 * this machine's loopback (a DNS-rebinding page sends its own name), the
 * host name of a `Host` header, and a constant-time comparison of per-run
 * tokens.
 *
 * @module
 */

/**
 * True for `localhost`, `*.localhost`, `127.x.x.x` and `::1`.
 *
 * @example
 * ```ts
 * isLoopbackHost("127.0.0.1"); // true
 * isLoopbackHost("evil.example"); // false
 * ```
 */
export function isLoopbackHost(hostname: string): boolean {
  const h = hostname.toLowerCase().replace(/^\[|\]$/g, "").replace(/\.$/, "");
  return h === "localhost" || h.endsWith(".localhost") || /^127\.\d+\.\d+\.\d+$/.test(h) ||
    h === "::1" || h === "0:0:0:0:0:0:0:1";
}

/**
 * True for an address to listen on that is loopback whatever a resolver says: `localhost`, a
 * `127.x.x.x` or `::1` literal. Narrower than {@linkcode isLoopbackHost}: a browser treats any
 * `*.localhost` name as loopback, but binding one binds whatever the system's resolver maps it to.
 *
 * @example
 * ```ts
 * isLoopbackBind("127.0.0.1"); // true
 * isLoopbackBind("app.localhost"); // false
 * ```
 */
export function isLoopbackBind(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, "").toLowerCase();
  return h === "localhost" || /^127\.\d+\.\d+\.\d+$/.test(h) || h === "::1";
}

/**
 * The host name of a `Host` header value (the port removed; IPv6 kept in brackets).
 *
 * @example
 * ```ts
 * hostnameOf("127.0.0.1:8080"); // "127.0.0.1"
 * hostnameOf("[::1]:8080"); // "[::1]"
 * hostnameOf("[::1]evil.com"); // "[::1]evil.com" (not a loopback name)
 * ```
 */
export function hostnameOf(hostHeader: string): string {
  // Only `host` or `host:digits`; anything else (`[::1]evil.com`, `localhost:x`) is returned
  // whole, so that it names no loopback host and is refused.
  if (hostHeader.startsWith("[")) {
    const end = hostHeader.indexOf("]") + 1;
    if (end === 0) return hostHeader;
    return /^(:\d+)?$/.test(hostHeader.slice(end)) ? hostHeader.slice(0, end) : hostHeader;
  }
  const colon = hostHeader.lastIndexOf(":");
  if (colon === -1) return hostHeader;
  return /^\d+$/.test(hostHeader.slice(colon + 1)) ? hostHeader.slice(0, colon) : hostHeader;
}

/**
 * Constant-time comparison of two strings (per-run tokens).
 *
 * @example
 * ```ts
 * declare const given: string, token: string;
 * sameText(given, token); // true only when equal
 * ```
 */
export function sameText(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let d = 0;
  for (let i = 0; i < a.length; i++) d |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return d === 0;
}
