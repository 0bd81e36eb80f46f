// Applies policy.ts to one document's data before the schema sees it: each field a rule names is
// reported (a warning, or a "not implemented" refusal) and taken out of the data, so the strict
// schema judges only what Bronze implements, and anything left that it does not know is unknown.
import { asObject, type Obj, type PathSegment, type Reporter } from './fields.ts';
import { FIELD_RULES, ruleMessage, type FieldRule } from './policy.ts';
import { isDeepStrictEqual } from 'node:util';

const KIND_OF_ACTION = { ignore: 'ignored', keep: 'kept', refuse: 'unsupported' } as const;

/** Calls `fn` with every place `path` ("a.b[].c") reaches in `root`: the parent object and the key. */
function visit(root: Obj, segments: readonly string[], at: PathSegment[], fn: (parent: Obj, key: string, path: PathSegment[]) => void): void {
  const [head, ...rest] = segments;
  if (head === undefined) return;
  const list = head.endsWith('[]');
  const key = list ? head.slice(0, -2) : head;
  if (!Object.prototype.hasOwnProperty.call(root, key)) return;
  if (rest.length === 0 && !list) {
    fn(root, key, [...at, key]);
    return;
  }
  const value = root[key];
  if (list) {
    if (!Array.isArray(value)) return;
    value.forEach((item, i) => {
      const o = asObject(item);
      if (o) visit(o, rest, [...at, key, i], fn);
    });
    return;
  }
  const o = asObject(value);
  if (o) visit(o, rest, [...at, key], fn);
}

/** The rules of one document (`v1alpha1` or a kind). */
export function rulesOf(doc: string): FieldRule[] {
  return FIELD_RULES.filter((r) => r.doc === doc);
}

/** Reports and removes from `data` every field that a rule of document `doc` names. */
export function applyFieldRules(doc: string, data: Obj, report: Reporter): void {
  for (const rule of rulesOf(doc)) {
    visit(data, rule.path.split('.'), [], (parent, key, path) => {
      const value = parent[key];
      if (!(rule.accept !== undefined && isDeepStrictEqual(value, rule.accept))) {
        report(path, ruleMessage(rule.action, rule.reason), 'key', KIND_OF_ACTION[rule.action]);
      }
      delete parent[key];
    });
  }
}

export { KIND_OF_ACTION };
