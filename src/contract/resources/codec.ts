// A spec as its proto message, by rule rather than by a hand-written encoder per type: each field
// of the definition's message takes the spec's value of the same name, the names compared
// without case and underscores (`link_index` ← `linkIndex`, `pciid` ← `pciID`, `dev_path` ←
// `dev_path`), converted by the field's type: common.NetIP and common.NetIPPrefix from address
// text, messages, lists and maps field by field the same way, the rest as they are (protobufjs
// takes numbers for 64-bit fields). A definition lists only its exceptions (ProtoCodec.fields,
// by field path such as 'vlan.protocol'): a spec key of another name (`from`), and a value that
// needs converting (`as`: an enum by one of Talos's name tables, flags text, or a function).
//
// A spec key that no field takes is reported (unusedKeys), so that the test of every type's
// samples fails when a spec gains a field its message does not carry.
import protobuf from 'protobufjs/light.js';
import { netIP, netIPPrefix } from './net.ts';
import { FlagTable, NameTable } from './names.ts';

/** How one field of the message is filled. */
export interface FieldRule {
  /** The spec key it is read from, when not the field's own name. */
  from?: string;
  /** The conversion of the spec's value: a name table (enum), a flag table (flags text) or a function. */
  as?: NameTable | FlagTable | ((value: any) => unknown);
}

/** The rules of the fields that do not follow the naming rule, by path ('family', 'vlan.protocol'). */
export type FieldRules = Readonly<Record<string, FieldRule>>;

/** A name as the naming rule compares it; memoized, since the same few names come on every call. */
const normals = new Map<string, string>();
function normal(name: string): string {
  let n = normals.get(name);
  if (n === undefined) normals.set(name, (n = name.toLowerCase().replace(/_/g, '')));
  return n;
}

function convert(rule: FieldRule | undefined, value: unknown): unknown {
  const as = rule?.as;
  if (!as) return value;
  if (as instanceof NameTable) return as.number(value as string);
  if (as instanceof FlagTable) return as.mask(value as string);
  return as(value);
}

function isMessage(t: protobuf.ReflectionObject | null): t is protobuf.Type {
  return t instanceof protobuf.Type;
}

const ADDRESS: Record<string, (text: string) => unknown> = { '.common.NetIP': netIP, '.common.NetIPPrefix': netIPPrefix };

/** The message `t` as protobufjs's fromObject takes it, from `spec` by the rules. */
export function encodeMessage(t: protobuf.Type, rules: FieldRules, spec: Record<string, unknown>): Record<string, unknown> {
  return walk(t, rules, spec, '', '', undefined);
}

/**
 * One message from one spec object. `fieldPath` prefixes the rules' paths (field names),
 * `keyPath` the spec's keys for `used`, which collects the keys some field took.
 */
function walk(t: protobuf.Type, rules: FieldRules, spec: Record<string, unknown>, fieldPath: string, keyPath: string, used: Set<string> | undefined): Record<string, unknown> {
  const keys = new Map(Object.keys(spec).map((k) => [normal(k), k]));
  const out: Record<string, unknown> = {};
  for (const f of t.fieldsArray) {
    f.resolve();
    const path = fieldPath + f.name;
    const rule = rules[path];
    const key = rule?.from ?? keys.get(normal(f.name));
    if (key === undefined) continue;
    used?.add(keyPath + key);
    const v = spec[key];
    if (v === undefined || v === null) continue;
    const m = f.resolvedType;
    const one = (x: unknown, entry = ''): unknown => {
      if (rule?.as) return convert(rule, x);
      if (!isMessage(m)) return x;
      const address = ADDRESS[m.fullName];
      if (address) return address(x as string);
      return walk(m, rules, x as Record<string, unknown>, `${path}.`, `${keyPath}${key}.${entry}`, used);
    };
    if (f.map) {
      out[f.name] = Object.fromEntries(Object.entries(v as object).map(([k, x]) => [k, one(x, `${k}.`)]));
      for (const k of Object.keys(v as object)) used?.add(`${keyPath}${key}.${k}`);
    } else if (f.repeated) out[f.name] = (v as unknown[]).map((x) => one(x));
    else out[f.name] = one(v);
  }
  return out;
}

/** Every key of a spec object and of the objects it holds, as paths ('vlan.vlanID'); lists and maps are looked through. */
function allKeys(v: unknown, keyPath: string, out: string[]): void {
  if (Array.isArray(v)) for (const x of v) allKeys(x, keyPath, out);
  else if (v && typeof v === 'object' && !Buffer.isBuffer(v))
    for (const [k, x] of Object.entries(v)) {
      out.push(keyPath + k);
      allKeys(x, `${keyPath}${k}.`, out);
    }
}

/**
 * The spec's keys (as paths) that no field takes: what proto_spec would silently leave out.
 * The keys inside a value a rule converts, or inside a map, are not looked at (only the map's).
 */
export function unusedKeys(t: protobuf.Type, rules: FieldRules, spec: Record<string, unknown>): string[] {
  const used = new Set<string>();
  walk(t, rules, spec, '', '', used);
  const all: string[] = [];
  allKeys(spec, '', all);
  // A key under a taken key that is not itself a message's (a converted value, a map's entries).
  const underLeaf = (k: string) => {
    for (let i = k.lastIndexOf('.'); i > 0; i = k.lastIndexOf('.', i - 1)) {
      const parent = k.slice(0, i);
      if (used.has(parent) && ![...used].some((u) => u.startsWith(`${parent}.`))) return true;
    }
    return false;
  };
  return [...new Set(all)].filter((k) => !used.has(k) && !underLeaf(k)).sort();
}
