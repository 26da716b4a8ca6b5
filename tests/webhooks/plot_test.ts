import assert from "node:assert/strict";
import { run } from "../../lib/cli/mod.ts";
import { memoryIo } from "../support/memory_io.ts";
import { xmllint, xmlProblems } from "../support/xml_check.ts";

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
      const lint = await xmllint(svgPath);
      if (lint) assert.ok(lint.ok, lint.stderr);
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
