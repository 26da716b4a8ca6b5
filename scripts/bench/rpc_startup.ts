/**
 * `service rpc --http -- true` wall time (hyperfine, against `service
 * --version` as the same-run baseline of Deno's own start-up), and the idle
 * memory (RSS) of a bridge waiting without a child.
 *
 * Usage: deno run -A scripts/bench/rpc_startup.ts   (needs hyperfine: apt-get install -y hyperfine)
 *
 * @module
 */

import { startAnvil } from "../../tests/support/tools.ts";
import { startBridgeProcess, tempPrivateKey } from "../../tests/support/rpc.ts";

const root = new URL("../..", import.meta.url).pathname;
const anvil = await startAnvil();
const key = await tempPrivateKey();
const flags =
  `--apiKey bench --privateKey ${key} --apiBaseUrl http://127.0.0.1:9 --rpcUrl ${anvil.url} --assetId ETH`;
const deno = Deno.execPath();
try {
  const json = await Deno.makeTempFile({ suffix: ".json" });
  const out = await new Deno.Command("hyperfine", {
    args: [
      "--warmup",
      "3",
      "--runs",
      "20",
      "--export-json",
      json,
      "-N",
      `${deno} run -A ${root}main.ts --version`,
      `${deno} run -A ${root}main.ts rpc --http ${flags} -- true`,
      `${deno} run -A ${root}main.ts rpc ${flags} -- true`,
    ],
    stdout: "inherit",
    stderr: "inherit",
  }).output();
  if (out.code !== 0) throw new Error("hyperfine failed");
  const results = JSON.parse(await Deno.readTextFile(json)).results as {
    command: string;
    mean: number;
    median: number;
  }[];
  await Deno.remove(json);
  const [base, http, ipc] = results.map((r) => r.median * 1000);
  const bridge = await startBridgeProcess(flags.split(" ").concat(["--http"]));
  await new Promise((r) => setTimeout(r, 500));
  const status = await Deno.readTextFile(`/proc/${bridge.process.pid}/status`);
  const rssKb = Number(status.match(/VmRSS:\s+(\d+)/)?.[1]);
  await bridge.stop();
  console.log(JSON.stringify(
    {
      version_median_ms: Number(base.toFixed(1)),
      rpc_http_true_median_ms: Number(http.toFixed(1)),
      rpc_ipc_true_median_ms: Number(ipc.toFixed(1)),
      rpc_over_version_ms: Number((http - base).toFixed(1)),
      idle_rss_mb: Number((rssKb / 1024).toFixed(1)),
    },
    null,
    2,
  ));
} finally {
  await anvil.stop();
  await Deno.remove(key);
}
