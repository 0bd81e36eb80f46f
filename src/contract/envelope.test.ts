import protobuf from 'protobufjs/light.js';
import { describe, expect, it } from 'vitest';
import { replyShape, shapeOf } from './envelope.ts';
import { serviceDefinition, serviceNames } from './protos.ts';

describe('which replies carry node metadata, from the descriptors', () => {
  it('knows Talos envelopes, stamped streams and COSI State (plain)', () => {
    expect(replyShape('/machine.MachineService/Version')).toBe('envelope');
    expect(replyShape('/time.TimeService/Time')).toBe('envelope');
    expect(replyShape('/machine.MachineService/Logs')).toBe('stamped');
    expect(replyShape('/machine.MachineService/List')).toBe('stamped');
    expect(replyShape('/machine.MachineService/Events')).toBe('stamped');
    expect(replyShape('/machine.MachineService/UpgradeStream')).toBe('stamped');
    for (const m of ['Get', 'List', 'Watch', 'Create', 'Update', 'Destroy']) expect(replyShape(`/cosi.resource.State/${m}`)).toBe('plain');
    expect(replyShape('/grpc.health.v1.Health/Check')).toBe('plain');
    expect(() => replyShape('/machine.MachineService/Nope')).toThrow(/unknown method/);
  });

  it('every machine and time RPC follows the envelope convention (so each can fan out)', () => {
    for (const service of ['machine.MachineService', 'time.TimeService']) {
      for (const def of Object.values(serviceDefinition(service))) expect([def.path, replyShape(def.path)]).not.toEqual([def.path, 'plain']);
    }
    expect(serviceNames()).toContain('cosi.resource.State');
  });

  it('is decided by field 1, its type and its cardinality, not by names', () => {
    const root = protobuf.Root.fromJSON({
      nested: {
        common: { nested: { Metadata: { fields: { hostname: { type: 'string', id: 1 } } } } },
        t: {
          nested: {
            Item: { fields: { metadata: { type: 'common.Metadata', id: 1 }, x: { type: 'string', id: 2 } } },
            Env: { fields: { messages: { rule: 'repeated', type: 'Item', id: 1 } } },
            NotRepeated: { fields: { messages: { type: 'Item', id: 1 } } },
            OtherMeta: { fields: { metadata: { type: 'string', id: 1 } } },
            Moved: { fields: { metadata: { type: 'common.Metadata', id: 2 } } },
            RepMeta: { fields: { metadata: { rule: 'repeated', type: 'common.Metadata', id: 1 } } },
            EnvOfOther: { fields: { messages: { rule: 'repeated', type: 'OtherMeta', id: 1 } } },
          },
        },
      },
    });
    root.resolveAll();
    const T = (n: string) => root.lookupType(`t.${n}`);
    expect(shapeOf(T('Env'), false)).toBe('envelope');
    expect(shapeOf(T('Item'), true)).toBe('stamped');
    expect(shapeOf(T('Item'), false)).toBe('plain');
    expect(shapeOf(T('Env'), true)).toBe('plain');
    expect(shapeOf(T('NotRepeated'), false)).toBe('plain');
    expect(shapeOf(T('OtherMeta'), true)).toBe('plain');
    expect(shapeOf(T('Moved'), true)).toBe('plain');
    expect(shapeOf(T('RepMeta'), true)).toBe('plain');
    expect(shapeOf(T('EnvOfOther'), false)).toBe('plain');
  });
});

describe('the reply shapes made at build time', () => {
  it('agree with the shapes worked out from the resolved protos, for every method', async () => {
    const { protoRoot, methodInfo, serviceNames } = await import('./protos.ts');
    let n = 0;
    for (const name of serviceNames()) {
      for (const m of protoRoot().lookupService(name).methodsArray) {
        m.resolve();
        const info = methodInfo(`/${name}/${m.name}`)!;
        expect({ req: info.requestStream, res: info.responseStream, reply: info.reply }, `${name}/${m.name}`).toEqual({ req: !!m.requestStream, res: !!m.responseStream, reply: shapeOf(m.resolvedResponseType!, !!m.responseStream) });
        n++;
      }
    }
    expect(n).toBeGreaterThan(40);
  });
});
