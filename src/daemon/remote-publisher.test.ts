import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { KmsgLogger } from '../lib/log.ts';
import { EventBus } from '../machined/api/events.ts';
import { startMachinedApi } from '../machined/api/server.ts';
import { Supervisor } from '../machined/supervisor/supervisor.ts';
import { LINK_STATUS_TYPE, type LinkStatusSpec } from '../contract/resources/link-status.ts';
import { DefinitionRegistry } from '../contract/resources/registry.ts';
import { MemoryState } from '../state/memory.ts';
import type { WatchEvent } from '../state/state.ts';
import { RemotePublisher } from './remote-publisher.ts';
import { RemoteState } from './remote-state.ts';

describe('RemotePublisher against machined\'s real resource API', () => {
  let dir: string;
  let api: { socket: string; close(): Promise<void> };
  const state = new MemoryState();
  const registry = new DefinitionRegistry();
  const link = (mtu: number): LinkStatusSpec => ({
    index: 2,
    type: 'ether',
    linkIndex: 0,
    flags: 'UP,BROADCAST,RUNNING,MULTICAST,LOWER_UP',
    hardwareAddr: '52:54:00:12:34:56',
    permanentAddr: '',
    broadcastAddr: 'ff:ff:ff:ff:ff:ff',
    mtu,
    queueDisc: 'pfifo_fast',
    operationalState: 'up',
    kind: '',
    slaveKind: '',
    linkState: true,
  });

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bronze-pub-'));
    api = await startMachinedApi({
      supervisor: new Supervisor([]),
      log: new KmsgLogger('test', false),
      events: new EventBus(),
      state,
      registry,
      requestSequence: () => {},
      socket: path.join(dir, 'machined.sock'),
    });
  });
  afterAll(async () => {
    await api.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('creates, updates (only on change), lists, watches and destroys its own resources', async () => {
    const pub = new RemotePublisher('networkd', api.socket);
    const ctl = new AbortController();
    const seen: WatchEvent[] = [];
    const watching = (async () => {
      for await (const ev of pub.watch('network', LINK_STATUS_TYPE, ctl.signal)) seen.push(ev);
    })();
    await pub.apply('network', LINK_STATUS_TYPE, 'eth0', link(1500), { physical: 'true' });
    const v1 = (await state.get('network', LINK_STATUS_TYPE, 'eth0')).metadata.version;
    await pub.apply('network', LINK_STATUS_TYPE, 'eth0', link(1500), { physical: 'true' });
    expect((await state.get('network', LINK_STATUS_TYPE, 'eth0')).metadata.version).toBe(v1);
    await pub.apply('network', LINK_STATUS_TYPE, 'eth0', link(9000), { physical: 'true' });
    const listed = await pub.list<{ mtu: number }>('network', LINK_STATUS_TYPE);
    expect(listed.map((r) => [r.metadata.id, r.spec.mtu, r.metadata.owner])).toEqual([['eth0', 9000, 'networkd']]);
    await pub.destroy('network', LINK_STATUS_TYPE, 'eth0');
    await pub.destroy('network', LINK_STATUS_TYPE, 'eth0'); // absent: no error
    for (let i = 0; i < 50 && !seen.some((e) => e.type === 'destroyed'); i++) await new Promise((r) => setTimeout(r, 50));
    ctl.abort();
    await watching;
    expect(seen.map((e) => e.type)).toEqual(['bootstrapped', 'created', 'updated', 'destroyed']);
    pub.close();
  });

  it('writes without reading first what it wrote itself, and reads when the resource is not as it left it', async () => {
    const calls: string[] = [];
    const spies = (['get', 'create', 'update'] as const).map((m) => {
      const real = RemoteState.prototype[m] as (...a: unknown[]) => Promise<unknown>;
      return vi.spyOn(RemoteState.prototype, m).mockImplementation(function (this: RemoteState, ...a: unknown[]) {
        calls.push(m);
        return real.apply(this, a);
      } as never);
    });
    try {
      const pub = new RemotePublisher('networkd', api.socket);
      await pub.apply('network', LINK_STATUS_TYPE, 'eth2', link(1500));
      expect(calls.splice(0)).toEqual(['create']);
      await pub.apply('network', LINK_STATUS_TYPE, 'eth2', link(1500));
      expect(calls.splice(0)).toEqual([]);
      await pub.apply('network', LINK_STATUS_TYPE, 'eth2', link(1400), { physical: 'true' });
      expect(calls.splice(0)).toEqual(['update']);
      expect((await state.get('network', LINK_STATUS_TYPE, 'eth2')).metadata.labels).toEqual({ physical: 'true' });
      pub.close();

      // A new run of the daemon: the resource exists already, so it reads, then updates.
      const again = new RemotePublisher('networkd', api.socket);
      await again.apply('network', LINK_STATUS_TYPE, 'eth2', link(1300));
      expect(calls.splice(0)).toEqual(['create', 'get', 'update']);
      expect((await state.get<{ mtu: number }>('network', LINK_STATUS_TYPE, 'eth2')).spec.mtu).toBe(1300);
      await again.apply('network', LINK_STATUS_TYPE, 'eth2', link(1300));
      expect(calls.splice(0)).toEqual([]);

      // Gone behind its back: the update fails, and it creates it again.
      await state.destroy('network', LINK_STATUS_TYPE, 'eth2', { owner: 'networkd' });
      await again.apply('network', LINK_STATUS_TYPE, 'eth2', link(1200));
      expect(calls.splice(0)).toEqual(['update', 'get', 'create']);
      expect((await state.get<{ mtu: number }>('network', LINK_STATUS_TYPE, 'eth2')).spec.mtu).toBe(1200);
      await again.destroy('network', LINK_STATUS_TYPE, 'eth2');
      again.close();
    } finally {
      for (const s of spies) s.mockRestore();
    }
  });

  it('cannot write a type another daemon owns', async () => {
    const pub = new RemotePublisher('udevd', api.socket);
    await expect(pub.apply('network', LINK_STATUS_TYPE, 'eth1', link(1500))).rejects.toMatchObject({ details: expect.stringMatching(/udevd may not write LinkStatuses\.net\.talos\.dev \(owner: networkd\)/) });
    pub.close();
  });
});
