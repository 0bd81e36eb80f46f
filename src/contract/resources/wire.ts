// A spec on COSI's wire (cosi.resource.Spec): yaml_spec, the YAML form Talos shows, and
// proto_spec, the spec encoded with its definition's message from the compiled protos. machined
// sends both; whoever reads a resource back (a daemon's RemotePublisher, bronzectl) reads the YAML.
import type protobuf from 'protobufjs/light.js';
import YAML from 'yaml';
import { protoRoot } from '../protos.ts';
import type { ResourceDefinition } from './definition.ts';
import type { MachineConfigSpec } from './machine-config.ts';
import { machineConfigSpec, machineConfigText } from './machine-config-text.ts';

const types = new Map<string, protobuf.Type>();

function messageType(name: string): protobuf.Type {
  let t = types.get(name);
  if (!t) {
    t = protoRoot().lookupType(name);
    types.set(name, t);
  }
  return t;
}

/** The value yaml_spec shows for a spec. */
function yamlValue(def: ResourceDefinition | undefined, spec: unknown): unknown {
  if (def?.yamlForm === 'config-text') return machineConfigText(spec as MachineConfigSpec);
  return spec ?? null;
}

/** The YAML text of a spec. */
export function yamlSpec(def: ResourceDefinition | undefined, spec: unknown): string {
  return YAML.stringify(yamlValue(def, spec));
}

/**
 * The message without the fields that hold their default (false, 0, '', empty lists and bytes),
 * so it encodes as Go's protobuf does: proto3 leaves such fields out, protobufjs would write
 * them. Nested messages are kept (their presence is what they say) and pruned within.
 */
function withoutDefaults(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutDefaults);
  if (value === null || typeof value !== 'object' || Buffer.isBuffer(value)) return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    if (v === undefined || v === null || v === false || v === 0 || v === '' || v === '0') continue;
    if ((Array.isArray(v) || Buffer.isBuffer(v)) && v.length === 0) continue;
    out[k] = withoutDefaults(v);
  }
  return out;
}

/** The proto_spec bytes of a spec: empty for a type without a message. Throws naming the type when the spec does not fit it. */
export function protoSpec(def: ResourceDefinition | undefined, spec: unknown): Buffer {
  if (!def?.proto) return Buffer.alloc(0);
  const t = messageType(def.proto.message);
  try {
    const msg = t.fromObject(withoutDefaults(def.proto.encode(spec, yamlValue(def, spec))) as Record<string, unknown>);
    const err = t.verify(msg);
    if (err) throw new Error(err);
    return Buffer.from(t.encode(msg).finish());
  } catch (err) {
    throw new Error(`encoding a ${def.type} spec as ${def.proto.message}: ${(err as Error).message}`);
  }
}

/** The spec from yaml_spec text ('' for none: null). */
export function specFromYaml(def: ResourceDefinition | undefined, text: string): unknown {
  if (!text) return null;
  const value = YAML.parse(text) as unknown;
  if (def?.yamlForm === 'config-text' && typeof value === 'string') return machineConfigSpec(value);
  return value;
}
