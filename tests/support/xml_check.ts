/**
 * XML well-formedness for tests: `xmllint --noout` when it is installed
 * (Debian `libxml2-utils`), and always a strict checker of our own (Deno
 * has no DOMParser): one root element, balanced and properly nested tags,
 * quoted attributes without duplicates, known entities, no stray `<` or `&`.
 *
 * @module
 */

const NAME = /^[A-Za-z_][\w.:-]*$/;

/** Returns the problems found (empty when well-formed). Handles what SVG output uses. */
export function xmlProblems(text: string): string[] {
  const problems: string[] = [];
  const stack: string[] = [];
  let roots = 0;
  let i = 0;
  const checkText = (t: string, at: number) => {
    const amp = /&(?!(amp|lt|gt|quot|apos|#\d+|#x[0-9a-fA-F]+);)/.exec(t);
    if (amp) problems.push(`bad "&" at ${at + amp.index}`);
    if (t.includes(">") && stack.length === 0 && t.trim() !== "") {
      problems.push(`text outside the root at ${at}`);
    }
  };
  while (i < text.length) {
    const lt = text.indexOf("<", i);
    const chunk = lt === -1 ? text.slice(i) : text.slice(i, lt);
    checkText(chunk, i);
    if (stack.length === 0 && chunk.trim() !== "" && roots > 0) {
      problems.push(`text after the root at ${i}`);
    }
    if (lt === -1) break;
    if (text.startsWith("<?", lt)) {
      const e = text.indexOf("?>", lt);
      if (e === -1) return [...problems, "unterminated <?"];
      i = e + 2;
      continue;
    }
    if (text.startsWith("<!--", lt)) {
      const e = text.indexOf("-->", lt);
      if (e === -1) return [...problems, "unterminated comment"];
      i = e + 3;
      continue;
    }
    const gt = text.indexOf(">", lt);
    if (gt === -1) return [...problems, `unterminated tag at ${lt}`];
    const tag = text.slice(lt + 1, gt);
    if (tag.includes("<")) problems.push(`"<" inside a tag at ${lt}`);
    if (tag.startsWith("/")) {
      const name = tag.slice(1).trim();
      const open = stack.pop();
      if (open !== name) problems.push(`</${name}> closes <${open}> at ${lt}`);
    } else {
      const selfClosing = tag.endsWith("/");
      const body = selfClosing ? tag.slice(0, -1) : tag;
      const m = /^([^\s/>]+)([\s\S]*)$/.exec(body);
      if (!m || !NAME.test(m[1])) {
        problems.push(`bad tag name at ${lt}`);
      } else {
        const seen = new Set<string>();
        const attrRe = /\s+([^\s=]+)\s*=\s*("([^"]*)"|'([^']*)')/gy;
        let rest = m[2];
        let a: RegExpExecArray | null;
        let consumed = 0;
        attrRe.lastIndex = 0;
        while ((a = attrRe.exec(rest)) !== null) {
          if (!NAME.test(a[1])) problems.push(`bad attribute name ${a[1]} at ${lt}`);
          if (seen.has(a[1])) problems.push(`duplicate attribute ${a[1]} at ${lt}`);
          seen.add(a[1]);
          const v = a[3] ?? a[4];
          if (v.includes("<")) problems.push(`"<" in attribute ${a[1]} at ${lt}`);
          checkText(v, lt);
          consumed = attrRe.lastIndex;
        }
        rest = rest.slice(consumed);
        if (rest.trim() !== "") {
          problems.push(`unparsable attributes ${JSON.stringify(rest)} at ${lt}`);
        }
        if (stack.length === 0) roots++;
        if (!selfClosing) stack.push(m[1]);
      }
    }
    i = gt + 1;
  }
  if (stack.length) problems.push(`unclosed <${stack.join("><")}>`);
  if (roots !== 1) problems.push(`${roots} root elements`);
  return problems;
}

/** `xmllint --noout` on a file: null when xmllint is not installed, else its verdict. */
export async function xmllint(path: string): Promise<{ ok: boolean; stderr: string } | null> {
  try {
    const out = await new Deno.Command("xmllint", { args: ["--noout", path], stderr: "piped" })
      .output();
    return { ok: out.success, stderr: new TextDecoder().decode(out.stderr) };
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return null;
    throw e;
  }
}
