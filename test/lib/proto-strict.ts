// A strict protobuf reader for the wire tests: decodes bytes against a message of the compiled
// protos (the project's copies of Talos's messages) and fails on what a lenient decoder would
// skip: a field number the message does not have, or a field sent with the wrong wire type.
// It returns the fields it read, by name, for the test to look at.
import type protobuf from 'protobufjs/light.js';
import { protoRoot } from '../../src/contract/protos.ts';

const VARINT = 0;
const I64 = 1;
const LEN = 2;
const I32 = 5;

const WIRE: Record<string, number> = {
  int32: VARINT, int64: VARINT, uint32: VARINT, uint64: VARINT, sint32: VARINT, sint64: VARINT, bool: VARINT,
  fixed64: I64, sfixed64: I64, double: I64,
  fixed32: I32, sfixed32: I32, float: I32,
  string: LEN, bytes: LEN,
};

export type Decoded = Record<string, unknown>;

class Reader {
  i = 0;
  constructor(readonly b: Uint8Array) {}
  varint(): bigint {
    let v = 0n;
    for (let shift = 0n; ; shift += 7n) {
      if (this.i >= this.b.length) throw new Error('truncated varint');
      const x = this.b[this.i++]!;
      v |= BigInt(x & 0x7f) << shift;
      if (!(x & 0x80)) return v;
      if (shift > 63n) throw new Error('varint too long');
    }
  }
  bytes(n: number): Uint8Array {
    if (this.i + n > this.b.length) throw new Error(`truncated: ${n} bytes at ${this.i} of ${this.b.length}`);
    const out = this.b.subarray(this.i, this.i + n);
    this.i += n;
    return out;
  }
}

/** Decodes `bytes` as message `name` (e.g. 'talos.resource.definitions.network.LinkStatusSpec'), strictly. */
export function strictDecode(name: string, bytes: Uint8Array): Decoded {
  const t = protoRoot().lookupType(name);
  t.resolveAll();
  return decodeMessage(t, bytes, name);
}

function decodeMessage(t: protobuf.Type, bytes: Uint8Array, where: string): Decoded {
  const r = new Reader(bytes);
  const out: Decoded = {};
  while (r.i < bytes.length) {
    const tag = Number(r.varint());
    const id = tag >>> 3;
    const wire = tag & 7;
    const f = t.fieldsById[id];
    if (!f) throw new Error(`${where}: unknown field ${id} (wire type ${wire})`);
    f.resolve();
    const at = `${where}.${f.name}`;
    const scalarWire = f.resolvedType && !(f.resolvedType as protobuf.Type).fieldsArray ? VARINT : WIRE[f.type];
    const isMessage = !!f.resolvedType && !!(f.resolvedType as protobuf.Type).fieldsArray;
    const push = (v: unknown) => {
      if (f.repeated) out[f.name] = [...((out[f.name] as unknown[] | undefined) ?? []), v];
      else out[f.name] = v;
    };
    if (f.map) {
      if (wire !== LEN) throw new Error(`${at}: map entry with wire type ${wire}`);
      const [k, v] = decodeMapEntry(f as unknown as protobuf.MapField, r.bytes(Number(r.varint())), at);
      out[f.name] = { ...((out[f.name] as Decoded | undefined) ?? {}), [String(k)]: v };
    } else if (isMessage) {
      if (wire !== LEN) throw new Error(`${at}: message with wire type ${wire}`);
      push(decodeMessage(f.resolvedType as protobuf.Type, r.bytes(Number(r.varint())), at));
    } else if (f.repeated && wire === LEN && scalarWire !== LEN) {
      // A packed repeated scalar.
      const inner = new Reader(r.bytes(Number(r.varint())));
      while (inner.i < inner.b.length) push(readScalar(inner, scalarWire!, f.type, at));
    } else {
      if (wire !== scalarWire) throw new Error(`${at}: ${f.type} with wire type ${wire}, want ${scalarWire}`);
      push(readScalar(r, wire, f.type, at));
    }
  }
  return out;
}

function decodeMapEntry(f: protobuf.MapField, bytes: Uint8Array, where: string): [unknown, unknown] {
  const r = new Reader(bytes);
  let key: unknown;
  let value: unknown;
  while (r.i < bytes.length) {
    const tag = Number(r.varint());
    const id = tag >>> 3;
    const wire = tag & 7;
    if (id === 1) {
      if (wire !== WIRE[f.keyType]) throw new Error(`${where}: map key with wire type ${wire}`);
      key = readScalar(r, wire, f.keyType, where);
    } else if (id === 2) {
      const vt = f.resolvedType as protobuf.Type | null;
      if (vt && vt.fieldsArray) {
        if (wire !== LEN) throw new Error(`${where}: map value with wire type ${wire}`);
        value = decodeMessage(vt, r.bytes(Number(r.varint())), `${where}[${String(key)}]`);
      } else {
        value = readScalar(r, wire, f.type, where);
      }
    } else throw new Error(`${where}: map entry field ${id}`);
  }
  return [key, value];
}

function readScalar(r: Reader, wire: number, type: string, where: string): unknown {
  switch (wire) {
    case VARINT: {
      const v = r.varint();
      return type === 'bool' ? v !== 0n : Number(BigInt.asIntN(64, v)) === Number(v) ? Number(v) : v;
    }
    case LEN: {
      const b = r.bytes(Number(r.varint()));
      return type === 'string' ? new TextDecoder('utf-8', { fatal: true }).decode(b) : Buffer.from(b);
    }
    case I64:
      return r.bytes(8);
    case I32:
      return r.bytes(4);
    default:
      throw new Error(`${where}: wire type ${wire}`);
  }
}
