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
  it('starts every daemon at once, apid first, so the API answers soonest', () => {
    const levels = startLevels(specs());
    expect(levels).toHaveLength(1);
    expect(levels[0]![0]).toBe('apid');
    expect(stopOrder(specs()).sort()).toEqual([...DAEMONS].sort());
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
