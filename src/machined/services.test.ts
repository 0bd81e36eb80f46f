import { describe, expect, it } from 'vitest';
import { DAEMONS } from '../contract/paths.ts';
import { SERVICE_GRAPH } from './services.ts';
import { startLevels, stopOrder } from './supervisor/graph.ts';
import type { ServiceSpec } from './supervisor/types.ts';

const specs = (): ServiceSpec[] => SERVICE_GRAPH.map((n) => ({ id: n.id, dependsOn: [...n.dependsOn], command: '/sbin/init' }));

describe('service graph', () => {
  it('has every daemon exactly once and is acyclic', () => {
    expect(SERVICE_GRAPH.map((n) => n.id).sort()).toEqual([...DAEMONS].sort());
    expect(startLevels(specs()).flat().sort()).toEqual([...DAEMONS].sort());
  });
  it('starts apid and networkd first, the others once apid is up, so the API answers soonest', () => {
    const levels = startLevels(specs());
    expect(levels).toHaveLength(2);
    expect([...levels[0]!].sort()).toEqual(['apid', 'networkd']);
    expect([...levels[1]!].sort()).toEqual(['timed', 'trustd', 'udevd']);
    // Stopped in reverse: apid last of those that depend on it.
    const stop = stopOrder(specs());
    expect(stop.indexOf('apid')).toBeGreaterThan(Math.max(stop.indexOf('udevd'), stop.indexOf('timed'), stop.indexOf('trustd')));
  });
});

describe('daemon V8 flags', () => {
  it('reach every daemon as NODE_OPTIONS, after any the node already has', async () => {
    const { serviceSpecs, DAEMON_V8_FLAGS } = await import('./services.ts');
    const before = process.env.NODE_OPTIONS;
    process.env.NODE_OPTIONS = '--trace-warnings';
    try {
      for (const spec of serviceSpecs()) {
        expect(spec.env?.NODE_OPTIONS, spec.id).toBe(['--trace-warnings', ...DAEMON_V8_FLAGS[spec.id as keyof typeof DAEMON_V8_FLAGS]].join(' '));
      }
    } finally {
      if (before === undefined) delete process.env.NODE_OPTIONS;
      else process.env.NODE_OPTIONS = before;
    }
  });
});
