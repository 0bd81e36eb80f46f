// Every resource type Bronze serves, in one list, and the one way to find a type by what a user
// types. machined registers and publishes them (as ResourceDefinitions.meta.cosi.dev), the API
// resolves requests with them, daemons may write only the types whose owner they are, and
// bronzectl's get and completion and the docs read them. Add a type by writing its file in this
// directory and listing it here.
import { addressStatusDefinition } from './address-status.ts';
import { blockDeviceDefinition } from './block-device.ts';
import { blockSymlinkDefinition } from './block-symlink.ts';
import { containerImageStatusDefinition } from './container-image-status.ts';
import { containerInstanceSpecDefinition } from './container-instance-spec.ts';
import { containerSpecDefinition } from './container-spec.ts';
import { containerStatusDefinition } from './container-status.ts';
import { bootStatusDefinition } from './boot-status.ts';
import { type OwnerRole, type ResourceDefinition, type ResourceDefinitionSpec, definitionSpec, validateDefinition } from './definition.ts';
import { discoveredVolumeDefinition } from './discovered-volume.ts';
import { volumeStatusDefinition } from './volume-status.ts';
import { diskDefinition } from './disk.ts';
import { hostnameStatusDefinition } from './hostname-status.ts';
import { kernelParamStatusDefinition } from './kernel-param-status.ts';
import { linkStatusDefinition } from './link-status.ts';
import { machineConfigDefinition } from './machine-config.ts';
import { machineStatusDefinition } from './machine-status.ts';
import { parsedMachineConfigDefinition } from './parsed-machine-config.ts';
import { memberDefinition } from './member.ts';
import { mountStatusDefinition } from './mount-status.ts';
import { namespaceDefinition } from './namespace.ts';
import { nodeAddressDefinition } from './node-address.ts';
import { resolverStatusDefinition } from './resolver-status.ts';
import { resourceDefinitionDefinition } from './resource-definition.ts';
import { rootfsStatusDefinition } from './rootfs-status.ts';
import { routeStatusDefinition } from './route-status.ts';
import { securityStateDefinition } from './security-state.ts';
import { serviceDefinition } from './service.ts';
import { timeServerStatusDefinition } from './time-server-status.ts';
import { timeStatusDefinition } from './time-status.ts';

/** Every type Bronze serves. */
export const RESOURCE_DEFINITIONS: readonly ResourceDefinition[] = [
  // meta (COSI)
  namespaceDefinition,
  resourceDefinitionDefinition,
  // config
  machineConfigDefinition,
  parsedMachineConfigDefinition,
  // runtime
  serviceDefinition,
  machineStatusDefinition,
  kernelParamStatusDefinition,
  mountStatusDefinition,
  securityStateDefinition,
  bootStatusDefinition,
  rootfsStatusDefinition,
  timeStatusDefinition,
  // block
  diskDefinition,
  blockDeviceDefinition,
  discoveredVolumeDefinition,
  volumeStatusDefinition,
  blockSymlinkDefinition,
  // network
  linkStatusDefinition,
  addressStatusDefinition,
  routeStatusDefinition,
  resolverStatusDefinition,
  hostnameStatusDefinition,
  timeServerStatusDefinition,
  nodeAddressDefinition,
  // cluster
  memberDefinition,
  // containers
  containerSpecDefinition,
  containerImageStatusDefinition,
  containerInstanceSpecDefinition,
  containerStatusDefinition,
];

/** gRPC metadata key in which a local daemon names itself when it writes resources. */
export const OWNER_METADATA_KEY = 'bronze-owner';

/** gRPC trailer in which machined's cosi.resource.State says which State error a call hit
 *  (JSON, src/state/error-detail.ts), so that a remote State throws the same class. */
export const STATE_ERROR_METADATA_KEY = 'bronze-state-error';

export class UnknownResourceTypeError extends Error {
  override name = 'UnknownResourceTypeError';
  constructor(
    readonly requested: string,
    /** Close matches, best first, as 'name (Type)'. */
    readonly candidates: string[],
  ) {
    super(`unknown resource type ${JSON.stringify(requested)}` + (candidates.length > 0 ? `; did you mean ${candidates.join(', ')}?` : ''));
  }
}

export class AmbiguousResourceTypeError extends Error {
  override name = 'AmbiguousResourceTypeError';
  constructor(
    readonly requested: string,
    readonly types: string[],
  ) {
    super(`resource type ${JSON.stringify(requested)} is ambiguous: ${types.map((t) => t.toLowerCase()).sort().join(', ')}`);
  }
}

/**
 * The published definition a user means, as a Talos client finds it: the name (any case) is the
 * type itself or one of its aliases (allAliases). Throws UnknownResourceTypeError (with close
 * candidates) or AmbiguousResourceTypeError.
 */
export function resolveDefinition<T extends Pick<ResourceDefinitionSpec, 'type' | 'allAliases'>>(name: string, specs: readonly T[]): T {
  const want = name.trim().toLowerCase();
  const matched = specs.filter((s) => s.type.toLowerCase() === want || s.allAliases.some((a) => a.toLowerCase() === want));
  if (matched.length === 1) return matched[0]!;
  if (matched.length > 1) throw new AmbiguousResourceTypeError(name, matched.map((s) => s.type));
  throw new UnknownResourceTypeError(name, candidates(want, specs));
}

function candidates(name: string, specs: ReadonlyArray<Pick<ResourceDefinitionSpec, 'type' | 'allAliases'>>): string[] {
  const scored: Array<{ name: string; type: string; score: number }> = [];
  for (const s of specs) {
    for (const known of [...new Set([s.type.toLowerCase(), ...s.allAliases.map((a) => a.toLowerCase())])]) {
      const d = editDistance(name, known);
      const near = d <= Math.max(2, Math.floor(known.length / 4));
      const prefix = name.length >= 2 && known.startsWith(name);
      if (near || prefix) scored.push({ name: known, type: s.type, score: prefix ? Math.min(d, 1) : d });
    }
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

function editDistance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) row[j] = Math.min(prev[j]! + 1, row[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    prev = row;
  }
  return prev[b.length]!;
}

/** The definitions a process serves: RESOURCE_DEFINITIONS, or others (tests). */
export class DefinitionRegistry {
  readonly #byType = new Map<string, ResourceDefinition>();
  readonly #specs = new Map<string, ResourceDefinitionSpec>();

  constructor(defs: readonly ResourceDefinition[] = RESOURCE_DEFINITIONS) {
    for (const def of defs) this.register(def);
  }

  /** Throws on an invalid definition or a type registered twice. */
  register(def: ResourceDefinition): void {
    validateDefinition(def);
    if (this.#byType.has(def.type)) throw new Error(`resource type ${def.type} is already registered`);
    this.#byType.set(def.type, def);
    this.#specs.set(def.type, definitionSpec(def));
  }

  get(type: string): ResourceDefinition | undefined {
    return this.#byType.get(type);
  }

  /** Sorted by type. */
  list(): ResourceDefinition[] {
    return [...this.#byType.keys()].sort().map((t) => this.#byType.get(t)!);
  }

  /** The published specs, sorted by type. */
  specs(): ResourceDefinitionSpec[] {
    return [...this.#specs.keys()].sort().map((t) => structuredClone(this.#specs.get(t)!));
  }

  /** The definition a user means by a name (see resolveDefinition). */
  resolve(name: string): ResourceDefinition {
    return this.#byType.get(resolveDefinition(name, [...this.#specs.values()]).type)!;
  }

  /** Whether `writer` (a daemon naming itself) may write resources of `type`: only the daemon
   *  that owns the type; nothing machined owns is writable from outside it. */
  mayWrite(writer: string, type: string): boolean {
    const owner = this.#byType.get(type)?.owner;
    return writer !== '' && writer !== 'machined' && owner === writer;
  }

  ownerOf(type: string): OwnerRole | undefined {
    return this.#byType.get(type)?.owner;
  }
}

/** Whether `writer` may write `type` among Bronze's own types (see DefinitionRegistry.mayWrite). */
export function mayWrite(writer: string, type: string): boolean {
  const owner = RESOURCE_DEFINITIONS.find((d) => d.type === type)?.owner;
  return writer !== '' && writer !== 'machined' && owner === writer;
}
