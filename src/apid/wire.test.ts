import { describe, expect, it } from 'vitest';
import { protoRoot } from '../contract/protos.ts';
import { errorEnvelope, errorMessage, stampEnvelope, stampMessage } from './wire.ts';

const root = protoRoot();
const VersionResponse = root.lookupType('machine.VersionResponse');
const Data = root.lookupType('common.Data');

const decode = (T: typeof VersionResponse, b: Uint8Array) => T.toObject(T.decode(b), { defaults: false, longs: String }) as Record<string, any>;

describe('wire-level stamping', () => {
  it('stamps every item of an envelope with the node metadata, keeping the payload', () => {
    const reply = VersionResponse.encode(
      VersionResponse.fromObject({ messages: [{ version: { tag: 'v1', os: 'linux' } }, { version: { tag: 'v2' } }] }),
    ).finish();
    const out = decode(VersionResponse, stampEnvelope(reply, { hostname: '10.5.0.2' }));
    expect(out.messages).toHaveLength(2);
    expect(out.messages[0].metadata.hostname).toBe('10.5.0.2');
    expect(out.messages[0].version).toEqual({ tag: 'v1', os: 'linux' });
    expect(out.messages[1].metadata.hostname).toBe('10.5.0.2');
  });

  it('overrides a hostname the backend set and keeps other metadata', () => {
    const reply = VersionResponse.encode(VersionResponse.fromObject({ messages: [{ metadata: { hostname: 'inner' }, version: { tag: 'v1' } }] })).finish();
    const out = decode(VersionResponse, stampEnvelope(reply, { hostname: 'outer' }));
    expect(out.messages[0].metadata.hostname).toBe('outer');
  });

  it('merges several nodes by concatenation, error entries included', () => {
    const a = stampEnvelope(VersionResponse.encode(VersionResponse.fromObject({ messages: [{ version: { tag: 'a' } }] })).finish(), { hostname: 'n1' });
    const b = errorEnvelope({ hostname: 'n2', error: 'connection refused', code: 14 });
    const out = decode(VersionResponse, Buffer.concat([a, b]));
    expect(out.messages.map((m: any) => m.metadata.hostname)).toEqual(['n1', 'n2']);
    expect(out.messages[1].metadata.error).toBe('connection refused');
    expect(out.messages[1].metadata.status).toEqual({ code: 14, message: 'connection refused' });
    expect(out.messages[1].version).toBeUndefined();
  });

  it('stamps streamed messages and builds stream error messages', () => {
    const msg = Data.encode(Data.fromObject({ bytes: Buffer.from('hello') })).finish();
    const out = decode(Data, stampMessage(msg, { hostname: 'n3' }));
    expect(Buffer.from(out.bytes, 'base64').toString()).toBe('hello');
    expect(out.metadata.hostname).toBe('n3');
    const err = decode(Data, errorMessage({ hostname: 'n4', error: 'boom', code: 2 }));
    expect(err.metadata).toMatchObject({ hostname: 'n4', error: 'boom' });
  });

  it('keeps unknown top-level fields and rejects malformed replies', () => {
    const withExtra = Buffer.concat([VersionResponse.encode(VersionResponse.fromObject({ messages: [{}] })).finish(), Buffer.from([0x10, 0x05])]);
    const out = stampEnvelope(withExtra, { hostname: 'x' });
    expect(out.subarray(-2)).toEqual(Buffer.from([0x10, 0x05]));
    expect(() => stampEnvelope(Buffer.from([0x0a, 0x05, 0x01]), { hostname: 'x' })).toThrow();
  });
});
