/**
 * Checks an answer against a model of the official TypeScript SDK
 * (`@fireblocks/ts-sdk` in node_modules), read from the SDK's own
 * declaration files: every required property (declared without `?`) is
 * present, no property is there that the model does not declare (a strict
 * deserializer, as the SDKs of typed languages have, refuses one), every
 * property whose type is an SDK enum holds one of its values, and
 * properties typed with another model (or an array of one) are checked the
 * same way, recursively. So when the SDK's models change, or
 * the emulator drifts from them, a conformance test fails naming the path.
 */

const MODELS = new URL("../../node_modules/@fireblocks/ts-sdk/dist/models/", import.meta.url);

interface Prop {
  name: string;
  required: boolean;
  /** The declared type text, e.g. `Array<Webhook>`, `string`, `NotificationStatus`. */
  type: string;
}

type Model = { kind: "interface"; props: Prop[] } | { kind: "enum"; values: string[] } | {
  kind: "other";
};

const cache = new Map<string, Model>();

function fileOf(name: string): string {
  return name.replace(/([a-z0-9])([A-Z])/g, "$1-$2").replace(/([A-Z])([A-Z][a-z])/g, "$1-$2")
    .toLowerCase();
}

/** The SDK model `name` (e.g. `Webhook`), parsed from its `.d.ts`. */
export function sdkModel(name: string): Model {
  const hit = cache.get(name);
  if (hit) return hit;
  let text: string;
  try {
    text = Deno.readTextFileSync(new URL(`${fileOf(name)}.d.ts`, MODELS));
  } catch {
    const m: Model = { kind: "other" };
    cache.set(name, m);
    return m;
  }
  text = text.replace(/\/\*[\s\S]*?\*\//g, "");
  let model: Model = { kind: "other" };
  const iface = text.match(new RegExp(`export interface ${name} \\{([\\s\\S]*?)\\n\\}`));
  const en = text.match(new RegExp(`export declare const ${name}: \\{([\\s\\S]*?)\\};`));
  if (iface) {
    const props = [...iface[1].matchAll(/'([^']+)'(\??):\s*([^;]+);/g)].map((m) => ({
      name: m[1],
      required: m[2] !== "?",
      type: m[3].trim(),
    }));
    model = { kind: "interface", props };
  } else if (en) {
    model = { kind: "enum", values: [...en[1].matchAll(/:\s*"([^"]*)"/g)].map((m) => m[1]) };
  }
  cache.set(name, model);
  return model;
}

function checkType(value: unknown, type: string, path: string, problems: string[]): void {
  if (value === undefined || value === null) return;
  const arr = type.match(/^Array<(\w+)>$/);
  if (arr) {
    if (!Array.isArray(value)) {
      problems.push(`${path}: expected an array`);
      return;
    }
    value.forEach((v, i) => checkType(v, arr[1], `${path}[${i}]`, problems));
    return;
  }
  if (type === "string" && typeof value !== "string") problems.push(`${path}: expected a string`);
  else if (type === "number" && typeof value !== "number") {
    problems.push(`${path}: expected a number, got ${JSON.stringify(value)}`);
  } else if (type === "boolean" && typeof value !== "boolean") {
    problems.push(`${path}: expected a boolean`);
  } else if (/^[A-Z]\w+$/.test(type)) {
    collect(value, type, path, problems);
  }
}

function collect(value: unknown, name: string, path: string, problems: string[]): void {
  const m = sdkModel(name);
  if (m.kind === "enum") {
    if (!m.values.includes(value as string)) {
      problems.push(`${path}: ${JSON.stringify(value)} is not a ${name} (${m.values.join(", ")})`);
    }
    return;
  }
  if (m.kind !== "interface") return;
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    problems.push(`${path}: expected a ${name} object`);
    return;
  }
  const o = value as Record<string, unknown>;
  const declared = new Set(m.props.map((p) => p.name));
  for (const k of Object.keys(o)) {
    if (!declared.has(k)) problems.push(`${path}.${k}: not declared by ${name}`);
  }
  for (const p of m.props) {
    if (p.required && (o[p.name] === undefined)) {
      problems.push(`${path}.${p.name}: required by ${name}, missing`);
    }
    checkType(o[p.name], p.type, `${path}.${p.name}`, problems);
  }
}

const LEGACY_TYPES = new URL(
  "../../node_modules/fireblocks-sdk/dist/src/types.d.ts",
  import.meta.url,
);

/**
 * The properties the older SDK (`fireblocks-sdk` 5.x) declares in its
 * interface `name`, read from its `types.d.ts` (empty when it is not
 * installed or has no such interface).
 */
export function legacySdkFields(name: string): string[] {
  let text: string;
  try {
    text = Deno.readTextFileSync(LEGACY_TYPES);
  } catch {
    return [];
  }
  const m = text.match(new RegExp(`export interface ${name} \\{([\\s\\S]*?)\\n\\}`));
  return m ? [...m[1].matchAll(/^\s*(\w+)\??:/gm)].map((p) => p[1]) : [];
}

/**
 * Throws, naming every problem, unless `value` fits the SDK model `name`
 * (use `Array<Name>` for a list). `also`: top-level fields allowed besides
 * the model's (an answer both SDKs read, e.g. {@linkcode legacySdkFields}).
 *
 * @example
 * ```ts
 * assertSdkModel(webhook, "Webhook");
 * assertSdkModel(list, "Array<TransactionResponse>");
 * ```
 */
export function assertSdkModel(value: unknown, name: string, also: string[] = []): void {
  const problems: string[] = [];
  const arr = name.match(/^Array<(\w+)>$/);
  if (arr) {
    if (!Array.isArray(value)) problems.push("$: expected an array");
    else value.forEach((v, i) => collect(v, arr[1], `$[${i}]`, problems));
  } else {
    if (sdkModel(name).kind === "other") throw new Error(`No SDK model named ${name}`);
    collect(value, name, "$", problems);
  }
  const allowed = also.map((k) => `$.${k}: not declared by ${name}`);
  problems.splice(0, problems.length, ...problems.filter((p) => !allowed.includes(p)));
  if (problems.length) {
    throw new Error(`The answer does not fit the SDK's ${name}:\n  ${problems.join("\n  ")}`);
  }
}
