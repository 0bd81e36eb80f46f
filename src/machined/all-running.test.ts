import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import { ListLogger } from '../lib/log.ts';
import { watchAllRunning } from './all-running.ts';

type Svc = { id: string; state: string; healthy: boolean };

function fakeSupervisor(services: Svc[]) {
  const ee = new EventEmitter();
  return { on: ee.on.bind(ee), list: () => services.map((s) => ({ ...s })), emit: (id: string, state: string) => ee.emit('event', id, { state, message: '' }) } as const;
}

describe('watchAllRunning', () => {
  it('logs every event, says once when all are up (a Skipped service and etcd waiting aside), and again after a fall', () => {
    const services: Svc[] = [
      { id: 'apid', state: 'Running', healthy: true },
      { id: 'timed', state: 'Starting', healthy: false },
      { id: 'etcd', state: 'Preparing', healthy: false },
      { id: 'trustd', state: 'Skipped', healthy: false },
    ];
    const sup = fakeSupervisor(services);
    const log = new ListLogger();
    let running = 0;
    const all = watchAllRunning(sup as never, { log, etcdWaiting: () => true, onRunning: () => void running++ });
    sup.emit('timed', 'Starting');
    expect(all.reached).toBe(false);
    services[1] = { id: 'timed', state: 'Running', healthy: true };
    sup.emit('timed', 'Running');
    sup.emit('timed', 'Running');
    expect(all.reached).toBe(true);
    expect(running).toBe(1);
    const lines = log.lines.map((l) => l.replace(/\(.* since (kernel|machined) start/, '(T'));
    expect(lines).toContain('info: service timed: Running');
    expect(lines.filter((l) => l.includes('services Running'))).toEqual(['info: all 2 services Running (T; etcd waits for bootstrap or a cluster to join)']);
    services[1] = { id: 'timed', state: 'Finished', healthy: false };
    sup.emit('timed', 'Finished');
    expect(all.reached).toBe(false);
  });
});
