// Machine configuration patches, as Talos does them: strategic merge patches (partial config
// documents merged into the config) and RFC 6902 JSON patches (operations on the v1alpha1 document).
//
// A patch argument is `@file` or inline text, YAML or JSON. A patch whose content is one list is
// RFC 6902; anything else is a strategic merge patch of one or more YAML documents.
//
// Strategic merge (Talos semantics):
//   - patch documents are matched to the config's documents by identity: the v1alpha1 document
//     (no `kind`; `version: v1alpha1`, which a patch may leave out) or `apiVersion` + `kind` + `name`;
//     a patch document the config lacks is appended to it;
//   - maps merge key by key, recursively; a scalar in the patch replaces the config's value; a null
//     in the patch leaves the config's value alone;
//   - lists are appended to, except the lists of MERGE_RULES: some are replaced whole, some merge
//     their items with the config's item of the same key (`interface`/`deviceSelector`, `vlanId`, ...);
//   - `$patch: delete` deletes: as the value of a field, that field; as a list item, the config's items
//     having all the item's other fields (an interface by `interface: eth0`); as a whole document, that
//     document (never the v1alpha1 one); a document the config does not have is left alone, as
//     Talos does. Deleting a field or list item that is not there is an error; a list left empty by
//     deletions is removed (Talos omits empty lists).
//
// RFC 6902 patches apply only to a config made of the v1alpha1 document alone, as in Talos.
//
// A failing patch throws PatchError naming the patch, where it failed and why; applyPatches works on
// its own copy, so nothing is half-applied.
import { isDeepStrictEqual } from 'node:util';
import jsonpatch, { type Operation } from 'fast-json-patch';
import YAML from 'yaml';

export type { Operation } from 'fast-json-patch';

export type ConfigDocument = { [key: string]: unknown };

export interface StrategicMergePatch {
  readonly type: 'strategic';
  /** What the patch came from (the argument), for error messages. */
  readonly source: string;
  readonly documents: readonly ConfigDocument[];
}

export interface JsonPatch {
  readonly type: 'rfc6902';
  readonly source: string;
  readonly operations: readonly Operation[];
}

export type Patch = StrategicMergePatch | JsonPatch;

/** Reads a patch file named by an `@file` argument, as text. */
export type ReadFile = (path: string) => string;

/** A patch that cannot be loaded or applied: `source` names the patch, `reason` says what is wrong. */
export class PatchError extends Error {
  readonly source: string;
  readonly reason: string;

  constructor(source: string, reason: string) {
    super(`${source}: ${reason}`);
    this.name = 'PatchError';
    this.source = source;
    this.reason = reason;
  }
}

/**
 * Lists that do not simply append, from Talos's documentation of its merge rules (admissionControl by
 * `name` from its worked example). `document` is
 * `v1alpha1` or a document kind; `path` is the field path in that document, `[]` standing for a list
 * item. `replace`: the patch's list (or map) replaces the config's. `mergeKeys`: a patch item merges into
 * the config's first item with an equal value for the first of these keys the patch item has, and is
 * appended when there is none.
 */
export type MergeRule =
  | { readonly document: string; readonly path: string; readonly replace: true }
  | { readonly document: string; readonly path: string; readonly mergeKeys: readonly string[] };

export const MERGE_RULES: readonly MergeRule[] = [
  { document: 'v1alpha1', path: 'machine.network.interfaces', mergeKeys: ['interface', 'deviceSelector'] },
  { document: 'v1alpha1', path: 'machine.network.interfaces[].vlans', mergeKeys: ['vlanId'] },
  { document: 'v1alpha1', path: 'cluster.network.podSubnets', replace: true },
  { document: 'v1alpha1', path: 'cluster.network.serviceSubnets', replace: true },
  { document: 'v1alpha1', path: 'cluster.apiServer.auditPolicy', replace: true },
  { document: 'v1alpha1', path: 'cluster.apiServer.admissionControl', mergeKeys: ['name'] },
  { document: 'ExtensionServiceConfig', path: 'configFiles', mergeKeys: ['mountPath'] },
];

const V1ALPHA1 = 'v1alpha1';
const DIRECTIVE = '$patch';
const OPS = new Set(['add', 'remove', 'replace', 'move', 'copy', 'test']);

// ---- loading ----

function isMap(v: unknown): v is ConfigDocument {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function describeArg(arg: string, index: number): string {
  if (arg.startsWith('@')) return arg;
  const oneLine = arg.trim().replace(/\s+/g, ' ');
  const preview = oneLine.length > 40 ? `${oneLine.slice(0, 40)}…` : oneLine;
  return `patch ${index + 1} ${JSON.stringify(preview)}`;
}

/** Plain data copy: breaks YAML alias sharing and refuses `__proto__` keys. */
function copyData(v: unknown, where: string): unknown {
  if (Array.isArray(v)) return v.map((x, i) => copyData(x, `${where}[${i}]`));
  if (isMap(v)) {
    const out: ConfigDocument = {};
    for (const [k, x] of Object.entries(v)) {
      if (k === '__proto__') throw new Error(`${where || 'document'}: key __proto__ is not allowed`);
      out[k] = copyData(x, joinKey(where, k));
    }
    return out;
  }
  return v;
}

function parseYamlDocuments(text: string): unknown[] {
  const docs = YAML.parseAllDocuments(text, { prettyErrors: true, merge: true });
  if (!Array.isArray(docs)) return []; // an empty stream
  const out: unknown[] = [];
  for (const [i, doc] of docs.entries()) {
    const err = doc.errors[0];
    if (err) {
      const where = docs.length > 1 ? `document ${i + 1}: ` : '';
      throw new Error(`${where}malformed YAML: ${err.message.split('\n')[0]!.replace(/:$/, '')}`);
    }
    out.push(copyData(doc.toJS({ maxAliasCount: 100 }), ''));
  }
  return out;
}

function checkPointer(p: unknown, name: string, what: string): void {
  if (p === undefined) throw new Error(`${what}: missing ${name}`);
  if (typeof p !== 'string') throw new Error(`${what}: ${name} must be a string`);
  if (p !== '' && !p.startsWith('/')) throw new Error(`${what}: ${name} ${JSON.stringify(p)} must be empty or start with "/"`);
}

function parseOperations(list: unknown[]): Operation[] {
  return list.map((entry, i) => {
    if (!isMap(entry)) throw new Error(`op ${i}: a ${kindOf(entry)}, not a map with op and path`);
    const op = entry.op;
    if (op === undefined) throw new Error(`op ${i}: missing op`);
    if (typeof op !== 'string' || !OPS.has(op)) {
      throw new Error(`op ${i}: unknown op ${JSON.stringify(op)} (add, remove, replace, move, copy, test)`);
    }
    checkPointer(entry.path, 'path', `op ${i} (${op})`);
    const what = `op ${i} (${op} ${String(entry.path)})`;
    if (op === 'move' || op === 'copy') checkPointer(entry.from, 'from', what);
    if ((op === 'add' || op === 'replace' || op === 'test') && !('value' in entry)) throw new Error(`${what}: missing value`);
    return entry as unknown as Operation;
  });
}

/** Parses one patch's text (YAML or JSON); `source` names it in errors. */
export function parsePatch(text: string, source: string): Patch {
  try {
    const docs = parseYamlDocuments(text).filter((d) => d !== null && d !== undefined);
    if (docs.length === 0) throw new Error('empty patch');
    if (docs.length === 1 && Array.isArray(docs[0])) {
      return { type: 'rfc6902', source, operations: parseOperations(docs[0]) };
    }
    const documents = docs.map((d, i) => {
      const where = docs.length > 1 ? `document ${i + 1}: ` : '';
      if (Array.isArray(d)) throw new Error(`${where}is a list: an RFC 6902 patch is a single list of operations`);
      if (!isMap(d)) {
        const hint = typeof d === 'string' && !/\s/.test(d) ? ` (a file? write @${d})` : '';
        throw new Error(`${where}is a ${d === null ? 'null' : typeof d}, not a config document or a list of operations${hint}`);
      }
      documentIdentity(d, 'patch');
      return d;
    });
    return { type: 'strategic', source, documents };
  } catch (e) {
    if (e instanceof PatchError) throw e;
    throw new PatchError(source, (e as Error).message);
  }
}

/** Loads patches from arguments: `@file` (read with readFile) or inline YAML/JSON text. */
export function loadPatches(args: readonly string[], readFile: ReadFile): Patch[] {
  return args.map((arg, i) => {
    const source = describeArg(arg, i);
    let text = arg;
    if (arg.startsWith('@')) {
      const path = arg.slice(1);
      if (!path) throw new PatchError(source, 'no file name after @');
      try {
        text = readFile(path);
      } catch (e) {
        throw new PatchError(source, `cannot read: ${(e as Error).message}`);
      }
    }
    return parsePatch(text, source);
  });
}

// ---- documents ----

interface Identity {
  /** `v1alpha1`, or apiVersion/kind/name. */
  key: string;
  /** The document kind for MERGE_RULES: `v1alpha1` or the kind. */
  kind: string;
  label: string;
}

function documentIdentity(doc: ConfigDocument, what: 'patch' | 'config'): Identity {
  const { kind, apiVersion, version, name } = doc;
  if (kind === undefined) {
    if (apiVersion !== undefined) throw new Error(`document with apiVersion but no kind`);
    if (version === undefined && what === 'patch') return { key: V1ALPHA1, kind: V1ALPHA1, label: V1ALPHA1 };
    if (version !== V1ALPHA1) throw new Error(`document with no kind must be version v1alpha1, got ${JSON.stringify(version)}`);
    return { key: V1ALPHA1, kind: V1ALPHA1, label: V1ALPHA1 };
  }
  if (typeof kind !== 'string' || !kind) throw new Error(`kind must be a non-empty string`);
  if (version !== undefined) throw new Error(`${kind} document: version is for the v1alpha1 document only, use apiVersion`);
  if (typeof apiVersion !== 'string' || !apiVersion) throw new Error(`${kind} document: missing apiVersion`);
  if (name !== undefined && typeof name !== 'string') throw new Error(`${kind} document: name must be a string`);
  return {
    key: `${apiVersion}/${kind}/${name ?? ''}`,
    kind,
    label: name === undefined ? `${kind} (${apiVersion})` : `${kind} ${JSON.stringify(name)} (${apiVersion})`,
  };
}

// ---- strategic merge ----

const DELETE = Symbol('delete');

const rulesByPath = new Map(MERGE_RULES.map((r) => [`${r.document}|${r.path}`, r]));

interface At {
  document: string;
  /** Shown in errors: machine.network.interfaces[1].vlans */
  shown: string;
  /** For MERGE_RULES: machine.network.interfaces[].vlans */
  schema: string;
}

function joinKey(base: string, key: string): string {
  const k = /^[A-Za-z0-9_$-]+$/.test(key) ? key : JSON.stringify(key);
  if (!base) return k;
  return k.startsWith('"') ? `${base}[${k}]` : `${base}.${k}`;
}

const child = (at: At, key: string): At => ({
  document: at.document,
  shown: joinKey(at.shown, key),
  schema: at.schema ? `${at.schema}.${key}` : key,
});
const item = (at: At, index: number): At => ({ document: at.document, shown: `${at.shown}[${index}]`, schema: `${at.schema}[]` });

class MergeError extends Error {}

function fail(at: At, reason: string): never {
  throw new MergeError(at.shown ? `${at.shown}: ${reason}` : reason);
}

function kindOf(v: unknown): string {
  return Array.isArray(v) ? 'list' : isMap(v) ? 'map' : 'value';
}

/** The `$patch` directive of a patch map, if any ('delete' is the only one). */
function isDelete(v: unknown, at: At): boolean {
  if (!isMap(v) || !(DIRECTIVE in v)) return false;
  if (v[DIRECTIVE] !== 'delete') fail(at, `unsupported ${DIRECTIVE}: ${JSON.stringify(v[DIRECTIVE])} (only delete)`);
  return true;
}

function mergeValue(base: unknown, patch: unknown, at: At): unknown {
  if (patch === null || patch === undefined) return base;
  const rule = rulesByPath.get(`${at.document}|${at.schema}`);
  const replace = rule !== undefined && 'replace' in rule;
  const absent = base === null || base === undefined || replace;
  if (isMap(patch)) {
    if (isDelete(patch, at)) {
      if (Object.keys(patch).length > 1) fail(at, `${DIRECTIVE}: delete on a field takes no other fields`);
      if (base === null || base === undefined) fail(at, 'nothing to delete');
      return DELETE;
    }
    if (absent) return mergeMap({}, patch, at);
    if (!isMap(base)) fail(at, `cannot merge a map into a ${kindOf(base)}`);
    return mergeMap(base, patch, at);
  }
  if (Array.isArray(patch)) {
    const keys = rule !== undefined && 'mergeKeys' in rule ? rule.mergeKeys : [];
    if (absent) return mergeList([], patch, keys, at);
    if (!Array.isArray(base)) fail(at, `cannot merge a list into a ${kindOf(base)}`);
    return mergeList(base, patch, keys, at);
  }
  if (!absent && (isMap(base) || Array.isArray(base))) fail(at, `cannot replace a ${kindOf(base)} with a value`);
  return patch;
}

function mergeMap(base: ConfigDocument, patch: ConfigDocument, at: At): ConfigDocument {
  for (const [key, value] of Object.entries(patch)) {
    const merged = mergeValue(base[key], value, child(at, key));
    if (merged === DELETE) delete base[key];
    else if (merged !== undefined) base[key] = merged;
  }
  return base;
}

function selects(candidate: unknown, selector: ConfigDocument): boolean {
  return isMap(candidate) && Object.entries(selector).every(([k, v]) => isDeepStrictEqual(candidate[k], v));
}

/** Merges a patch list into a list; a list its deletions leave empty is deleted itself (as Talos omits it). */
function mergeList(base: unknown[], patch: unknown[], mergeKeys: readonly string[], at: At): unknown[] | typeof DELETE {
  let out = base;
  let deleted = false;
  patch.forEach((entry, i) => {
    const here = item(at, i);
    if (isMap(entry) && isDelete(entry, here)) {
      const { [DIRECTIVE]: _, ...selector } = entry;
      if (Object.keys(selector).length === 0) fail(here, `${DIRECTIVE}: delete in a list needs fields selecting the items to delete`);
      const kept = out.filter((x) => !selects(x, selector));
      if (kept.length === out.length) fail(here, `no item with ${JSON.stringify(selector)} to delete`);
      out = kept;
      deleted = true;
      return;
    }
    if (isMap(entry)) {
      const key = mergeKeys.find((k) => entry[k] !== undefined && entry[k] !== null && entry[k] !== '');
      const match = key === undefined ? undefined : out.find((x) => isMap(x) && isDeepStrictEqual(x[key], entry[key]));
      if (match !== undefined) {
        mergeMap(match as ConfigDocument, entry, here);
        return;
      }
    }
    const added = mergeValue(undefined, entry, here);
    out.push(added === undefined ? null : added);
  });
  return deleted && out.length === 0 ? DELETE : out;
}

function applyStrategic(docs: ConfigDocument[], patch: StrategicMergePatch): ConfigDocument[] {
  let out = docs;
  for (const [i, raw] of patch.documents.entries()) {
    const pdoc = copyData(raw, '') as ConfigDocument;
    let id: Identity;
    try {
      id = documentIdentity(pdoc, 'patch');
    } catch (e) {
      throw new MergeError(`patch document ${i + 1}: ${(e as Error).message}`);
    }
    const at: At = { document: id.kind, shown: '', schema: '' };
    const where = out.findIndex((d) => documentIdentity(d, 'config').key === id.key);
    try {
      if (isDelete(pdoc, at)) {
        if (id.key === V1ALPHA1) fail(at, 'the v1alpha1 document cannot be deleted');
        const extra = Object.keys(pdoc).filter((k) => ![DIRECTIVE, 'apiVersion', 'kind', 'name'].includes(k));
        if (extra.length > 0) fail(at, `deleting a document takes only apiVersion, kind and name, not ${extra.join(', ')}`);
        if (where < 0) continue; // As Talos: deleting a document the config does not have is no error.
        out = out.filter((_, j) => j !== where);
        continue;
      }
      if (where >= 0) {
        mergeMap(out[where]!, pdoc, at);
      } else {
        const fresh: ConfigDocument = id.key === V1ALPHA1 ? { version: V1ALPHA1 } : {};
        out = [...out, mergeMap(fresh, pdoc, at)];
      }
    } catch (e) {
      if (e instanceof MergeError) throw new MergeError(`document ${id.label}: ${e.message}`);
      throw e;
    }
  }
  return out;
}

// ---- RFC 6902 ----

const JSON_PATCH_REASONS: Record<string, string> = {
  TEST_OPERATION_FAILED: 'test failed: the value differs',
  OPERATION_PATH_UNRESOLVABLE: 'path not found',
  OPERATION_FROM_UNRESOLVABLE: 'from path not found',
  OPERATION_PATH_CANNOT_ADD: 'cannot add there: the parent does not exist',
  OPERATION_PATH_ILLEGAL_ARRAY_INDEX: 'illegal list index',
  OPERATION_VALUE_OUT_OF_BOUNDS: 'list index out of bounds',
  OPERATION_VALUE_REQUIRED: 'missing value',
  OPERATION_VALUE_CANNOT_CONTAIN_UNDEFINED: 'value contains undefined',
  OPERATION_OP_INVALID: 'unknown op',
  OPERATION_PATH_INVALID: 'invalid path',
  OPERATION_FROM_REQUIRED: 'missing from',
  OPERATION_NOT_AN_OBJECT: 'not an operation',
};

function applyJson(docs: ConfigDocument[], patch: JsonPatch): ConfigDocument[] {
  if (docs.length !== 1 || documentIdentity(docs[0]!, 'config').key !== V1ALPHA1) {
    const labels = docs.map((d) => documentIdentity(d, 'config').label).join(', ') || 'none';
    throw new MergeError(`RFC 6902 patches apply only to a config of the v1alpha1 document alone (this one has: ${labels})`);
  }
  const operations = copyData(patch.operations, '') as Operation[];
  let result: unknown;
  try {
    result = jsonpatch.applyPatch(docs[0]!, operations, true, false).newDocument;
  } catch (e) {
    const err = e as { name?: string; index?: number; message?: string };
    if (typeof err.index !== 'number') throw new MergeError(`RFC 6902: ${err.message?.split('\n')[0] ?? String(e)}`);
    const op = operations[err.index]!;
    const reason = JSON_PATCH_REASONS[err.name ?? ''] ?? err.message?.split('\n')[0] ?? 'failed';
    throw new MergeError(`op ${err.index} (${op.op} ${op.path}): ${reason}`);
  }
  if (!isMap(result)) throw new MergeError(`RFC 6902: the result is a ${kindOf(result)}, not a config document`);
  return [result];
}

// ---- applying ----

/** Parses a (multi-document) config; every document must be a map with an identity. */
function parseConfig(text: string): ConfigDocument[] {
  let docs: unknown[];
  try {
    docs = parseYamlDocuments(text);
  } catch (e) {
    throw new PatchError('config', (e as Error).message);
  }
  return docs
    .filter((d) => d !== null && d !== undefined)
    .map((d, i) => {
      if (!isMap(d)) throw new PatchError('config', `document ${i + 1} is a ${kindOf(d)}, not a map`);
      try {
        documentIdentity(d, 'config');
      } catch (e) {
        throw new PatchError('config', `document ${i + 1}: ${(e as Error).message}`);
      }
      return d;
    });
}

/** Applies the patches in order to a (multi-document) YAML config and returns the patched YAML. */
export function applyPatches(baseYaml: string, patches: readonly Patch[]): string {
  let docs = parseConfig(baseYaml);
  for (const patch of patches) {
    try {
      docs = patch.type === 'rfc6902' ? applyJson(docs, patch) : applyStrategic(docs, patch);
    } catch (e) {
      if (e instanceof MergeError) throw new PatchError(patch.source, e.message);
      throw e;
    }
  }
  return docs.map((d) => YAML.stringify(d, { lineWidth: 0 })).join('---\n');
}
