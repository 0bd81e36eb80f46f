// lazyCodegen against protobufjs's own setup: each function made on first use only, and every
// one the same as the one protobufjs generates (same bytes, same objects), the well-known types'
// wrappers (google.protobuf.Any) included.
import protobuf from 'protobufjs/light.js';
import { describe, expect, it } from 'vitest';
import { GENERATED } from './lazy-codegen.ts';
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

  it('still makes all five on an explicit setup()', () => {
    const t = protoRoot().lookupType('machine.LoadAvg');
    t.setup();
    expect(own(t).sort()).toEqual([...GENERATED].sort());
  });
});
