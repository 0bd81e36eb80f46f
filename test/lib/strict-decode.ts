// A strict protobuf check for the wire tests: walks encoded bytes against a message type and
// throws on a field number the type does not have or a wire type that does not match the
// field's (protobufjs itself skips unknown fields silently). Recurses into message fields and
// map entries; packed repeated scalars are accepted as Talos's Go encoder sends them.
import protobuf from 'protobufjs/light.js';

const WIRE_NAMES = ['varint', 'fixed64', 'length-delimited', 'start-group', 'end-group', 'fixed32'];

function wireOf(type: string): number {
  const basic = (protobuf.types.basic as Record<string, number | undefined>)[type];
  return basic ?? 2; // messages (and anything unresolved) are length-delimited
}

export function strictDecode(type: protobuf.Type, bytes: Uint8Array, where = type.fullName.replace(/^\./, '')): void {
  const r = protobuf.Reader.create(bytes);
  while (r.pos < r.len) {
    const tag = r.uint32();
    const id = tag >>> 3;
    const wire = tag & 7;
    const field = type.fieldsById[id];
    if (!field) throw new Error(`${where}: unknown field ${id} (${WIRE_NAMES[wire] ?? wire})`);
    field.resolve();
    const at = `${where}.${field.name}`;
    if (field.map) {
      if (wire !== 2) throw new Error(`${at}: map entry as ${WIRE_NAMES[wire]}, expected length-delimited`);
      const entry = protobuf.Reader.create(r.bytes());
      while (entry.pos < entry.len) {
        const t = entry.uint32();
        const k = t >>> 3;
        if (k === 1) {
          if ((t & 7) !== wireOf((field as unknown as protobuf.MapField).keyType)) throw new Error(`${at}: map key with wire type ${t & 7}`);
          entry.skipType(t & 7);
        } else if (k === 2) {
          const vt = field.resolvedType;
          if (vt instanceof protobuf.Type) {
            if ((t & 7) !== 2) throw new Error(`${at}: map value with wire type ${t & 7}`);
            strictDecode(vt, entry.bytes(), `${at}[]`);
          } else {
            const want = vt instanceof protobuf.Enum ? 0 : wireOf(field.type);
            if ((t & 7) !== want) throw new Error(`${at}: map value with wire type ${t & 7}, expected ${want}`);
            entry.skipType(t & 7);
          }
        } else throw new Error(`${at}: map entry has unknown field ${k}`);
      }
      continue;
    }
    const rt = field.resolvedType;
    if (rt instanceof protobuf.Type) {
      if (wire !== 2) throw new Error(`${at}: message as ${WIRE_NAMES[wire]}, expected length-delimited`);
      strictDecode(rt, r.bytes(), at);
      continue;
    }
    const want = rt instanceof protobuf.Enum ? 0 : wireOf(field.type);
    const packable = field.repeated && want !== 2;
    if (wire === want || (packable && wire === 2)) {
      r.skipType(wire);
      continue;
    }
    throw new Error(`${at}: ${WIRE_NAMES[wire] ?? wire}, expected ${WIRE_NAMES[want]}`);
  }
}
