/**
 * Reverse proxies for context in the pass-through benchmarks: nginx (one
 * worker, upstream keepalive 64) and HAProxy (one thread, `http-reuse
 * always`) in front of a node's HTTP port, from the system's packages
 * (Debian: `apt-get install -y nginx haproxy`), each with its own config in a
 * temporary directory and on a free loopback port. Nothing is started when
 * the binary is missing.
 *
 * @module
 */

/** A proxy running in front of a node. */
export interface Proxy {
  /** `nginx` or `HAProxy`. */
  name: string;
  /** `http://127.0.0.1:PORT/`. */
  url: string;
  /** How it is configured, for the output. */
  description: string;
  /** Its process (nginx's master: its worker is a child). */
  pid: number;
  stop(): Promise<void>;
}

/** A free loopback port (bound to port 0, then released: nginx and HAProxy take no port 0). */
function freePort(): number {
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (l.addr as Deno.NetAddr).port;
  l.close();
  return port;
}

/** The path of `name` on PATH or in the sbin directories, or undefined. */
export function which(name: string): string | undefined {
  const dirs = [...(Deno.env.get("PATH") ?? "").split(":"), "/usr/sbin", "/usr/local/sbin"];
  for (const d of dirs) {
    try {
      if (d && Deno.statSync(`${d}/${name}`).isFile) return `${d}/${name}`;
    } catch { /* not there */ }
  }
  return undefined;
}

async function waitForPort(port: number, child: Deno.ChildProcess, name: string): Promise<void> {
  let exited = false;
  child.status.then(() => (exited = true));
  for (let i = 0; i < 100; i++) {
    if (exited) throw new Error(`${name} exited at start`);
    try {
      (await Deno.connect({ hostname: "127.0.0.1", port })).close();
      return;
    } catch { /* not yet */ }
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`${name} did not listen on 127.0.0.1:${port} within 5 s`);
}

async function start(
  name: string,
  binary: string,
  args: (dir: string, port: number) => Promise<string[]>,
  description: string,
): Promise<Proxy> {
  const dir = await Deno.makeTempDir({
    prefix: `bench-${name.toLowerCase().replace(/\W+/g, "-")}-`,
  });
  const port = freePort();
  const child = new Deno.Command(binary, {
    args: await args(dir, port),
    stdin: "null",
    stdout: "null",
    stderr: "null",
  }).spawn();
  const stop = async () => {
    try {
      child.kill("SIGTERM");
    } catch { /* gone */ }
    await child.status;
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  };
  try {
    await waitForPort(port, child, name);
  } catch (e) {
    await stop();
    throw e;
  }
  return { name, url: `http://127.0.0.1:${port}/`, description, pid: child.pid, stop };
}

/** nginx in front of `upstreamPort`, or undefined when nginx is not installed. */
export function startNginx(upstreamPort: number): Promise<Proxy> | undefined {
  const binary = which("nginx");
  if (!binary) return undefined;
  return start("nginx", binary, async (dir, port) => {
    const temp = ["client_body", "proxy", "fastcgi", "uwsgi", "scgi"]
      .map((t) => `  ${t}_temp_path ${dir}/${t};`).join("\n");
    await Deno.writeTextFile(
      `${dir}/nginx.conf`,
      `daemon off;
worker_processes 1;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log warn;
events { worker_connections 1024; }
http {
  access_log off;
${temp}
  upstream node { server 127.0.0.1:${upstreamPort}; keepalive 64; }
  server {
    listen 127.0.0.1:${port};
    location / {
      proxy_pass http://node;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
    }
  }
}
`,
    );
    return ["-p", dir, "-e", `${dir}/error.log`, "-c", `${dir}/nginx.conf`];
  }, "nginx, 1 worker, upstream keepalive 64");
}

/** HAProxy in front of `upstreamPort`, or undefined when HAProxy is not installed. */
export function startHaproxy(upstreamPort: number): Promise<Proxy> | undefined {
  const binary = which("haproxy");
  if (!binary) return undefined;
  return start("HAProxy", binary, async (dir, port) => {
    await Deno.writeTextFile(
      `${dir}/haproxy.cfg`,
      `global
  nbthread 1
  maxconn 4096
defaults
  mode http
  timeout connect 5s
  timeout client 30s
  timeout server 30s
  http-reuse always
frontend in
  bind 127.0.0.1:${port}
  default_backend node
backend node
  server node 127.0.0.1:${upstreamPort}
`,
    );
    return ["-db", "-f", `${dir}/haproxy.cfg`];
  }, "HAProxy, 1 thread, http-reuse always");
}

/**
 * The runtime's floor in front of `upstreamPort`: `deno_forwarder.ts` (the
 * smallest Deno forwarder, through the bridge's node client), run by this Deno.
 */
export function startDenoForwarder(upstreamPort: number): Promise<Proxy> {
  const script = new URL("./deno_forwarder.ts", import.meta.url).pathname;
  return start(
    "Deno floor",
    Deno.execPath(),
    (_dir, port) =>
      Promise.resolve([
        "run",
        "--allow-net",
        "--no-prompt",
        script,
        `http://127.0.0.1:${upstreamPort}/`,
        String(port),
      ]),
    "Deno.serve + the bridge's node client, nothing else",
  );
}
