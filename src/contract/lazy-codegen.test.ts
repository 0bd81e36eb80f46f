// lazyCodegen against protobufjs's own setup: each function made on first use only, and every
// one the same as the one protobufjs generates (same bytes, same objects), the well-known types'
// wrappers (google.protobuf.Any) included.
import protobuf from 'protobufjs/light.js';
import { describe, expect, it, vi } from 'vitest';
import { codecs } from 'bronze:protos';
import { buildTimeCodecTypes, codecSources, compileProtos } from '../../image-builder/protos.ts';
import { GENERATED, protobufGenerateConstructor } from './lazy-codegen.ts';
import { messageType, protoRoot } from './protos.ts';

const own = (t: protobuf.Type) => GENERATED.filter((n) => Object.hasOwn(t, n));

describe('lazyCodegen', () => {
  it('generates only the functions a type is asked for, each once', () => {
    const t = messageType('machine.ServiceInfo');
    expect(own(t)).toEqual([]);
    const bytes = t.encode(t.fromObject({ id: 'apid', state: 'Running' })).finish();
    expect(own(t).sort()).toEqual(['encode', 'fromObject']);
    const encode = t.encode;
    t.encode(t.fromObject({ id: 'x' }));
    expect(t.encode).toBe(encode);
    // The nested type's encode was made by the parent's; not its decode.
    const events = messageType('machine.ServiceEvents');
    expect(own(events)).not.toContain('decode');
    expect(t.toObject(t.decode(bytes))).toEqual({ id: 'apid', state: 'Running' });
    expect(own(t).sort()).toEqual(['decode', 'encode', 'fromObject', 'toObject']);
  });

  it('makes what protobufjs makes: the same bytes and objects', () => {
    const root = protoRoot();
    const value = {
      metadata: { hostname: 'n1', error: '' },
      services: [{ id: 'apid', state: 'Running', events: { events: [{ msg: 'ok', state: 'Running', ts: { seconds: '1700000000', nanos: 5 } }] }, health: { healthy: true, last_message: 'fine' } }],
    };
    const t = root.lookupType('machine.ServiceList');
    const util = protobuf.util;
    const types = t.fieldsArray.map((f) => f.resolve().resolvedType);
    // protobufjs's own generators, as its setup calls them (not through the patched prototype),
    // called on the type as its methods are (fromObject reads this.ctor).
    const fromObject = protobuf.converter.fromObject(t)({ types, util }) as (o: object) => protobuf.Message;
    const encode = protobuf.encoder(t)({ Writer: protobuf.Writer, types, util }) as (m: object) => protobuf.Writer;
    const decode = protobuf.decoder(t)({ Reader: protobuf.Reader, types, util }) as (r: Uint8Array) => protobuf.Message;
    const toObject = protobuf.converter.toObject(t)({ types, util }) as (m: object, o: object) => object;
    const verify = protobuf.verifier(t)({ types, util }) as (m: object) => string | null;
    const bytes = t.encode(t.fromObject(value)).finish();
    expect(Buffer.from(bytes)).toEqual(Buffer.from(encode.call(t, fromObject.call(t, value)).finish()));
    const opts = { longs: String, enums: String, defaults: true };
    expect(t.toObject(t.decode(bytes), opts)).toEqual(toObject.call(t, decode.call(t, bytes), opts));
    expect(t.verify({ services: 'no' })).toBe(verify.call(t, { services: 'no' }));
    expect(t.verify(t.fromObject(value))).toBeNull();
  });

  it('keeps the wrapper of google.protobuf.Any (a type URL and its message)', () => {
    const root = protoRoot();
    const any = root.lookupType('google.protobuf.Any');
    const version = root.lookupType('machine.Version');
    const packed = any.fromObject({ '@type': 'type.googleapis.com/machine.Version', version: { tag: 'v1' } });
    const back = any.toObject(any.decode(any.encode(packed).finish()), { json: true }) as Record<string, unknown>;
    expect(back['@type']).toBe('type.googleapis.com/machine.Version');
    expect(version).toBeDefined();
  });

  it('makes message constructors as protobufjs does, without generating code', () => {
    // Map, repeated and plain fields, interleaved: the order of the new object's own keys counts.
    const t = protobuf.Type.fromJSON('Mixed', {
      fields: {
        a: { id: 1, type: 'string' },
        tags: { id: 2, type: 'string', rule: 'repeated' },
        labels: { id: 3, keyType: 'string', type: 'string' },
        b: { id: 4, type: 'int32' },
        more: { id: 5, type: 'int32', rule: 'repeated' },
      },
    } as protobuf.IType);
    new protobuf.Root().add(t);
    const ours = t.ctor as unknown as new (p?: object) => object;
    const theirs = protobufGenerateConstructor!(t)() as new (p?: object) => object;
    expect(String(ours)).not.toContain('this.tags');
    expect(ours.name).toBe(theirs.name);
    const given = JSON.parse('{"a":"x","b":null,"c":1,"tags":["t"],"__proto__":{"polluted":true}}') as object;
    for (const p of [undefined, {}, given, { more: undefined, a: 'y' }]) {
      const x = new ours(p);
      const y = new theirs(p);
      expect(Object.keys(x)).toEqual(Object.keys(y));
      expect({ ...x }).toEqual({ ...y });
      expect((x as { polluted?: boolean }).polluted).toBeUndefined();
    }
    // Each instance gets its own map and array.
    expect((new ours() as { tags: string[] }).tags).not.toBe((new ours() as { tags: string[] }).tags);
    // And messages made through it still encode and decode.
    const m = t.fromObject({ a: 'x', tags: ['1', '2'], labels: { k: 'v' }, b: 3 });
    expect(t.toObject(t.decode(t.encode(m).finish()))).toEqual({ a: 'x', tags: ['1', '2'], labels: { k: 'v' }, b: 3 });
  });

  it('still makes all five on an explicit setup()', () => {
    const t = protoRoot().lookupType('machine.LoadAvg');
    t.setup();
    expect(own(t).sort()).toEqual([...GENERATED].sort());
  });

  describe('functions written at build time', () => {
    const names = buildTimeCodecTypes(compileProtos());

    it('are the messages every boot exchanges, and only those', () => {
      expect(Object.keys(codecs).sort()).toEqual([...names].sort());
      for (const n of ['cosi.resource.Metadata', 'cosi.resource.WatchResponse', 'grpc.health.v1.HealthCheckResponse', 'machine.VersionResponse', 'cosi.resource.meta.ResourceDefinitionSpec.PrintColumn', 'google.protobuf.Timestamp']) expect(names).toContain(n);
      expect(names).not.toContain('machine.ServiceList');
    });

    it('are what protobufjs generates for the types a process builds at run time', () => {
      // They are written from the root of every proto; a process builds its types in the root
      // of only what it asked for (protos.ts). protobufjs must generate the same code from both.
      const whole = protobuf.Root.fromJSON(compileProtos());
      whole.resolveAll();
      for (const n of names) {
        const atBuild = codecSources(whole.lookupType(n) as never);
        const atRun = codecSources(messageType(n) as never);
        for (const f of GENERATED) expect(atRun[f], `${n} ${f}`).toBe(atBuild[f]);
      }
    });

    it('are used instead of generated code, and encode and decode as protobufjs does', () => {
      const encoder = vi.spyOn(protobuf, 'encoder');
      const decoder = vi.spyOn(protobuf, 'decoder');
      try {
        const t = messageType('cosi.resource.Resource');
        const value = {
          metadata: { namespace: 'network', type: 'LinkStatuses.net.talos.dev', id: 'eth0', version: '3', owner: 'networkd', phase: 'running', created: { seconds: '1700000000', nanos: 7 }, labels: { a: 'b' }, finalizers: ['f'] },
          spec: { yaml_spec: 'kind: ether\n', proto_spec: Buffer.from([1, 2]) },
        };
        const bytes = t.encode(t.fromObject(value)).finish();
        const opts = { longs: String, enums: String, defaults: true, oneofs: true };
        const back = t.toObject(t.decode(bytes), opts);
        expect(encoder).not.toHaveBeenCalled();
        expect(decoder).not.toHaveBeenCalled();
        // protobufjs's own functions for the same type give the same bytes and object.
        const util = protobuf.util;
        const types = t.fieldsArray.map((f) => f.resolve().resolvedType);
        const encode = protobuf.encoder(t)({ Writer: protobuf.Writer, types, util }) as (m: object) => protobuf.Writer;
        const fromObject = protobuf.converter.fromObject(t)({ types, util }) as (o: object) => protobuf.Message;
        const decode = protobuf.decoder(t)({ Reader: protobuf.Reader, types, util }) as (r: Uint8Array) => protobuf.Message;
        const toObject = protobuf.converter.toObject(t)({ types, util }) as (m: object, o: object) => object;
        expect(Buffer.from(bytes)).toEqual(Buffer.from(encode.call(t, fromObject.call(t, value)).finish()));
        expect(back).toEqual(toObject.call(t, decode.call(t, bytes), opts));
        expect((back as { metadata: { labels: object } }).metadata.labels).toEqual({ a: 'b' });
      } finally {
        encoder.mockRestore();
        decoder.mockRestore();
      }
    });
  });
});
