// From zod's issues to reports a person can act on: the path, whether the value is missing or
// invalid, what was expected and what was found ("expected a list, got a mapping"), and for an
// unknown field the fields the object does have ("did you mean ...?").
import type { z } from 'zod';
import type { PathSegment, Reporter } from './fields.ts';

const q = (v: unknown) => JSON.stringify(v);

/** `a.b[0]["net.ipv4.ip_forward"]` */
export function formatPath(prefix: string, path: readonly PathSegment[]): string {
  let out = prefix;
  for (const seg of path) {
    if (typeof seg === 'number') out += `[${seg}]`;
    else if (/^[A-Za-z0-9_-]+$/.test(seg)) out += out ? `.${seg}` : seg;
    else out += `[${q(seg)}]`;
  }
  return out;
}

export function valueAt(root: unknown, path: readonly PathSegment[]): unknown {
  let v = root;
  for (const seg of path) {
    if (v === null || typeof v !== 'object') return undefined;
    v = (v as Record<string, unknown>)[seg as string];
  }
  return v;
}

export function describe(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'a list';
  if (typeof v === 'object') return 'a mapping';
  if (typeof v === 'string') return `the string ${q(v)}`;
  if (typeof v === 'number') return `the number ${v}`;
  if (typeof v === 'boolean') return String(v);
  return typeof v;
}

const EXPECTED: Record<string, string> = {
  string: 'a string',
  number: 'a number',
  int: 'an integer',
  boolean: 'true or false',
  object: 'a mapping',
  record: 'a mapping',
  array: 'a list',
};

// ---- schema walking, for the fields an object may have ("did you mean") ----

export type AnySchema = { _zod: { def: Record<string, unknown> & { type: string } } };

function unwrap(s: AnySchema): AnySchema {
  for (;;) {
    const def = s._zod.def;
    if (def.type === 'optional' || def.type === 'nullable' || def.type === 'default') s = def.innerType as AnySchema;
    else if (def.type === 'pipe') {
      const out = def.out as AnySchema;
      s = out._zod.def.type === 'transform' ? (def.in as AnySchema) : out;
    } else return s;
  }
}

function pickOption(s: AnySchema, want: 'object' | 'array'): AnySchema {
  if (s._zod.def.type !== 'union') return s;
  const options = (s._zod.def.options as AnySchema[]).map(unwrap);
  return options.find((o) => o._zod.def.type === want) ?? options[0]!;
}

function fieldsAt(schema: AnySchema, path: readonly PathSegment[]): string[] {
  let s = unwrap(schema);
  for (const seg of path) {
    s = pickOption(s, typeof seg === 'number' ? 'array' : 'object');
    const def = s._zod.def;
    if (def.type === 'object' && typeof seg === 'string') s = unwrap((def.shape as Record<string, AnySchema>)[seg]!);
    else if (def.type === 'array' && typeof seg === 'number') s = unwrap(def.element as AnySchema);
    else if (def.type === 'record') s = unwrap(def.valueType as AnySchema);
    else return [];
    if (!s) return [];
  }
  s = pickOption(s, 'object');
  return s._zod.def.type === 'object' ? Object.keys(s._zod.def.shape as object) : [];
}

function editDistance(a: string, b: string): number {
  const d = Array.from({ length: a.length + 1 }, (_, i) => [i, ...new Array<number>(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j++) d[0]![j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      d[i]![j] = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
  }
  return d[a.length]![b.length]!;
}

function unknownFieldMessage(key: string, known: string[]): string {
  const close = known.find((k) => k.toLowerCase() === key.toLowerCase()) ?? known.find((k) => editDistance(k, key) <= 2);
  if (close) return `unknown field ${q(key)}: did you mean ${q(close)}?`;
  return known.length ? `unknown field ${q(key)}: expected one of ${known.join(', ')}` : `unknown field ${q(key)}`;
}

// ---- zod issues → reports ----

type ZodIssue = z.core.$ZodIssue;

/** Reports zod's issues for `root` (validated against `schema`), each at its path, with what was expected. */
export function reportZodIssues(issues: readonly ZodIssue[], base: readonly PathSegment[], root: unknown, schema: AnySchema, report: Reporter): void {
  for (const issue of issues) {
    const path = [...base, ...(issue.path.filter((s) => typeof s !== 'symbol') as PathSegment[])];
    const value = valueAt(root, path);
    switch (issue.code) {
      case 'unrecognized_keys': {
        const known = fieldsAt(schema, path);
        for (const key of issue.keys) report([...path, key], unknownFieldMessage(key, known), 'key');
        break;
      }
      case 'invalid_union': {
        // Report the branch the value was meant for: the first whose errors are not "wrong type here".
        const branches = issue.errors.filter((errs) => !errs.some((e) => e.code === 'invalid_type' && e.path.length === 0));
        if (branches.length) {
          reportZodIssues(branches[0]!, path, root, schema, report);
        } else {
          const expected = issue.errors.map((errs) => EXPECTED[(errs[0] as { expected?: string }).expected ?? ''] ?? 'a valid value');
          if (value === undefined) report(path, `expected ${expected.join(' or ')}`, undefined, 'missing');
          else report(path, `expected ${expected.join(' or ')}, got ${describe(value)}`);
        }
        break;
      }
      case 'invalid_type': {
        const expected = EXPECTED[issue.expected] ?? issue.expected;
        if (value === undefined) report(path, `expected ${expected}`, undefined, 'missing');
        else report(path, `expected ${expected}, got ${describe(value)}`);
        break;
      }
      case 'invalid_value': {
        const values = issue.values.map((v) => String(v));
        const expected = values.length === 1 ? values[0]! : `one of ${values.join(', ')}`;
        if (value === undefined) report(path, `expected ${expected}`, undefined, 'missing');
        else report(path, `${describe(value)} is not allowed here: expected ${expected}`);
        break;
      }
      case 'too_small':
        report(path, issue.origin === 'array' ? `must not be empty: expected at least ${String(issue.minimum)} item(s)` : issue.message);
        break;
      case 'invalid_key':
        for (const sub of issue.issues) report(path, sub.message, 'key');
        break;
      case 'custom': {
        const at = (issue.params as { at?: 'key' | 'value' } | undefined)?.at;
        report(path, issue.message, at);
        break;
      }
      default:
        report(path, issue.message);
    }
  }
}

