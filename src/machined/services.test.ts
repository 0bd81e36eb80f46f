import { describe, expect, it } from 'vitest';
import { DAEMONS } from '../contract/paths.ts';
import { SERVICE_GRAPH } from './services.ts';
import { startLevels, stopOrder, type ServiceSpec } from './supervisor.ts';

const specs = (): ServiceSpec[] => SERVICE_GRAPH.map((n) => ({ id: n.id, dependsOn: [...n.dependsOn], command: '/sbin/init' }));

describe('service graph', () => {
  it('has every daemon exactly once and is acyclic', () => {
    expect(SERVICE_GRAPH.map((n) => n.id).sort()).toEqual([...DAEMONS].sort());
    expect(startLevels(specs()).flat().sort()).toEqual([...DAEMONS].sort());
  });
  it('stops apid first and udevd last', () => {
    const order = stopOrder(specs());
    expect(order[0]).toBe('apid');
    expect(order.at(-1)).toBe('udevd');
    expect(order.indexOf('networkd')).toBeGreaterThan(order.indexOf('timed'));
  });
});
