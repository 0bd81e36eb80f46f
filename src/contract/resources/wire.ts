// A spec on COSI's wire (cosi.resource.Spec): yaml_spec, the YAML form Talos shows, and
// proto_spec, the spec encoded with its definition's message from the compiled protos. machined
// sends both; whoever reads a resource back (a daemon's RemoteState, bronzectl) reads the YAML.
import type protobuf from 'protobufjs/light.js';
import YAML from 'yaml';
import { messageType } from '../protos.ts';
import { encodeMessage } from './codec.ts';
import type { ResourceDefinition } from './definition.ts';
import type { MachineConfigDocuments } from './machine-config.ts';
import { machineConfigDocuments, machineConfigText } from './machine-config-text.ts';

/** The value yaml_spec shows for a spec. */
function yamlValue(def: ResourceDefinition | undefined, spec: unknown): unknown {
  if (def?.yamlForm === 'config-text') return machineConfigText(spec as MachineConfigDocuments);
  return spec ?? null;
}

/** The YAML text of a spec. */
export function yamlSpec(def: ResourceDefinition | undefined, spec: unknown): string {
  return YAML.stringify(yamlValue(def, spec));
}

/**
 * The yaml_spec text machined and the node's own daemons exchange: the same value as JSON, which
 * is YAML too (YAML 1.2 reads every JSON text as the same value), so any COSI client still reads
 * it. JSON.stringify and JSON.parse are native, where the YAML library is JavaScript: under
 * QEMU/TCG the YAML of a boot's publications and watch events was a visible part of networkd's
 * and machined's CPU profiles. API callers (through apid) get YAML, as Talos's show.
 */
export function jsonSpec(def: ResourceDefinition | undefined, spec: unknown): string {
  return JSON.stringify(yamlValue(def, spec)) ?? 'null';
}

/** A yaml_spec text's value: JSON.parse for what jsonSpec writes, the YAML parser for the rest. */
function parseSpecText(text: string): unknown {
  const first = text[0];
  if (first === '{' || first === '[' || first === '"') {
    try {
      return JSON.parse(text) as unknown;
    } catch {
      // YAML that only starts like JSON (a flow mapping such as `{a: 1}`): the YAML parser reads it.
    }
  }
  return YAML.parse(text) as unknown;
}

const INT64 = new Set(['int64', 'uint64', 'sint64', 'fixed64', 'sfixed64']);

/**
 * Clears the fields of a message (and of those it holds) that hold their default (false, 0,
 * '', empty lists and bytes, enum 0), so it encodes as Go's protobuf does: proto3 leaves such
 * fields out, protobufjs would write them. Message fields stay: their presence says something.
 */
function clearDefaults(t: protobuf.Type, msg: Record<string, unknown>): void {
  for (const f of t.fieldsArray) {
    const v = msg[f.name];
    if (v === undefined || v === null) continue;
    const isMessage = f.resolvedType instanceof Object && 'fieldsArray' in f.resolvedType;
    if (f.map) {
      if (Object.keys(v as object).length === 0) delete msg[f.name];
      else if (isMessage) for (const e of Object.values(v as object)) clearDefaults(f.resolvedType as protobuf.Type, e as Record<string, unknown>);
    } else if (f.repeated) {
      if ((v as unknown[]).length === 0) delete msg[f.name];
      else if (isMessage) for (const e of v as unknown[]) clearDefaults(f.resolvedType as protobuf.Type, e as Record<string, unknown>);
    } else if (isMessage) {
      clearDefaults(f.resolvedType as protobuf.Type, v as Record<string, unknown>);
    } else if (!f.options?.proto3_optional && (v === false || v === 0 || v === '' || (v instanceof Uint8Array && v.length === 0) || (INT64.has(f.type) && String(v) === '0'))) {
      // A proto3 `optional` field keeps its zero value: its presence is the point (ContainerStatus's healthy: false).
      delete msg[f.name];
    }
  }
}

/** The proto_spec bytes of a spec: empty for a type without a message. Throws naming the type when the spec does not fit it. */
export function protoSpec(def: ResourceDefinition | undefined, spec: unknown): Buffer {
  if (!def?.proto) return Buffer.alloc(0);
  const t = messageType(def.proto.message);
  try {
    const fields = def.proto.encode ? def.proto.encode(spec, yamlValue(def, spec)) : encodeMessage(t, def.proto.fields ?? {}, spec as Record<string, unknown>);
    const msg = t.fromObject(fields as Record<string, unknown>);
    clearDefaults(t, msg as unknown as Record<string, unknown>);
    const err = t.verify(msg);
    if (err) throw new Error(err);
    return Buffer.from(t.encode(msg).finish());
  } catch (err) {
    throw new Error(`encoding a ${def.type} spec as ${def.proto.message}: ${(err as Error).message}`);
  }
}

/** The spec from yaml_spec text ('' for none: null); a MachineConfig's is its MachineConfigDocuments. */
export function specFromYaml(def: ResourceDefinition | undefined, text: string): unknown {
  if (!text) return null;
  const value = parseSpecText(text);
  if (def?.yamlForm === 'config-text' && typeof value === 'string') return machineConfigDocuments(value);
  return value;
}
