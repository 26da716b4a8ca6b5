/**
 * Helpers for the `rpc` tests: a throwaway API key pair, a bridge started as
 * a user would (`main.ts rpc` without a child, address read from its first
 * stdout line), and raw JSON-RPC over HTTP and IPC.
 *
 * @module
 */

import { mainCommand, ROOT } from "./main_command.ts";

/**
 * The flags of a bridge that never reaches a platform (an unroutable
 * `--apiBaseUrl`, no retries): reads, transports and the bridge's own checks
 * work; a signing call fails at once. `keyPath` from {@linkcode tempPrivateKey}.
 */
export function offlineBridgeFlags(keyPath: string, rpcUrl: string): string[] {
  return [
    "--apiKey",
    "test-key",
    "--privateKey",
    keyPath,
    "--apiBaseUrl",
    "http://127.0.0.1:9",
    "--retries",
    "0",
    "--rpcUrl",
    rpcUrl,
    "--assetId",
    "ETH_TEST",
  ];
}

/** Writes a fresh RSA private key (PKCS#8 PEM) to a temp file; returns its path. */
export async function tempPrivateKey(): Promise<string> {
  const pair = await crypto.subtle.generateKey(
    {
      name: "RSASSA-PKCS1-v1_5",
      modulusLength: 2048,
      publicExponent: new Uint8Array([1, 0, 1]),
      hash: "SHA-256",
    },
    true,
    ["sign", "verify"],
  );
  const der = new Uint8Array(await crypto.subtle.exportKey("pkcs8", pair.privateKey));
  const b64 = btoa(String.fromCharCode(...der)).replace(/(.{64})/g, "$1\n");
  const path = await Deno.makeTempFile({ suffix: ".pem" });
  await Deno.writeTextFile(
    path,
    `-----BEGIN PRIVATE KEY-----\n${b64}\n-----END PRIVATE KEY-----\n`,
  );
  return path;
}

/** A bridge process started without a child. */
export interface BridgeProcess {
  address: string;
  process: Deno.ChildProcess;
  /** Everything written to stderr so far. */
  stderr(): string;
  /** Sends SIGTERM and waits; returns the exit code. */
  stop(signal?: Deno.Signal): Promise<number>;
}

/**
 * Starts `main.ts rpc ...args` (no child) and waits for its address line;
 * `program` replaces `["run", "-A", "<checkout>/main.ts"]` (Deno's arguments
 * before `rpc`), e.g. to run the bundle as the npm package does.
 */
export async function startBridgeProcess(
  args: string[],
  env: Record<string, string> = {},
  program: string[] = ["run", "-A", `${ROOT}main.ts`],
  options: { fileLimit?: number } = {},
): Promise<BridgeProcess> {
  const child = mainCommand(["rpc", ...args], { env, program, fileLimit: options.fileLimit })
    .spawn();
  let err = "";
  (async () => {
    const dec = new TextDecoder();
    for await (const c of child.stderr) err += dec.decode(c, { stream: true });
  })();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let buf = "";
  const deadline = Date.now() + 30_000;
  while (!buf.includes("\n") && Date.now() < deadline) {
    const { value, done } = await reader.read();
    if (done) break;
    buf += value;
  }
  (async () => {
    try {
      while (!(await reader.read()).done) { /* drain */ }
    } catch { /* closed */ }
  })();
  if (!buf.includes("\n")) {
    try {
      child.kill("SIGKILL");
    } catch { /* gone */ }
    await child.status;
    throw new Error(`bridge did not start: ${err.slice(0, 1000)}`);
  }
  return {
    address: buf.split("\n")[0].trim(),
    process: child,
    stderr: () => err,
    async stop(signal: Deno.Signal = "SIGTERM") {
      try {
        child.kill(signal);
      } catch { /* gone */ }
      const s = await child.status;
      return s.code;
    },
  };
}

/** POSTs a JSON-RPC body (text or value) to an HTTP address; returns status, headers and text. */
export async function httpRpc(
  url: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; text: string; headers: Headers; json: () => unknown }> {
  const r = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
  const text = await r.text();
  return { status: r.status, text, headers: r.headers, json: () => JSON.parse(text) };
}

/** An open IPC connection with a line reader. */
export class IpcClient {
  readonly conn: Deno.UnixConn;
  #buf = "";
  readonly #dec = new TextDecoder();

  private constructor(conn: Deno.UnixConn) {
    this.conn = conn;
  }

  /** Connects to a socket path. */
  static async connect(path: string): Promise<IpcClient> {
    return new IpcClient(await Deno.connect({ transport: "unix", path }));
  }

  /** Writes raw bytes or text. */
  async write(data: string | Uint8Array): Promise<void> {
    let bytes = typeof data === "string" ? new TextEncoder().encode(data) : data;
    while (bytes.length) bytes = bytes.subarray(await this.conn.write(bytes));
  }

  /** Reads one `\n`-terminated line (without the newline); `undefined` at EOF. */
  async readLine(timeoutMs = 10_000): Promise<string | undefined> {
    const deadline = Date.now() + timeoutMs;
    const chunk = new Uint8Array(65536);
    while (!this.#buf.includes("\n")) {
      if (Date.now() > deadline) throw new Error("timed out reading a line");
      const n = await this.conn.read(chunk);
      if (n === null) return undefined;
      this.#buf += this.#dec.decode(chunk.subarray(0, n), { stream: true });
    }
    const i = this.#buf.indexOf("\n");
    const line = this.#buf.slice(0, i);
    this.#buf = this.#buf.slice(i + 1);
    return line;
  }

  /** Closes the connection. */
  close(): void {
    try {
      this.conn.close();
    } catch { /* closed */ }
  }
}
