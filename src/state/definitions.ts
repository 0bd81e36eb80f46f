// Resource definitions: the resource types Bronze knows, as data (part of the contract layer).
//
// A definition names a type ('Services.bronze.dev': plural, then a domain), how it is shown
// ('Service'), the names a user may type for it (resolved as `talosctl get svc` is: case
// insensitive over the type, its plural, the display type and the aliases), its default
// namespace and the columns `bronzectl get` prints (kubectl-style JSONPath over the spec).
//
// Definitions are registered explicitly (registerDefinitions) and published into the State as
// resources of type ResourceDefinitions.meta.cosi.dev in namespace 'meta', as COSI does, so the
// API can list them.

import { type Resource, jsonEqual, newResource } from './resource.ts';
import type { State } from './state.ts';

export interface PrintColumn {
  /** Column header, e.g. 'Health Unknown'. */
  name: string;
  /** Over the spec, e.g. '{.running}' or '{.status.ready}'. */
  jsonPath: string;
}

export interface ResourceDefinition {
  /** '<Plural>.<domain>', e.g. 'Services.bronze.dev'. */
  type: string;
  /** Singular, e.g. 'Service'. */
  displayType: string;
  /** Extra names (the lowercase type, plural and display type are implied). */
  aliases: string[];
  defaultNamespace: string;
  printColumns: PrintColumn[];
  /** The spec holds secrets: the API shows it only to admins. */
  sensitive?: boolean;
}

/** The spec of a published ResourceDefinitions.meta.cosi.dev resource. */
export interface ResourceDefinitionSpec extends Omit<ResourceDefinition, 'sensitive'> {
  /** Every name resolve() accepts for this type, lowercase. */
  allAliases: string[];
  sensitive: boolean;
}

export const META_NAMESPACE = 'meta';
export const RESOURCE_DEFINITION_TYPE = 'ResourceDefinitions.meta.cosi.dev';

// ---------------------------------------------------------------------------------------------
// The definitions.

/** Intrinsic: every registry has it, since the definitions themselves are published. */
export const resourceDefinitionsDefinition: ResourceDefinition = {
  type: RESOURCE_DEFINITION_TYPE,
  displayType: 'ResourceDefinition',
  aliases: ['rd', 'rds'],
  defaultNamespace: META_NAMESPACE,
  printColumns: [],
};

/** Spec: { running: boolean, healthy: boolean, unknown: boolean } (health not known yet). */
export const servicesDefinition: ResourceDefinition = {
  type: 'Services.bronze.dev',
  displayType: 'Service',
  aliases: ['svc'],
  defaultNamespace: 'runtime',
  printColumns: [
    { name: 'Running', jsonPath: '{.running}' },
    { name: 'Healthy', jsonPath: '{.healthy}' },
    { name: 'Health Unknown', jsonPath: '{.unknown}' },
  ],
};

/** Spec: { stage: string, status: { ready: boolean, unmetConditions: [{ name, reason }] } }. */
export const machineStatusDefinition: ResourceDefinition = {
  type: 'MachineStatuses.bronze.dev',
  displayType: 'MachineStatus',
  aliases: ['ms'],
  defaultNamespace: 'runtime',
  printColumns: [
    { name: 'Stage', jsonPath: '{.stage}' },
    { name: 'Ready', jsonPath: '{.status.ready}' },
  ],
};

/** Spec: { hostname: string, domainname: string }. */
export const hostnameStatusDefinition: ResourceDefinition = {
  type: 'HostnameStatuses.net.bronze.dev',
  displayType: 'HostnameStatus',
  aliases: ['hostname', 'hostnames'],
  defaultNamespace: 'network',
  printColumns: [
    { name: 'Hostname', jsonPath: '{.hostname}' },
    { name: 'Domainname', jsonPath: '{.domainname}' },
  ],
};

/** What Bronze registers today (machined passes it to registerDefinitions). */
/**
 * Spec: { installed, disk?, booted: 'A'|'B'|'', version, default?: slot GRUB boots,
 * next?: slot tried once next boot, slots?: { A|B: { present, version } },
 * upgrade?: { state: trying|committed|failed, from, to, version } }. Written by machined.
 */
export const bootStatusDefinition: ResourceDefinition = {
  type: 'BootStatuses.bronze.dev',
  displayType: 'BootStatus',
  aliases: ['boot', 'bootstatus'],
  defaultNamespace: 'runtime',
  printColumns: [
    { name: 'Booted', jsonPath: '{.booted}' },
    { name: 'Default', jsonPath: '{.default}' },
    { name: 'Next', jsonPath: '{.next}' },
    // Not "Version": the table has the resource's own VERSION column already.
    { name: 'Running Version', jsonPath: '{.version}' },
    { name: 'Last Change', jsonPath: '{.last}' },
  ],
};

export const bronzeDefinitions: readonly ResourceDefinition[] = [servicesDefinition, machineStatusDefinition, hostnameStatusDefinition, bootStatusDefinition];

// ---------------------------------------------------------------------------------------------
// The registry.

export class UnknownResourceTypeError extends Error {
  override name = 'UnknownResourceTypeError';
  constructor(
    readonly requested: string,
    /** Close matches, best first, as 'name (Type)'. */
    readonly candidates: string[],
  ) {
    super(
      `unknown resource type ${JSON.stringify(requested)}` +
        (candidates.length > 0 ? `; did you mean ${candidates.join(', ')}?` : ''),
    );
  }
}

const TYPE_RE = /^[A-Z][A-Za-z0-9]*(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)+$/;

export class DefinitionRegistry {
  readonly #byType = new Map<string, ResourceDefinition>();
  /** Lowercase name → type. */
  readonly #names = new Map<string, string>();

  constructor() {
    this.register(resourceDefinitionsDefinition);
  }

  /** Throws on an invalid definition or when one of its names is taken. */
  register(def: ResourceDefinition): void {
    validateDefinition(def);
    if (this.#byType.has(def.type)) throw new Error(`resource type ${def.type} is already registered`);
    const names = allAliases(def);
    for (const name of names) {
      const other = this.#names.get(name);
      if (other !== undefined) throw new Error(`resource type ${def.type}: name ${JSON.stringify(name)} is already used by ${other}`);
    }
    const copy = structuredClone(def);
    this.#byType.set(def.type, copy);
    for (const name of names) this.#names.set(name, def.type);
  }

  get(type: string): ResourceDefinition | undefined {
    const def = this.#byType.get(type);
    return def && structuredClone(def);
  }

  /** Sorted by type. */
  list(): ResourceDefinition[] {
    return [...this.#byType.keys()].sort().map((type) => structuredClone(this.#byType.get(type)!));
  }

  /** The definition a user means by a type, plural, display type or alias (any case). Throws
   *  UnknownResourceTypeError listing close candidates. */
  resolve(nameOrAlias: string): ResourceDefinition {
    const name = nameOrAlias.trim().toLowerCase();
    const type = this.#names.get(name);
    if (type !== undefined) return structuredClone(this.#byType.get(type)!);
    throw new UnknownResourceTypeError(nameOrAlias, this.#candidates(name));
  }

  #candidates(name: string): string[] {
    const scored: Array<{ name: string; type: string; score: number }> = [];
    for (const [known, type] of this.#names) {
      const d = editDistance(name, known);
      const near = d <= Math.max(2, Math.floor(known.length / 4));
      const prefix = name.length >= 2 && known.startsWith(name);
      if (near || prefix) scored.push({ name: known, type, score: prefix ? Math.min(d, 1) : d });
    }
    scored.sort((a, b) => a.score - b.score || a.name.length - b.name.length || (a.name < b.name ? -1 : 1));
    const seen = new Set<string>();
    const out: string[] = [];
    for (const s of scored) {
      if (seen.has(s.type)) continue;
      seen.add(s.type);
      out.push(`${s.name} (${s.type})`);
      if (out.length === 5) break;
    }
    return out;
  }
}

export function registerDefinitions(registry: DefinitionRegistry, defs: readonly ResourceDefinition[]): void {
  for (const def of defs) registry.register(def);
}

/** Every lowercase name that resolves to def: the type, its plural, the display type, the aliases. */
export function allAliases(def: ResourceDefinition): string[] {
  const plural = def.type.split('.')[0]!;
  return [...new Set([def.type, plural, def.displayType, ...def.aliases].map((n) => n.toLowerCase()))];
}

function validateDefinition(def: ResourceDefinition): void {
  const where = `resource definition ${JSON.stringify(def.type)}`;
  if (typeof def.type !== 'string' || !TYPE_RE.test(def.type)) {
    throw new Error(`${where}: type must look like "Plurals.domain.dev"`);
  }
  if (typeof def.displayType !== 'string' || !/^[A-Z][A-Za-z0-9]*$/.test(def.displayType)) {
    throw new Error(`${where}: displayType must be a CamelCase name`);
  }
  if (typeof def.defaultNamespace !== 'string' || def.defaultNamespace === '') throw new Error(`${where}: defaultNamespace is empty`);
  for (const alias of def.aliases) {
    if (typeof alias !== 'string' || !/^[A-Za-z][A-Za-z0-9.-]*$/.test(alias)) throw new Error(`${where}: bad alias ${JSON.stringify(alias)}`);
  }
  for (const col of def.printColumns) {
    if (typeof col.name !== 'string' || col.name === '') throw new Error(`${where}: print column without a name`);
    try {
      parseJsonPath(col.jsonPath);
    } catch (err) {
      throw new Error(`${where}: column ${col.name}: ${(err as Error).message}`);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Publishing into the State.

export function definitionSpec(def: ResourceDefinition): ResourceDefinitionSpec {
  return {
    type: def.type,
    displayType: def.displayType,
    aliases: [...def.aliases],
    allAliases: allAliases(def),
    defaultNamespace: def.defaultNamespace,
    printColumns: def.printColumns.map((c) => ({ ...c })),
    sensitive: def.sensitive ?? false,
  };
}

/**
 * Makes the ResourceDefinitions in namespace 'meta' match the registry (id: the lowercase
 * type): creates the missing, updates the changed, destroys those it published before and
 * that are no longer registered.
 */
export async function publishDefinitions(state: State, registry: DefinitionRegistry, owner = 'ResourceDefinitionController'): Promise<void> {
  const existing = new Map<string, Resource>();
  for (const r of await state.list(META_NAMESPACE, RESOURCE_DEFINITION_TYPE)) existing.set(r.metadata.id, r);
  const wanted = new Set<string>();
  for (const def of registry.list()) {
    const id = def.type.toLowerCase();
    wanted.add(id);
    const spec = definitionSpec(def);
    const cur = existing.get(id);
    if (!cur) await state.create(newResource(META_NAMESPACE, RESOURCE_DEFINITION_TYPE, id, spec), { owner });
    else if (!jsonEqual(cur.spec, spec)) await state.update({ ...cur, spec }, { owner, expectedVersion: cur.metadata.version });
  }
  for (const [id, r] of existing) {
    if (!wanted.has(id) && r.metadata.owner === owner) await state.destroy(META_NAMESPACE, RESOURCE_DEFINITION_TYPE, id, { owner });
  }
}

// ---------------------------------------------------------------------------------------------
// Print columns: the kubectl JSONPath subset definitions use: '{.a.b}', '{.list[0].x}',
// "{.map['some key']}", '{.}' (braces optional).

type Step = string | number;

export function parseJsonPath(path: string): Step[] {
  let p = path.trim();
  if (p.startsWith('{') && p.endsWith('}')) p = p.slice(1, -1).trim();
  if (!p.startsWith('.') && !p.startsWith('[')) throw new Error(`unsupported JSONPath ${JSON.stringify(path)}: must start with "."`);
  if (p === '.') return [];
  if (p.startsWith('.[')) p = p.slice(1);
  const steps: Step[] = [];
  const re = /\.([A-Za-z_][A-Za-z0-9_-]*)|\[(\d+)\]|\['([^']*)'\]|\["([^"]*)"\]/y;
  while (re.lastIndex < p.length) {
    const at = re.lastIndex;
    const m = re.exec(p);
    if (!m) throw new Error(`unsupported JSONPath ${JSON.stringify(path)} at ${JSON.stringify(p.slice(at))}`);
    steps.push(m[2] !== undefined ? Number(m[2]) : (m[1] ?? m[3] ?? m[4])!);
  }
  return steps;
}

/** The value at path in value, or undefined when any step is missing. */
export function evaluateJsonPath(value: unknown, path: string): unknown {
  let cur = value;
  for (const step of parseJsonPath(path)) {
    if (cur === null || typeof cur !== 'object') return undefined;
    if (typeof step === 'number') {
      if (!Array.isArray(cur)) return undefined;
      cur = cur[step];
    } else {
      if (Array.isArray(cur) || !Object.hasOwn(cur, step)) return undefined;
      cur = (cur as Record<string, unknown>)[step];
    }
  }
  return cur;
}

/** A column's cell text: strings as they are, other values as JSON, missing as ''. */
export function printColumnValue(spec: unknown, column: PrintColumn): string {
  const v = evaluateJsonPath(spec, column.jsonPath);
  if (v === undefined) return '';
  return typeof v === 'string' ? v : JSON.stringify(v);
}

function editDistance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      row[j] = Math.min(prev[j]! + 1, row[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    prev = row;
  }
  return prev[b.length]!;
}
