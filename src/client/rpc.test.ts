import { describe, expect, it } from 'vitest';
import { service, type Caller } from './rpc.ts';

describe('a service object', () => {
  const calls: string[] = [];
  const caller: Caller = {
    unary: async (path, req) => (calls.push(`unary ${path} ${JSON.stringify(req)}`), { messages: [] }),
    serverStream: async function* (path, req) {
      calls.push(`stream ${path} ${JSON.stringify(req)}`);
      yield { bytes: Buffer.from('x') };
    },
    bidiStream: async function* (path, reqs) {
      for await (const r of reqs) calls.push(`bidi ${path} ${JSON.stringify(r)}`);
      yield { messages: [] };
    },
  };

  it('calls each method the way its proto says it streams, by its proto name', async () => {
    const machine = service(caller, 'machine.MachineService');
    await machine.Version();
    await machine.ServiceStart({ id: 'apid' });
    for await (const _ of machine.Logs({ id: 'apid' })) void _;
    for await (const _ of machine.EtcdRecover((async function* () { yield { bytes: Buffer.from('a') }; })())) void _;
    expect(calls).toEqual([
      'unary /machine.MachineService/Version {}',
      'unary /machine.MachineService/ServiceStart {"id":"apid"}',
      'stream /machine.MachineService/Logs {"id":"apid"}',
      'bidi /machine.MachineService/EtcdRecover {"bytes":{"type":"Buffer","data":[97]}}',
    ]);
    expect(machine.Version).toBe(machine.Version); // made once
  });

  it('has nothing under a name its service does not have', () => {
    expect((service(caller, 'time.TimeService') as unknown as Record<string, unknown>).Version).toBeUndefined();
  });
});
