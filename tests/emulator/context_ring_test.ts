/**
 * The emulator's context (`lib/emulator/context.ts`) names the areas it holds; none of them
 * may import it back (issue 24: a 12-file ring of type imports ran through it). Engines take
 * the parts they use (e.g. `transactions/deps.ts`); only the HTTP layer and the routes take
 * the whole context. Read from Deno's own module graph.
 */
import assert from "node:assert/strict";
import { mainCommand, ROOT } from "../support/main_command.ts";

Deno.test("nothing the emulator's context imports imports it back (no ring of type imports)", async () => {
  const out = await mainCommand(["--json", `${ROOT}lib/emulator/context.ts`], {
    program: ["info"],
  }).output();
  assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
  const graph = JSON.parse(new TextDecoder().decode(out.stdout)) as {
    modules: {
      specifier: string;
      dependencies?: { code?: { specifier?: string }; type?: { specifier?: string } }[];
    }[];
  };
  const context = graph.modules.find((m) => m.specifier.endsWith("/lib/emulator/context.ts"))!;
  assert.ok(context, "the context is in its own graph");
  const back = graph.modules.filter((m) =>
    (m.dependencies ?? []).some((d) =>
      d.code?.specifier === context.specifier || d.type?.specifier === context.specifier
    )
  ).map((m) => m.specifier.slice(m.specifier.indexOf("/lib/") + 1));
  assert.deepEqual(back, [], `these import the context back: ${back.join(", ")}`);
  // and the graph is not trivially small: the context does reach the areas it names
  assert.ok(graph.modules.length > 10, `${graph.modules.length} modules`);
});
