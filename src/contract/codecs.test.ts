import protobuf from 'protobufjs/light.js';
import codecs from 'bronze:protos-codecs';
import descriptor from 'bronze:protos';
import { describe, expect, it } from 'vitest';
import { codecStats, useCompiledCodecs } from './codecs.ts';
import { fieldSignature } from './field-signature.ts';

function everyType(root: protobuf.NamespaceBase, out: protobuf.Type[] = []): protobuf.Type[] {
  for (const child of root.nestedArray) {
    if (child instanceof protobuf.Type) out.push(child);
    if (child instanceof protobuf.Namespace) everyType(child, out);
  }
  return out;
}

function freshRoot(json: protobuf.INamespace = descriptor as protobuf.INamespace): protobuf.Root {
  const root = protobuf.Root.fromJSON(json);
  root.resolveAll();
  return root;
}

/** A function's source without whitespace or semicolons: the bundler and vitest reformat the module. */
const source = (f: unknown) => String(f).replace(/[\s;]/g, '');
const typesOf = (t: protobuf.Type) => t.fieldsArray.map((f) => f.resolve().resolvedType);
const CONVERSION = { longs: String, enums: String, defaults: true, oneofs: true };

describe('message codecs compiled at build time', () => {
  it('hold, for every message type, the very source protobufjs generates at run time', () => {
    const types = everyType(freshRoot());
    expect(types.length).toBeGreaterThan(200);
    expect(Object.keys(codecs).sort()).toEqual(types.map((t) => t.fullName.slice(1)).sort());
    const util = protobuf.util;
    for (const t of types) {
      const [sig, ctor, encode, decode, fromObject, toObject] = codecs[t.fullName.slice(1)]!;
      expect(sig, t.fullName).toBe(fieldSignature(t));
      const scope = typesOf(t);
      // A function's toString is its source text: the prebuilt one and what codegen makes now.
      expect(source(ctor()), t.fullName).toBe(source(protobuf.Type.generateConstructor(t)()));
      expect(source(encode(protobuf.Writer, scope, util)), t.fullName).toBe(source(protobuf.encoder(t)({ Writer: protobuf.Writer, types: scope, util })));
      expect(source(decode(protobuf.Reader, scope, util)), t.fullName).toBe(source(protobuf.decoder(t)({ Reader: protobuf.Reader, types: scope, util })));
      expect(source(fromObject(scope, util)), t.fullName).toBe(source(protobuf.converter.fromObject(t)({ types: scope, util })));
      expect(source(toObject(scope, util)), t.fullName).toBe(source(protobuf.converter.toObject(t)({ types: scope, util })));
    }
  });

  it('once installed, encode and decode as protobufjs does, and fall back to its codegen for a type they do not match', () => {
    // Reference bytes, made before the codecs are installed, by protobufjs's own codegen.
    const message = {
      messages: [{ metadata: { hostname: 'node-1' }, version: { tag: 'v1.2.3', sha: 'abc', built: 'now', go_version: 'node', os: 'linux', arch: 'amd64' }, platform: { name: 'metal', mode: 'metal' }, features: { rbac: true } }],
    };
    const refType = freshRoot().lookupType('machine.VersionResponse');
    const refBytes = Buffer.from(refType.encode(refType.fromObject(message)).finish());
    const refObject = refType.toObject(refType.decode(refBytes), CONVERSION);

    useCompiledCodecs(codecs);
    const before = { ...codecStats };
    const type = freshRoot().lookupType('machine.VersionResponse');
    const bytes = Buffer.from(type.encode(type.fromObject(message)).finish());
    expect(bytes.equals(refBytes)).toBe(true);
    expect(type.toObject(type.decode(bytes), CONVERSION)).toEqual(refObject);
    expect(codecStats.prebuilt).toBeGreaterThan(before.prebuilt);
    expect(codecStats.generatedNames).toEqual([]);
    expect(codecStats.generated).toBe(before.generated);
    // decode makes messages through the type's constructor: the prebuilt one, a real Message.
    expect(type.decode(bytes)).toBeInstanceOf(type.ctor);
    expect(type.ctor.name).toBe('VersionResponse');

    // A type of the same name with other fields is not what the table was made from.
    const other = freshRoot({ nested: { machine: { nested: { VersionResponse: { fields: { x: { type: 'string', id: 7 } } } } } } }).lookupType('machine.VersionResponse');
    // (fromObject first: in `encode(fromObject())`, encode is looked up before fromObject sets the type up.)
    const otherMessage = other.fromObject({ x: 'y' });
    const otherBytes = Buffer.from(other.encode(otherMessage).finish());
    expect(otherBytes.equals(Buffer.from([0x3a, 0x01, 0x79]))).toBe(true);
    expect(other.toObject(other.decode(otherBytes))).toEqual({ x: 'y' });
    expect(codecStats.generatedNames).toEqual(['.machine.VersionResponse']);
    expect(codecStats.generated).toBe(before.generated + 1);
  });

  it('keep protobufjs\'s wrapper for google.protobuf.Any', () => {
    useCompiledCodecs(codecs);
    const root = freshRoot();
    const any = root.lookupType('google.protobuf.Any');
    const packed = any.fromObject({ '@type': 'type.googleapis.com/machine.VersionInfo', tag: 'v1' });
    expect((packed as unknown as { type_url: string }).type_url).toBe('type.googleapis.com/machine.VersionInfo');
    expect(any.toObject(packed, { json: true })).toMatchObject({ '@type': 'type.googleapis.com/machine.VersionInfo', tag: 'v1' });
  });
});
