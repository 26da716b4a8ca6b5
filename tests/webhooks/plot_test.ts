import assert from "node:assert/strict";
import { run } from "../../lib/cli/mod.ts";
import { memoryIo } from "../support/memory_io.ts";
import { xmllint, xmlProblems } from "../support/xml_check.ts";
import { assertPeer, hasCommand, skipWithout } from "../support/required.ts";

const DIR = new URL("../fixtures/breaker/", import.meta.url).pathname;

/** Fixtures with suspensions, the flags they need, and their hand-worked expected output. */
const FIXTURES: [string, string[], string][] = [
  ["exactly_80_percent.ndjson", [], "exactly_80_percent.expected.ndjson"],
  ["exactly_50_percent.ndjson", [], "exactly_50_percent.expected.ndjson"],
  ["band_4h_quiet.ndjson", [], "band_4h_quiet.expected.ndjson"],
  ["min_attempts.ndjson", [], "min_attempts.default.expected.ndjson"],
  ["reenable_suppressed.ndjson", [], "reenable_suppressed.expected.ndjson"],
  ["retries_notifications.ndjson", [], "retries_notifications.expected.ndjson"],
];

for (const [input, args, expectedFile] of FIXTURES) {
  Deno.test(`plot of ${input}: valid XML with one marker per suspension`, async () => {
    const dir = await Deno.makeTempDir();
    try {
      const svgPath = `${dir}/plot.svg`;
      const io = memoryIo();
      const code = await run(
        ["breaker", "simulate", DIR + input, "--format", "ndjson", "--plot", svgPath, ...args],
        { io },
      );
      assert.equal(code, 0, io.err());
      const svg = await Deno.readTextFile(svgPath);
      assert.deepEqual(xmlProblems(svg), []);
      assert.match(svg, /^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg"/);
      assert.doesNotMatch(svg, /<script|https?:\/\/(?!www\.w3\.org\/2000\/svg)/); // self-contained
      const expected = (await Deno.readTextFile(DIR + expectedFile)).trim().split("\n").map((l) =>
        JSON.parse(l)
      ).filter((e) => e.type === "suspended");
      const markers = [
        ...svg.matchAll(
          /<g class="suspension" data-webhook-id="([^"]*)" data-time="([^"]*)" data-reason="([^"]*)">/g,
        ),
      ].map((m) => ({ webhookId: m[1], time: m[2], reason: m[3] }));
      const want = expected.map((e) => ({
        webhookId: e.webhookId,
        time: e.time,
        reason: e.reason,
      }));
      const key = (x: { webhookId: string; time: string }) => x.webhookId + x.time;
      assert.deepEqual(
        markers.sort((a, b) => key(a) < key(b) ? -1 : 1),
        want.sort((a, b) => key(a) < key(b) ? -1 : 1),
      );
      // both thresholds drawn in every panel, and one panel per webhook
      const panels = svg.match(/<g class="endpoint"/g)?.length ?? 0;
      const webhooks = new Set(
        (await Deno.readTextFile(DIR + input)).trim().split("\n").map((l) =>
          JSON.parse(l).webhookId
        ),
      );
      assert.equal(panels, webhooks.size);
      assert.equal(svg.match(/class="threshold-immediate"/g)?.length, panels);
      assert.equal(svg.match(/class="threshold-band"/g)?.length, panels);
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  });
}

const haveXmllint = await hasCommand("xmllint");

Deno.test({
  name: "every plot passes xmllint --noout",
  // skipped (and named as skipped) only where xmllint is missing and skips are allowed
  ignore: skipWithout(haveXmllint),
  async fn() {
    assertPeer("xmllint (Debian libxml2-utils)", haveXmllint);
    const dir = await Deno.makeTempDir();
    try {
      for (const [input, args] of FIXTURES) {
        const svgPath = `${dir}/${input}.svg`;
        const io = memoryIo();
        const code = await run(
          ["breaker", "simulate", DIR + input, "--format", "ndjson", "--plot", svgPath, ...args],
          { io },
        );
        assert.equal(code, 0, io.err());
        const lint = await xmllint(svgPath);
        assert.ok(lint?.ok, `${input}: ${lint?.stderr}`);
      }
      // and xmllint rejects what is not well-formed, so its verdict means something
      await Deno.writeTextFile(`${dir}/bad.svg`, "<svg><g></svg>");
      assert.equal((await xmllint(`${dir}/bad.svg`))?.ok, false);
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
});

Deno.test("a sustained suspension's band period is shaded", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const io = memoryIo();
    await run(
      ["breaker", "simulate", DIR + "exactly_50_percent.ndjson", "--plot", `${dir}/p.svg`],
      { io },
    );
    const svg = await Deno.readTextFile(`${dir}/p.svg`);
    assert.ok((svg.match(/<rect class="band"/g)?.length ?? 0) >= 1);
    assert.equal(svg.match(/<rect class="suspended-period"/g)?.length, 1);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("--plot FILE.html wraps the same picture in a page", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const io = memoryIo();
    const code = await run(
      ["breaker", "simulate", DIR + "min_attempts.ndjson", "--plot", `${dir}/p.html`],
      { io },
    );
    assert.equal(code, 0);
    const html = await Deno.readTextFile(`${dir}/p.html`);
    assert.match(html, /^<!doctype html>/);
    const svg = html.slice(html.indexOf("<svg"), html.indexOf("</svg>") + 6);
    assert.deepEqual(xmlProblems(svg), []);
    assert.equal(svg.match(/<g class="suspension"/g)?.length, 2);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("the XML checker itself rejects what is not well-formed", () => {
  assert.notDeepEqual(xmlProblems("<svg><g></svg>"), []);
  assert.notDeepEqual(xmlProblems('<svg a="1" a="2"/>'), []);
  assert.notDeepEqual(xmlProblems("<svg>a & b</svg>"), []);
  assert.notDeepEqual(xmlProblems("<svg a=1/>"), []);
  assert.notDeepEqual(xmlProblems("<a/><b/>"), []);
  assert.deepEqual(xmlProblems('<svg x="&amp;"><g/><text>a &lt; b</text></svg>'), []);
});

Deno.test("the drawn rate line and envelope are the window's error rates, bucket by bucket", async () => {
  // 270 attempts, one every 20 s (three per one-minute bucket), errors in an uneven pattern;
  // a 30-minute window; nothing can suspend (immediate above 1, band too short to finish).
  const T0 = Date.UTC(2026, 0, 1);
  const STEP = 20_000;
  const W = 30 * 60_000;
  const attempts = Array.from({ length: 270 }, (_, i) => ({
    time: T0 + i * STEP,
    error: (i * 7) % 10 < 4 || (i > 100 && i < 140),
  }));
  const log =
    attempts.map((a) =>
      JSON.stringify({ webhookId: "w1", sentTime: a.time, responseCode: a.error ? 500 : 200 })
    ).join("\n") + "\n";
  // The oracle, computed here from the log alone: the error rate of (t - W, t] at each attempt,
  // then the max and min of those rates per one-minute bucket counted from the first attempt.
  const rates = attempts.map((a, i) => {
    const inWindow = attempts.slice(0, i + 1).filter((b) => b.time > a.time - W);
    return inWindow.filter((b) => b.error).length / inWindow.length;
  });
  const maxes: number[] = [];
  const mins: number[] = [];
  rates.forEach((r, i) => {
    const k = Math.floor((attempts[i].time - T0) / 60_000);
    maxes[k] = Math.max(maxes[k] ?? -Infinity, r);
    mins[k] = Math.min(mins[k] ?? Infinity, r);
  });
  assert.equal(maxes.length, 90);
  assert.ok(new Set(maxes).size > 10, "the rates vary");

  const dir = await Deno.makeTempDir();
  try {
    await Deno.writeTextFile(`${dir}/log.ndjson`, log);
    const io = memoryIo();
    const code = await run([
      "breaker",
      "simulate",
      `${dir}/log.ndjson`,
      "--window",
      "30m",
      "--immediate-above",
      "1",
      "--min-attempts",
      "1",
      "--plot",
      `${dir}/p.svg`,
    ], { io });
    assert.equal(code, 0, io.err());
    const svg = await Deno.readTextFile(`${dir}/p.svg`);
    assert.equal(svg.match(/<g class="suspension"/g), null);
    const top = Number(
      /<rect x="\d+" y="([\d.]+)" width="[\d.]+" height="120" fill="#fbfbfb"/
        .exec(svg)![1],
    );
    const points = (attr: string) =>
      attr.trim().split(" ").map((p) => p.split(",").map(Number) as [number, number]);
    const rateAt = (y: number) => (top + 120 - y) / 120;
    const near = (got: number[], want: number[], what: string) => {
      assert.equal(got.length, want.length, what);
      got.forEach((g, i) =>
        assert.ok(Math.abs(g - want[i]) < 0.001, `${what} ${i}: drawn ${g}, computed ${want[i]}`)
      );
    };
    const lines = [...svg.matchAll(/<polyline points="([^"]*)"/g)];
    assert.equal(lines.length, 1);
    const line = points(lines[0][1]);
    near(line.map(([, y]) => rateAt(y)), maxes, "line point");
    for (let i = 1; i < line.length; i++) assert.ok(line[i][0] > line[i - 1][0], "x increases");
    const polys = [...svg.matchAll(/<polygon points="([^"]*)"/g)];
    assert.equal(polys.length, 1);
    const poly = points(polys[0][1]);
    near(poly.slice(0, 90).map(([, y]) => rateAt(y)), maxes, "envelope top");
    near(poly.slice(90).reverse().map(([, y]) => rateAt(y)), mins, "envelope bottom");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
