// The supervisor's dependency graph, as pure functions: the start levels (every service after
// its dependencies), the stop order (every service after its dependents), and the checks that
// reject a graph with a duplicate id, an unknown service or a cycle.

import type { ServiceSpec } from './types.ts';

type GraphSpec = Pick<ServiceSpec, 'id' | 'dependsOn'>;

/**
 * Groups the services into levels: level 0 has no dependencies, and every service of level n
 * depends only on services of lower levels. Within a level the input order is kept.
 * Throws an Error naming the services involved on a duplicate id, an unknown dependency or a
 * dependency cycle.
 */
export function startLevels(specs: readonly GraphSpec[]): string[][] {
  const byId = new Map<string, GraphSpec>();
  for (const spec of specs) {
    if (!spec.id) throw new Error('service with an empty id');
    if (byId.has(spec.id)) throw new Error(`duplicate service id: ${spec.id}`);
    byId.set(spec.id, spec);
  }
  for (const spec of specs) {
    for (const dep of spec.dependsOn) {
      if (!byId.has(dep)) throw new Error(`service ${spec.id} depends on unknown service ${dep}`);
    }
  }

  const level = new Map<string, number>();
  const visit = (id: string, path: string[]): number => {
    const known = level.get(id);
    if (known !== undefined) return known;
    const at = path.indexOf(id);
    if (at !== -1) throw new Error(`dependency cycle: ${[...path.slice(at), id].join(' → ')}`);
    const deps = byId.get(id)?.dependsOn ?? [];
    const mine = 1 + Math.max(-1, ...deps.map((dep) => visit(dep, [...path, id])));
    level.set(id, mine);
    return mine;
  };

  const levels: string[][] = [];
  for (const spec of specs) (levels[visit(spec.id, [])] ??= []).push(spec.id);
  return levels;
}

/** The order of an orderly shutdown: every service comes after all services depending on it. */
export function stopOrder(specs: readonly GraphSpec[]): string[] {
  return startLevels(specs).reverse().flat();
}

type StopSpec = Pick<ServiceSpec, 'id' | 'dependsOn' | 'stopAfter'>;

/** The services stopped before this one: its dependents, then what it must outlive (stopAfter). */
export function stoppedBefore(specs: readonly StopSpec[], spec: StopSpec): string[] {
  return [...specs.filter((o) => o.dependsOn.includes(spec.id)).map((o) => o.id), ...(spec.stopAfter ?? [])];
}

/** Checks the stop order (after dependents and after stopAfter): no unknown id, no cycle. */
export function checkStopOrder(specs: readonly StopSpec[]): void {
  for (const spec of specs) for (const id of spec.stopAfter ?? []) if (!specs.some((o) => o.id === id)) throw new Error(`service ${spec.id} stops after unknown service ${id}`);
  startLevels(specs.map((spec) => ({ id: spec.id, dependsOn: stoppedBefore(specs, spec) })));
}
