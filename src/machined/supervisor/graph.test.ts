// The dependency graph's pure functions: start levels and stop order. (The checks of invalid
// graphs are tested with the Supervisor, in supervisor.test.ts.)

import { describe, expect, it } from 'vitest';
import { startLevels, stopOrder } from './graph.ts';

describe('dependency order', () => {
  const graph = [
    { id: 'etcd', dependsOn: ['networkd', 'trustd'] },
    { id: 'apid', dependsOn: ['networkd'] },
    { id: 'networkd', dependsOn: [] },
    { id: 'trustd', dependsOn: ['networkd'] },
    { id: 'timed', dependsOn: [] },
  ];

  it('groups services into start levels', () => {
    expect(startLevels(graph)).toEqual([['networkd', 'timed'], ['apid', 'trustd'], ['etcd']]);
    expect(startLevels([])).toEqual([]);
  });

  it('stops every service after all of its dependents', () => {
    const order = stopOrder(graph);
    expect(order).toEqual(['etcd', 'apid', 'trustd', 'networkd', 'timed']);
    for (const { id, dependsOn } of graph) {
      for (const dep of dependsOn) expect(order.indexOf(id)).toBeLessThan(order.indexOf(dep));
    }
  });
});
