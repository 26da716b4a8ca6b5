/**
 * The baseline of scripts/bench/breaker_simulate.ts: the bare loop that
 * reads a file (1 MB reads), splits it into lines and JSON.parses every
 * line, doing nothing else. Prints the number of objects parsed.
 *
 * Usage: deno run -A scripts/bench/json_parse_baseline.ts FILE
 *
 * @module
 */

if (import.meta.main) {
  const file = await Deno.open(Deno.args[0]);
  const decoder = new TextDecoder();
  const buf = new Uint8Array(1 << 20);
  let carry = "";
  let n = 0;
  let sink = 0;
  for (;;) {
    const r = await file.read(buf);
    if (r === null) break;
    const text = carry + decoder.decode(buf.subarray(0, r), { stream: true });
    let start = 0;
    for (;;) {
      const nl = text.indexOf("\n", start);
      if (nl === -1) break;
      if (nl > start) {
        const o = JSON.parse(text.slice(start, nl));
        sink += o.sentTime & 1;
        n++;
      }
      start = nl + 1;
    }
    carry = text.slice(start);
  }
  if (carry.trim()) {
    JSON.parse(carry);
    n++;
  }
  file.close();
  console.log(JSON.stringify({ parsed: n, sink }));
}
