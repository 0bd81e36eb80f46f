// What a resource definition is: the type, how it is named and shown, its default namespace, the
// process that owns it and how its spec travels. One file per type in this directory holds one
// definition (as Talos keeps one per file in pkg/machinery/resources/<group>/); registry.ts lists
// them all. The definitions are data and small pure functions, with no dependencies beyond
// src/lib/ip.ts: bronzectl's quick front (completion) reads them.
//
// Names follow COSI (cosi-project/runtime, pkg/resource/meta/spec): a type is
// '<Plural>.<group>' ('LinkStatuses.net.talos.dev'); its automatic aliases are the lowercase
// display type, the initials ('ls'), the plural and the plural with leading parts of the group
// ('linkstatuses.net', 'linkstatuses.net.talos'), unless the definition skips them. A Talos
// client matches what a user types against the lowercase type and these aliases.

import type { FieldRules } from './codec.ts';
import { parseJsonPath } from './columns.ts';

/** The process that writes a type: machined itself, or the daemon that observes it. */
export type OwnerRole = 'machined' | 'networkd' | 'timed' | 'udevd';

export interface PrintColumn {
  /** Column header, e.g. 'Health Unknown'. */
  name: string;
  /** kubectl-style JSONPath over the YAML form of the spec, e.g. '{.status.ready}'. */
  jsonPath: string;
}

/**
 * How a spec is encoded as proto_spec: a message of the compiled protos, filled field by field
 * by codec.ts's naming rule, with `fields` for the exceptions.
 */
export interface ProtoCodec<S> {
  /** Full name, e.g. 'talos.resource.definitions.network.LinkStatusSpec'. */
  message: string;
  /** The fields that do not take the spec's value of their own name as it is (codec.ts). */
  fields?: FieldRules;
  /** Spec keys the message has no field for: they travel in yaml_spec only (a test holds every other key to a field). */
  yamlOnly?: readonly string[];
  /**
   * Only for a spec that is not its message field by field (a MachineConfig's text): the message
   * as protobufjs's fromObject takes it, from the spec and from the value its yaml_spec shows.
   */
  encode?(spec: S, yamlValue: unknown): object;
}

/**
 * What yaml_spec shows when it is not the spec itself:
 * - 'config-text': the machine configuration's text as one YAML string, as Talos sends
 *   MachineConfigs (the spec in the State is the parsed { v1alpha1, documents }).
 */
export type YamlForm = 'config-text';

export interface ResourceDefinition<S = any> {
  /** '<Plural>.<group>', e.g. 'Services.v1alpha1.talos.dev'. */
  type: string;
  /** Singular of the plural, e.g. 'Service'. */
  displayType: string;
  /** The aliases written out in the definition; the automatic ones are added (see allAliases). */
  aliases: string[];
  /** COSI's SkipAutomaticAliases: only `aliases` name the type. */
  skipAutomaticAliases?: boolean;
  defaultNamespace: string;
  printColumns: PrintColumn[];
  /** COSI's sensitivity: the spec holds secrets and is shown only to os:admin. */
  sensitivity?: 'sensitive';
  /** Who writes resources of this type. */
  owner: OwnerRole;
  /** Annotations every resource of the type carries on the wire (Talos marks some specs). */
  annotations?: Record<string, string>;
  proto?: ProtoCodec<S>;
  yamlForm?: YamlForm;
}

/** A definition as published (ResourceDefinitions.meta.cosi.dev's spec, COSI's YAML keys). */
export interface ResourceDefinitionSpec {
  type: string;
  displayType: string;
  defaultNamespace: string;
  aliases: string[];
  allAliases: string[];
  skipAutomaticAliases?: boolean;
  printColumns: PrintColumn[];
  sensitivity?: 'sensitive';
}

const NAME_RE = /^[A-Z][A-Za-z0-9-]+$/;
const SUFFIX_RE = /^[a-z][a-z0-9-]+(\.[a-z][a-z0-9-]+)*$/;

/** The published spec of a definition, its aliases filled as COSI's ResourceDefinitionSpec.Fill does. */
export function definitionSpec(def: ResourceDefinition): ResourceDefinitionSpec {
  const [plural, ...suffix] = def.type.split('.');
  const aliases = [...def.aliases];
  const allAliases: string[] = [];
  if (!def.skipAutomaticAliases) {
    aliases.push(def.displayType.toLowerCase());
    allAliases.push(plural!.toLowerCase());
    for (let i = 1; i < suffix.length; i++) allAliases.push([plural!.toLowerCase(), ...suffix.slice(0, i)].join('.'));
    const upper = [...plural!].filter((c) => c >= 'A' && c <= 'Z').join('');
    if (upper.length > 1) {
      aliases.push(upper.toLowerCase());
      if (!upper.endsWith('S')) aliases.push(`${upper.toLowerCase()}s`);
    }
  }
  allAliases.push(...aliases);
  const spec: ResourceDefinitionSpec = {
    type: def.type,
    displayType: def.displayType,
    defaultNamespace: def.defaultNamespace,
    aliases,
    allAliases,
    printColumns: def.printColumns.map((c) => ({ ...c })),
  };
  if (def.skipAutomaticAliases) spec.skipAutomaticAliases = true;
  if (def.sensitivity) spec.sensitivity = def.sensitivity;
  return spec;
}

/** Throws naming what is wrong with a definition. */
export function validateDefinition(def: ResourceDefinition): void {
  const where = `resource definition ${JSON.stringify(def.type)}`;
  const dot = typeof def.type === 'string' ? def.type.indexOf('.') : -1;
  if (dot < 0) throw new Error(`${where}: type must look like "Plurals.group.dev"`);
  const plural = def.type.slice(0, dot);
  if (!NAME_RE.test(plural) || plural.toLowerCase() === plural) throw new Error(`${where}: "${plural}" must be a CamelCase plural`);
  if (!SUFFIX_RE.test(def.type.slice(dot + 1))) throw new Error(`${where}: group must be lowercase words joined by dots`);
  if (!/^[A-Z][A-Za-z0-9]*$/.test(def.displayType) || !plural.startsWith(def.displayType.slice(0, -2))) {
    throw new Error(`${where}: displayType must be the singular of ${plural}`);
  }
  if (!def.defaultNamespace) throw new Error(`${where}: defaultNamespace is empty`);
  if (!['machined', 'networkd', 'timed', 'udevd'].includes(def.owner)) throw new Error(`${where}: unknown owner ${JSON.stringify(def.owner)}`);
  for (const alias of def.aliases) {
    if (!/^[a-z][a-z0-9.-]*$/.test(alias)) throw new Error(`${where}: bad alias ${JSON.stringify(alias)}`);
  }
  if (def.sensitivity !== undefined && def.sensitivity !== 'sensitive') throw new Error(`${where}: unknown sensitivity ${JSON.stringify(def.sensitivity)}`);
  for (const col of def.printColumns) {
    if (!col.name) throw new Error(`${where}: print column without a name`);
    try {
      parseJsonPath(col.jsonPath);
    } catch (err) {
      throw new Error(`${where}: column ${col.name}: ${(err as Error).message}`);
    }
  }
}
