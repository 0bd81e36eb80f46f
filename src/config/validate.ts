// Validates a machine configuration file (a YAML stream: the v1alpha1 document and typed
// documents) as Talos reads it, and reports every problem, each with its path, its line and
// column, whether the field is invalid, unsupported or needs a value, and what is expected:
//
//   machine.network.hostname (line 12): invalid: "-bad-" is not a valid hostname: label ...
//   machine.disks (line 20): unsupported: not implemented in Bronze: ...
//   machine.kubelet (line 8): ignored: Bronze runs no Kubernetes                     (a warning)
//
// Layers, all run so that one problem never hides another: YAML syntax (which stops there: without
// a tree there are no paths), the policy for Talos fields and kinds Bronze does not implement
// (policy.ts), the schemas (schema.ts, kinds-*.ts), then checks across fields and documents
// (checks.ts, KindSpec.check, below). Talos's habits are read as Talos reads them: a v1alpha1
// document without `version:` is recognised by its keys, YAML merge keys are resolved, a missing
// machine.type is a worker and "join" is its deprecated alias, and a configuration may be made
// of typed documents alone.
import { parseYamlStream, type SourceDocument } from './document.ts';
import { applyFieldRules, KIND_OF_ACTION } from './apply-policy.ts';
import { checkV1Alpha1 } from './checks.ts';
import { asObject, WARNING_KINDS, type IssueKind, type Obj, type PathSegment } from './fields.ts';
import { KINDS, kindSpec, type KindDocument, type KindSpec } from './kinds.ts';
import { clusterName, controlPlaneEndpoint } from './accessors/cluster.ts';
import { installOfDocuments, type InstallSettings } from './accessors/install.ts';
import { kindRule, ruleMessage } from './policy.ts';
import { describe, formatPath, reportZodIssues, valueAt, type AnySchema } from './report.ts';
import { v1alpha1Schemas, type MachineType, type V1Alpha1Config } from './schema.ts';

export interface ConfigIssue {
  /** Where: `machine.network.interfaces[0].addresses[1]`, or `LinkConfig(eth0).mtu` for typed documents; "" for YAML syntax. */
  path: string;
  /** 1-based line and column in the YAML text. */
  line: number;
  column: number;
  message: string;
  /** An error (invalid, unsupported, missing: needs a value) or a warning; default invalid. */
  kind?: IssueKind;
}

/**
 * Every document as data, to keep and publish: merge keys resolved, nulls dropped, the v1alpha1
 * document with `version` and machine.type as Bronze reads them; fields and kinds Bronze ignores
 * are kept (so an edit or a patch of the running configuration keeps them).
 */
export interface ConfigData {
  v1alpha1?: Obj;
  documents: Obj[];
}

export interface ParsedConfig {
  /** The v1alpha1 document, Bronze's fields only; absent in a configuration of typed documents alone. */
  v1alpha1?: V1Alpha1Config;
  /** The typed documents of the kinds Bronze implements, in stream order (see documentsOfKind). */
  documents: KindDocument[];
  /** machine.type as Bronze runs it ("join" read as worker, a missing type as worker). */
  machineType?: MachineType;
  /** The control-plane endpoint: cluster.controlPlane.endpoint or KubeClusterConfig's. */
  controlPlaneEndpoint?: string;
  clusterName?: string;
  /** The install settings: machine.install, or an UnattendedInstallConfig selecting a disk by path. */
  install?: InstallSettings;
  /** Every document as data, ignored fields and kinds included (ConfigData). */
  data: ConfigData;
  warnings: ConfigIssue[];
}

export type ValidationResult = { ok: true; config: ParsedConfig; warnings: ConfigIssue[] } | { ok: false; errors: ConfigIssue[]; warnings: ConfigIssue[] };

export class ConfigValidationError extends Error {
  readonly issues: readonly ConfigIssue[];

  constructor(issues: readonly ConfigIssue[]) {
    super(`invalid machine configuration:\n${formatIssues(issues)}`);
    this.name = 'ConfigValidationError';
    this.issues = issues;
  }
}

const LABEL: Partial<Record<IssueKind, string>> = { invalid: 'invalid', unsupported: 'unsupported', missing: 'needs a value' };

export function isWarning(issue: ConfigIssue): boolean {
  return issue.kind !== undefined && WARNING_KINDS.has(issue.kind);
}

/**
 * One issue per line: `path (line N): <invalid|unsupported|needs a value>: message` for an
 * error, `path (line N): message` for a warning (its message starts with what happens:
 * "ignored: ...", "accepted and kept for later: ...", "deprecated: ...").
 */
export function formatIssues(issues: readonly ConfigIssue[]): string {
  return issues
    .map((i) => {
      if (!i.path) return `line ${i.line}: ${i.message}`;
      const label = isWarning(i) ? undefined : LABEL[i.kind ?? 'invalid'];
      return `${i.path} (line ${i.line}): ${label ? `${label}: ` : ''}${i.message}`;
    })
    .join('\n');
}

/** Validates and returns the typed configuration, or throws ConfigValidationError listing every issue. */
export function parseConfig(yamlText: string): ParsedConfig {
  const r = validateConfig(yamlText);
  if (!r.ok) throw new ConfigValidationError(r.errors);
  return r.config;
}

// ---- the collected issues ----

interface Collected extends ConfigIssue {
  order: number;
}

class Issues {
  readonly list: Collected[] = [];

  add(doc: SourceDocument, display: string, posPath: readonly PathSegment[], message: string, at?: 'key' | 'value', kind: IssueKind = 'invalid'): void {
    const p = doc.position(posPath, at);
    this.list.push({ path: display, line: p.line, column: p.column, message, kind, order: this.list.length });
  }

  /** A Reporter for one document: paths are shown after `prefix` and located in `doc`. */
  reporter(doc: SourceDocument, prefix: string) {
    return (path: readonly PathSegment[], message: string, at?: 'key' | 'value', kind?: IssueKind) => this.add(doc, formatPath(prefix, path), path, message, at, kind);
  }

  sorted(warnings: boolean): ConfigIssue[] {
    const seen = new Set<string>();
    return this.list
      .filter((i) => isWarning(i) === warnings)
      .sort((a, b) => a.line - b.line || a.column - b.column || a.order - b.order)
      .filter((i) => {
        const k = `${i.path}\0${i.line}\0${i.message}`;
        if (seen.has(k)) return false;
        seen.add(k);
        return true;
      })
      .map(({ path, line, column, message, kind }) => ({ path, line, column, message, kind: kind ?? 'invalid' }));
  }
}

const q = (v: unknown) => JSON.stringify(v);

const KIND_NAMES = KINDS.map((k) => k.kind).join(', ');

/** Top-level keys that make a document without `version:` the v1alpha1 one (Talos infers it too). */
const V1ALPHA1_KEYS = ['machine', 'cluster', 'debug', 'persist'];

/** Talos machine types Bronze reads as its own, with the warning. */
const TYPE_ALIASES: Record<string, { type: MachineType; message: string }> = {
  join: { type: 'worker', message: 'deprecated: "join" is the old name of "worker"; the node runs as a worker' },
  init: { type: 'controlplane', message: 'deprecated: "init" is a controlplane that bootstraps etcd by itself; Bronze runs it as a controlplane' },
};

/** A deep copy as plain data; every "__proto__" key reported (it cannot be kept safely) and dropped. */
function plainCopy(v: unknown, path: PathSegment[], report: (path: PathSegment[]) => void): unknown {
  if (Array.isArray(v)) return v.map((x, i) => plainCopy(x, [...path, i], report));
  const o = asObject(v);
  if (!o) return v;
  const out: Obj = {};
  for (const [k, x] of Object.entries(o)) {
    if (k === '__proto__') report([...path, k]);
    else out[k] = plainCopy(x, [...path, k], report);
  }
  return out;
}

interface KindEntry {
  spec: KindSpec;
  doc: SourceDocument;
  prefix: string;
  data: Obj;
}

export function validateConfig(yamlText: string): ValidationResult {
  const stream = parseYamlStream(yamlText);
  if (stream.errors.length) {
    return { ok: false, errors: stream.errors.map((e) => ({ path: '', line: e.line, column: e.column, message: `invalid YAML: ${e.message}`, kind: 'invalid' })), warnings: [] };
  }
  const issues = new Issues();
  let v1: { doc: SourceDocument; data: Obj; typed?: V1Alpha1Config; type?: MachineType } | undefined;
  const kinds: KindEntry[] = [];
  const typed: KindDocument[] = [];
  const stored: Obj[] = [];
  const identities = new Map<string, SourceDocument>();

  for (const doc of stream.documents) {
    if (!asObject(doc.value)) {
      issues.add(doc, `document[${doc.index}]`, [], `a configuration document must be a mapping, got ${describe(doc.value)}`);
      continue;
    }
    const isKind = (doc.value as Obj).kind !== undefined || (doc.value as Obj).apiVersion !== undefined;
    const prefixOf = (root: Obj) => (isKind ? kindPrefix(root) : '');
    const root = plainCopy(doc.value, [], (path) =>
      issues.add(doc, formatPath(prefixOf(doc.value as Obj), path), path, 'the key "__proto__" is not accepted: it cannot be kept as data safely; rename or remove it', 'key'),
    ) as Obj;

    if (isKind) {
      const spec = kindSpec(root.kind);
      if (!spec) {
        const display = `document[${doc.index}]`;
        const rule = kindRule(String(root.kind));
        if (root.kind === undefined) issues.add(doc, `${display}.kind`, ['apiVersion'], `a typed document needs "kind", one of ${KIND_NAMES}`, 'key', 'missing');
        else if (rule) {
          issues.add(doc, kindPrefix(root), ['kind'], ruleMessage(rule.action, rule.reason), 'value', KIND_OF_ACTION[rule.action]);
          if (rule.action !== 'refuse') stored.push(root);
        } else issues.add(doc, `${display}.kind`, ['kind'], `unknown kind ${q(root.kind)}: Bronze implements ${KIND_NAMES}`);
        continue;
      }
      const prefix = kindPrefix(root, spec);
      const report = issues.reporter(doc, prefix);
      const work = structuredClone(root);
      applyFieldRules(spec.kind, work, report);
      const result = spec.schema.safeParse(work);
      if (!result.success) reportZodIssues(result.error.issues, [], work, spec.schema as unknown as AnySchema, report);
      spec.check?.(work, report);
      if (spec.keptForLater) issues.add(doc, prefix, ['kind'], ruleMessage('keep', spec.keptForLater), 'value', 'kept');
      const name = spec.named && typeof root.name === 'string' && root.name !== '' ? root.name : undefined;
      if ((!spec.named && !spec.repeatable) || name !== undefined) {
        const identity = `${spec.kind}\0${name ?? ''}`;
        const first = identities.get(identity);
        if (first) {
          issues.add(doc, prefix, ['kind'], `duplicate ${prefix} document: the first is at line ${first.position(['kind'], 'key').line}; ${spec.named ? 'each name' : 'this kind'} may appear once`, 'key');
        } else {
          identities.set(identity, doc);
        }
      }
      kinds.push({ spec, doc, prefix, data: work });
      stored.push(root);
      if (result.success) typed.push(result.data as KindDocument);
      continue;
    }

    if (root.version === undefined && !V1ALPHA1_KEYS.some((k) => k in root)) {
      issues.add(doc, `document[${doc.index}]`, [], 'neither the machine configuration (machine and cluster, "version: v1alpha1") nor a typed document ("apiVersion: v1alpha1" and "kind")');
      continue;
    }
    if (v1) {
      issues.add(doc, 'version', root.version !== undefined ? ['version'] : [], `duplicate v1alpha1 document: the first starts at line ${v1.doc.start.line}; a configuration has at most one`, 'key');
      continue;
    }
    const report = issues.reporter(doc, '');
    const data = { version: 'v1alpha1', ...root };
    const type = machineType(data, report);
    const work = structuredClone(data);
    dropCriFiles(work, report);
    applyFieldRules('v1alpha1', work, report);
    const { v1alpha1Schema } = v1alpha1Schemas();
    const result = v1alpha1Schema.safeParse(work);
    if (!result.success) reportZodIssues(result.error.issues, [], work, v1alpha1Schema as unknown as AnySchema, report);
    checkV1Alpha1(work, report);
    v1 = { doc, data, ...(result.success ? { typed: result.data } : {}), ...(type ? { type } : {}) };
  }

  const derived = crossDocumentChecks(v1, kinds, issues);
  if (!v1 && kinds.length === 0 && stored.length === 0 && issues.list.length === 0) {
    issues.list.push({ path: '', line: 1, column: 1, message: 'the configuration is empty: expected the v1alpha1 document (machine, cluster) and/or typed documents', kind: 'missing', order: 0 });
  }

  const errors = issues.sorted(false);
  const warnings = issues.sorted(true);
  if (errors.length || (v1 && !v1.typed)) return { ok: false, errors, warnings };
  const settings = { ...(v1?.typed ? { v1alpha1: v1.typed } : {}), documents: typed };
  const endpoint = controlPlaneEndpoint(settings);
  const name = clusterName(settings);
  const config: ParsedConfig = {
    ...settings,
    ...(v1?.type ? { machineType: v1.type } : {}),
    ...(endpoint !== undefined ? { controlPlaneEndpoint: endpoint } : {}),
    ...(name !== undefined ? { clusterName: name } : {}),
    ...derived,
    data: { ...(v1 ? { v1alpha1: v1.data } : {}), documents: stored },
    warnings,
  };
  return { ok: true, config, warnings };
}

/** `LinkConfig(eth0)`, or the kind alone for documents that are not named. */
function kindPrefix(root: Obj, spec?: KindSpec): string {
  const kind = typeof root.kind === 'string' ? root.kind : 'document';
  const named = spec ? spec.named : typeof root.name === 'string';
  return named && typeof root.name === 'string' && root.name !== '' ? `${kind}(${root.name})` : kind;
}

/** machine.type as Bronze runs it, normalising `data` (aliases and a missing type, with a warning). */
function machineType(data: Obj, report: ReturnType<Issues['reporter']>): MachineType | undefined {
  const machine = asObject(data.machine);
  if (!machine) return undefined;
  const type = machine.type;
  if (type === undefined) {
    report(['machine'], 'defaulted: machine.type is not set, so the node runs as a worker (as Talos does)', 'key', 'defaulted');
    data.machine = { type: 'worker', ...machine };
    return 'worker';
  }
  if (typeof type === 'string' && type in TYPE_ALIASES) {
    const alias = TYPE_ALIASES[type]!;
    report(['machine', 'type'], alias.message, 'value', 'deprecated');
    data.machine = { ...machine, type: alias.type };
    return alias.type;
  }
  return type === 'controlplane' || type === 'worker' ? type : undefined;
}

/** machine.files for containerd (/etc/cri/...): Talos's way to customise its CRI; ignored with a warning. */
function dropCriFiles(work: Obj, report: ReturnType<Issues['reporter']>): void {
  const machine = asObject(work.machine);
  if (!machine || !Array.isArray(machine.files)) return;
  const kept: unknown[] = [];
  machine.files.forEach((f, i) => {
    const path = asObject(f)?.path;
    if (typeof path === 'string' && path.startsWith('/etc/cri/')) report(['machine', 'files', i, 'path'], `ignored: ${path} configures the Kubernetes CRI containerd, which Bronze does not run (its own containerd runs ContainerConfig workloads only)`, 'value', 'ignored');
    else kept.push(f);
  });
  if (kept.length === machine.files.length) return;
  if (kept.length) machine.files = kept;
  else delete machine.files;
}

/** Checks across documents, and the install settings (the endpoint and cluster name come from the typed documents: accessors/cluster.ts). */
function crossDocumentChecks(v1: { doc: SourceDocument; data: Obj; typed?: V1Alpha1Config; type?: MachineType } | undefined, kinds: KindEntry[], issues: Issues) {
  const derived: Pick<ParsedConfig, 'install'> = {};
  const v1Data = v1?.data;
  if (v1 && v1Data) {
    for (const { spec, doc, prefix, data } of kinds) {
      for (const c of spec.conflicts) {
        if (c.when !== undefined && data[c.when] === undefined) continue;
        if (c.name !== undefined && data.name !== c.name) continue;
        if (!c.isSet(valueAt(v1Data, c.path))) continue;
        const where = v1.doc.position(c.path, 'key').line;
        issues.add(doc, prefix, ['kind'], `conflicts with ${c.path.join('.')} (line ${where}) of the v1alpha1 document: both configure the same thing; keep one of them`, 'key');
      }
    }
  }
  const entries = kinds.map((k) => ({ kind: k.spec.kind, data: k.data, report: issues.reporter(k.doc, k.prefix) }));
  for (const spec of new Set(kinds.map((k) => k.spec))) spec.checkAcross?.(entries.filter((e) => e.kind === spec.kind), entries);
  const kubeCluster = kinds.find((k) => k.spec.kind === 'KubeClusterConfig')?.data;
  const cluster = asObject(v1Data?.cluster);
  const endpoint = asObject(cluster?.controlPlane)?.endpoint ?? kubeCluster?.endpoint;
  if (v1 && cluster && v1.type === 'worker' && endpoint === undefined) {
    const at: PathSegment[] = ['cluster', 'controlPlane'];
    issues.add(v1.doc, at.join('.'), at, 'required on worker nodes: the control-plane endpoint (cluster.controlPlane.endpoint, or a KubeClusterConfig document) is where they find trustd to join the cluster', 'key', 'missing');
  }
  const install = installOfDocuments([...(v1Data ? [v1Data] : []), ...kinds.map((k) => k.data)]);
  if (install) derived.install = install;
  return derived;
}
