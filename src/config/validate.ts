// Validates a machine configuration file (a YAML stream: the v1alpha1 document plus typed
// documents) and reports every problem, each with its path, its line and column in the text, and
// a message saying what is wrong and what is expected:
//
//   machine.network.hostname (line 12): "-bad-" is not a valid hostname: label "-bad-" must ...
//   LinkConfig(eth0).addresses[0].address (line 31): "10.0.0.1/33" is not a valid CIDR address: ...
//
// Three layers, all run so that one problem never hides another: YAML syntax (which stops there:
// without a tree there are no paths), the schemas (structure and field formats: schema.ts,
// kinds.ts), then checks across fields and documents (below and KindSpec.check), which read the
// raw data defensively so they run even where the schema already found something.
import { z } from 'zod';
import { parseYamlStream, type SourceDocument } from './document.ts';
import { KINDS, TALOS_ONLY_KIND_FIELDS, kindSpec, type KindDocument, type KindSpec } from './kinds.ts';
import { asArray, asObject, checkRouteFamilies, type Obj, type PathSegment, type Reporter } from './fields.ts';
import { decodeCertificateAndKey } from './formats.ts';
import { DEVICE_SELECTOR_FIELDS, TALOS_ONLY_FIELDS, v1alpha1Schema, type V1Alpha1Config } from './schema.ts';

export interface ConfigIssue {
  /** Where: `machine.network.interfaces[0].addresses[1]`, or `LinkConfig(eth0).mtu` for typed documents; "" for YAML syntax. */
  path: string;
  /** 1-based line and column in the YAML text. */
  line: number;
  column: number;
  message: string;
}

export interface ParsedConfig {
  v1alpha1: V1Alpha1Config;
  /** The typed documents, in stream order (see documentsOfKind). */
  documents: KindDocument[];
}

export type ValidationResult = { ok: true; config: ParsedConfig } | { ok: false; errors: ConfigIssue[] };

export class ConfigValidationError extends Error {
  readonly issues: readonly ConfigIssue[];

  constructor(issues: readonly ConfigIssue[]) {
    super(`invalid machine configuration:\n${formatIssues(issues)}`);
    this.name = 'ConfigValidationError';
    this.issues = issues;
  }
}

/** `path (line N): message`, one issue per line. */
export function formatIssues(issues: readonly ConfigIssue[]): string {
  return issues.map((i) => `${i.path ? `${i.path} (line ${i.line})` : `line ${i.line}`}: ${i.message}`).join('\n');
}

/** Validates and returns the typed configuration, or throws ConfigValidationError listing every issue. */
export function parseConfig(yamlText: string): ParsedConfig {
  const r = validateConfig(yamlText);
  if (!r.ok) throw new ConfigValidationError(r.errors);
  return r.config;
}

// ---------------------------------------------------------------------------------------------

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

/** The path with list indexes as "[]", for the TALOS_ONLY tables. */
function shapePath(prefix: string, path: readonly PathSegment[]): string {
  let out = prefix;
  for (const seg of path) out += typeof seg === 'number' ? '[]' : out ? `.${seg}` : seg;
  return out;
}

function valueAt(root: unknown, path: readonly PathSegment[]): unknown {
  let v = root;
  for (const seg of path) {
    if (v === null || typeof v !== 'object') return undefined;
    v = (v as Record<string, unknown>)[seg as string];
  }
  return v;
}

function describe(v: unknown): string {
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

type AnySchema = { _zod: { def: Record<string, unknown> & { type: string } } };

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

function unknownFieldMessage(key: string, known: string[], talosOnly: readonly string[] | undefined): string {
  if (talosOnly?.includes(key)) return `${q(key)} is a Talos field that Bronze does not implement: remove it`;
  const close = known.find((k) => k.toLowerCase() === key.toLowerCase()) ?? known.find((k) => editDistance(k, key) <= 2);
  if (close) return `unknown field ${q(key)}: did you mean ${q(close)}?`;
  return known.length ? `unknown field ${q(key)}: expected one of ${known.join(', ')}` : `unknown field ${q(key)}`;
}

// ---- zod issues → reports ----

type ZodIssue = z.core.$ZodIssue;

function reportZodIssues(
  issues: readonly ZodIssue[],
  base: readonly PathSegment[],
  root: unknown,
  schema: AnySchema,
  shapePrefix: string,
  report: Reporter,
): void {
  for (const issue of issues) {
    const path = [...base, ...(issue.path.filter((s) => typeof s !== 'symbol') as PathSegment[])];
    const value = valueAt(root, path);
    switch (issue.code) {
      case 'unrecognized_keys': {
        const known = fieldsAt(schema, path);
        const shape = shapePath(shapePrefix, path);
        const talosOnly = TALOS_ONLY_FIELDS[shape] ?? TALOS_ONLY_KIND_FIELDS[shape];
        for (const key of issue.keys) report([...path, key], unknownFieldMessage(key, known, talosOnly), 'key');
        break;
      }
      case 'invalid_union': {
        // Report the branch the value was meant for: the first whose errors are not "wrong type here".
        const branches = issue.errors.filter((errs) => !errs.some((e) => e.code === 'invalid_type' && e.path.length === 0));
        if (branches.length) {
          reportZodIssues(branches[0]!, path, root, schema, shapePrefix, report);
        } else {
          const expected = issue.errors.map((errs) => EXPECTED[(errs[0] as { expected?: string }).expected ?? ''] ?? 'a valid value');
          report(path, value === undefined ? `required but missing: expected ${expected.join(' or ')}` : `expected ${expected.join(' or ')}, got ${describe(value)}`);
        }
        break;
      }
      case 'invalid_type': {
        const expected = EXPECTED[issue.expected] ?? issue.expected;
        report(path, value === undefined ? `required but missing: expected ${expected}` : `expected ${expected}, got ${describe(value)}`);
        break;
      }
      case 'invalid_value': {
        const values = issue.values.map((v) => String(v));
        const expected = values.length === 1 ? values[0]! : `one of ${values.join(', ')}`;
        report(path, value === undefined ? `required but missing: expected ${expected}` : `${describe(value)} is not allowed here: expected ${expected}`);
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

// ---- checks across fields of the v1alpha1 document ----

function checkRoutes(routes: unknown, base: readonly PathSegment[], report: Reporter): void {
  asArray(routes).forEach((r, k) => {
    const route = asObject(r);
    if (!route) return;
    if (route.network === undefined && route.gateway === undefined) {
      report([...base, k], 'a route needs "network" (its destination), "gateway", or both');
    }
    checkRouteFamilies(route.network, route.gateway, report, [...base, k, 'gateway'], 'network');
  });
}

function checkInterfaces(network: Obj, report: Reporter): void {
  const base = ['machine', 'network', 'interfaces'];
  const seen = new Map<string, number>();
  asArray(network.interfaces).forEach((d, i) => {
    const dev = asObject(d);
    if (!dev || dev.ignore === true) return; // Talos skips the checks of ignored interfaces.
    const hasName = dev.interface !== undefined;
    const selector = dev.deviceSelector;
    if (hasName && selector !== undefined) {
      report([...base, i, 'deviceSelector'], '"interface" and "deviceSelector" are mutually exclusive: name the interface or select it, not both', 'key');
    } else if (!hasName && selector === undefined) {
      report([...base, i], 'either "interface" (its name) or "deviceSelector" must be set');
    }
    const emptySelector = `an empty selector matches nothing: set at least one of ${DEVICE_SELECTOR_FIELDS.join(', ')}`;
    if (asObject(selector) && Object.keys(selector as Obj).length === 0) report([...base, i, 'deviceSelector'], emptySelector, 'key');
    asArray(selector).forEach((s, j) => {
      if (asObject(s) && Object.keys(s as Obj).length === 0) report([...base, i, 'deviceSelector', j], emptySelector);
    });
    if (typeof dev.interface === 'string') {
      const first = seen.get(dev.interface);
      if (first !== undefined) {
        report([...base, i, 'interface'], `duplicate interface ${q(dev.interface)}: it is already configured at ${formatPath('', [...base, first])}; configure each interface once (VLANs go in its "vlans")`);
      } else {
        seen.set(dev.interface, i);
      }
    }
    checkRoutes(dev.routes, [...base, i, 'routes'], report);
    const vlanIds = new Map<unknown, number>();
    asArray(dev.vlans).forEach((v, k) => {
      const vlan = asObject(v);
      if (!vlan) return;
      if (typeof vlan.vlanId === 'number') {
        const first = vlanIds.get(vlan.vlanId);
        if (first !== undefined) report([...base, i, 'vlans', k, 'vlanId'], `duplicate VLAN ${vlan.vlanId} on this interface: already at vlans[${first}]`);
        else vlanIds.set(vlan.vlanId, k);
      }
      checkRoutes(vlan.routes, [...base, i, 'vlans', k, 'routes'], report);
    });
  });
}

function checkV1Alpha1(root: Obj, report: Reporter): void {
  if (root.persist === false) {
    report(['persist'], 'must be true or left out: the configuration is always kept on the STATE partition (Talos rejects persist: false too)');
  }
  const machine = asObject(root.machine);
  const cluster = asObject(root.cluster);
  const type = machine?.type;
  const ca = asObject(machine?.ca);
  if (ca) {
    const key = ca.key;
    const hasKey = typeof key === 'string' && key !== '';
    if (type === 'controlplane' && !hasKey) {
      report(['machine', 'ca', 'key'], 'the OS CA private key is required on controlplane nodes (they issue the API certificates): set it to the base64 PEM key, as `gen config` writes it');
    }
    if (type === 'worker' && hasKey) {
      report(['machine', 'ca', 'key'], 'the OS CA private key is not allowed on worker nodes, only on controlplane nodes (Talos refuses it too): leave it out or empty');
    }
    if (type === 'controlplane' && hasKey && typeof ca.crt === 'string') {
      const pair = decodeCertificateAndKey(ca.crt, key);
      if (pair?.key && !pair.crt.checkPrivateKey(pair.key)) report(['machine', 'ca', 'key'], 'the key does not belong to machine.ca.crt: use the key of the same CA');
    }
  }
  const network = asObject(machine?.network);
  if (network) checkInterfaces(network, report);

  const files = new Map<string, number>();
  asArray(machine?.files).forEach((f, i) => {
    const path = asObject(f)?.path;
    if (typeof path !== 'string') return;
    const first = files.get(path);
    if (first !== undefined) report(['machine', 'files', i, 'path'], `duplicate file ${q(path)}: already written by machine.files[${first}]`);
    else files.set(path, i);
  });

  if (!cluster) return;
  if (type === 'worker') {
    const clusterKey = asObject(cluster.ca)?.key;
    if (typeof clusterKey === 'string' && clusterKey !== '') {
      report(['cluster', 'ca', 'key'], 'the cluster CA private key is not allowed on worker nodes, only on controlplane nodes: leave it out or empty');
    }
    if (cluster.etcd !== undefined) report(['cluster', 'etcd'], 'etcd runs only on controlplane nodes: remove cluster.etcd from a worker configuration', 'key');
    if (cluster.controlPlane === undefined) {
      report(['cluster', 'controlPlane'], 'required on worker nodes: cluster.controlPlane.endpoint is where they find trustd to join the cluster', 'key');
    }
  }
  const discovery = asObject(cluster.discovery);
  const service = asObject(asObject(discovery?.registries)?.service);
  if (discovery?.enabled === true && service?.disabled !== true) {
    for (const field of ['id', 'secret'] as const) {
      if (cluster[field] === undefined) report(['cluster', field], `required when cluster discovery uses the discovery service (cluster.discovery.enabled): set cluster.${field}, as \`gen config\` writes it`);
    }
  }
}

// ---- the stream ----

interface Collected extends ConfigIssue {
  order: number;
}

class Issues {
  readonly list: Collected[] = [];

  add(doc: SourceDocument, display: string, posPath: readonly PathSegment[], message: string, at?: 'key' | 'value'): void {
    const p = doc.position(posPath, at);
    this.list.push({ path: display, line: p.line, column: p.column, message, order: this.list.length });
  }

  /** A Reporter for one document: paths are shown after `prefix` and located in `doc`. */
  reporter(doc: SourceDocument, prefix: string): Reporter {
    return (path, message, at) => this.add(doc, formatPath(prefix, path), path, message, at);
  }

  sorted(): ConfigIssue[] {
    const seen = new Set<string>();
    return this.list
      .sort((a, b) => a.line - b.line || a.column - b.column || a.order - b.order)
      .filter((i) => {
        const k = `${i.path}\0${i.line}\0${i.message}`;
        if (seen.has(k)) return false;
        seen.add(k);
        return true;
      })
      .map(({ path, line, column, message }) => ({ path, line, column, message }));
  }
}

const KIND_NAMES = KINDS.map((k) => k.kind).join(', ');

interface KindEntry {
  spec: KindSpec;
  doc: SourceDocument;
  prefix: string;
}

export function validateConfig(yamlText: string): ValidationResult {
  const stream = parseYamlStream(yamlText);
  if (stream.errors.length) {
    return { ok: false, errors: stream.errors.map((e) => ({ path: '', line: e.line, column: e.column, message: `invalid YAML: ${e.message}` })) };
  }
  const issues = new Issues();
  let v1: { doc: SourceDocument; root: Obj; data?: V1Alpha1Config } | undefined;
  const kinds: KindEntry[] = [];
  const typed: KindDocument[] = [];
  const identities = new Map<string, SourceDocument>();

  for (const doc of stream.documents) {
    const root = asObject(doc.value);
    if (!root) {
      issues.add(doc, `document[${doc.index}]`, [], `a configuration document must be a mapping, got ${describe(doc.value)}`);
      continue;
    }
    if (root.kind !== undefined || root.apiVersion !== undefined) {
      const spec = kindSpec(root.kind);
      if (!spec) {
        const display = `document[${doc.index}]`;
        if (root.kind === undefined) issues.add(doc, `${display}.kind`, ['apiVersion'], `missing: a typed document needs "kind", one of ${KIND_NAMES}`, 'key');
        else issues.add(doc, `${display}.kind`, ['kind'], `unknown kind ${q(root.kind)}: Bronze supports ${KIND_NAMES}`);
        continue;
      }
      const name = spec.named && typeof root.name === 'string' && root.name !== '' ? root.name : undefined;
      const prefix = name !== undefined ? `${spec.kind}(${name})` : spec.kind;
      const report = issues.reporter(doc, prefix);
      const result = spec.schema.safeParse(root);
      if (!result.success) reportZodIssues(result.error.issues, [], root, spec.schema as unknown as AnySchema, spec.kind, report);
      spec.check?.(root, report);
      if (!spec.named || name !== undefined) {
        const identity = `${spec.kind}\0${name ?? ''}`;
        const first = identities.get(identity);
        if (first) {
          issues.add(doc, prefix, ['kind'], `duplicate ${prefix} document: the first is at line ${first.position(['kind'], 'key').line}; ${spec.named ? 'each name' : 'this kind'} may appear once`, 'key');
        } else {
          identities.set(identity, doc);
        }
      }
      kinds.push({ spec, doc, prefix });
      if (result.success) typed.push(result.data as KindDocument);
      continue;
    }
    if (root.version !== undefined) {
      if (v1) {
        issues.add(doc, 'version', ['version'], `duplicate v1alpha1 document: the first starts at line ${v1.doc.start.line}; a configuration has exactly one`, 'key');
        continue;
      }
      const report = issues.reporter(doc, '');
      const result = v1alpha1Schema.safeParse(root);
      if (!result.success) reportZodIssues(result.error.issues, [], root, v1alpha1Schema as unknown as AnySchema, '', report);
      checkV1Alpha1(root, report);
      v1 = { doc, root, ...(result.success ? { data: result.data } : {}) };
      continue;
    }
    issues.add(doc, `document[${doc.index}]`, [], 'neither the machine configuration ("version: v1alpha1") nor a typed document ("apiVersion: v1alpha1" and "kind")');
  }

  if (!v1) {
    issues.list.push({ path: '', line: 1, column: 1, message: 'no machine configuration document: expected one document with "version: v1alpha1" and its machine and cluster sections', order: issues.list.length });
  } else {
    for (const { spec, doc, prefix } of kinds) {
      for (const c of spec.conflicts) {
        if (!c.isSet(valueAt(v1.root, c.path))) continue;
        const where = v1.doc.position(c.path, 'key').line;
        issues.add(doc, prefix, ['kind'], `conflicts with ${c.path.join('.')} (line ${where}) of the v1alpha1 document: both configure the same thing; keep one of them`, 'key');
      }
    }
  }

  const errors = issues.sorted();
  if (errors.length || !v1?.data) return { ok: false, errors };
  return { ok: true, config: { v1alpha1: v1.data, documents: typed } };
}
