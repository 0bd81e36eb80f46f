import { describe, expect, it } from 'vitest';
import { DAEMONS } from '../contract/paths.ts';
import { SERVICE_GRAPH } from './services.ts';
import { startLevels } from './supervisor/graph.ts';
import type { ServiceSpec } from './supervisor/types.ts';

const specs = (): ServiceSpec[] => SERVICE_GRAPH.map((n) => ({ id: n.id, dependsOn: [...n.dependsOn], command: '/sbin/init' }));

describe('service graph', () => {
  it('has every daemon exactly once and is acyclic', () => {
    expect(SERVICE_GRAPH.map((n) => n.id).sort()).toEqual([...DAEMONS].sort());
    expect(startLevels(specs()).flat().sort()).toEqual([...DAEMONS].sort());
  });
  it('starts apid and networkd first of all, at full priority; the others at once, at nice 19 until they are up, so the API answers soonest', async () => {
    const { firstServices } = await import('./service-graph.ts');
    expect(startLevels(specs())).toHaveLength(1);
    expect(firstServices().sort()).toEqual(['apid', 'networkd']);
    const nice = Object.fromEntries(SERVICE_GRAPH.map((n) => [n.id, n.startNice]));
    expect(nice).toEqual({ apid: undefined, networkd: undefined, udevd: 19, timed: 19, trustd: 19 });
  });
});

describe('daemon V8 flags and the roles\' Node options', () => {
  it('reach every daemon as NODE_OPTIONS, after any the node already has, each once', async () => {
    const { serviceSpecs, DAEMON_V8_FLAGS } = await import('./services.ts');
    const { ROLE_NODE_OPTIONS } = await import('./service-graph.ts');
    const before = process.env.NODE_OPTIONS;
    try {
      // machined's own NODE_OPTIONS (preinit's) already hold the roles' options: not twice.
      for (const inherited of ['--trace-warnings', ['--trace-warnings', ...ROLE_NODE_OPTIONS].join(' ')]) {
        process.env.NODE_OPTIONS = inherited;
        for (const spec of serviceSpecs()) {
          expect(spec.env?.NODE_OPTIONS, spec.id).toBe(['--trace-warnings', ...ROLE_NODE_OPTIONS, ...DAEMON_V8_FLAGS[spec.id as keyof typeof DAEMON_V8_FLAGS]].join(' '));
        }
      }
    } finally {
      if (before === undefined) delete process.env.NODE_OPTIONS;
      else process.env.NODE_OPTIONS = before;
    }
  });

  it('keep what NODE_OPTIONS held as it was, repeated options included', async () => {
    const { daemonEnv, DAEMON_V8_FLAGS } = await import('./services.ts');
    const { ROLE_NODE_OPTIONS } = await import('./service-graph.ts');
    const env = daemonEnv('timed', { NODE_OPTIONS: '-r ./a.js -r ./b.js --v8-pool-size=1' });
    const added = [...ROLE_NODE_OPTIONS, ...DAEMON_V8_FLAGS.timed].filter((o) => o !== '--v8-pool-size=1');
    expect(env.NODE_OPTIONS).toBe(['-r ./a.js -r ./b.js --v8-pool-size=1', ...added].join(' '));
    // etcd is not one of Bronze's own: its environment is left alone.
    expect(daemonEnv('etcd', { NODE_OPTIONS: '-r x' })).toEqual({ NODE_OPTIONS: '-r x' });
  });

  it('tell timed to adjust the clock when machined is PID 1, at every start (it cannot see that as uid 52)', async () => {
    const { daemonEnv } = await import('./services.ts');
    expect(daemonEnv('timed', {}, true).BRONZE_TIMED_CLOCK).toBe('adjust');
    expect(daemonEnv('timed', { BRONZE_TIMED_CLOCK: 'readonly' }, true).BRONZE_TIMED_CLOCK).toBe('readonly');
    expect(daemonEnv('timed', {}, false).BRONZE_TIMED_CLOCK).toBeUndefined();
    expect(daemonEnv('apid', {}, true).BRONZE_TIMED_CLOCK).toBeUndefined();
  });

  it('preinit gives machined the same options the daemons get', async () => {
    const { ROLE_NODE_OPTIONS } = await import('./service-graph.ts');
    const preinit = (await import('node:fs')).readFileSync('image-builder/preinit/preinit.c', 'utf8');
    expect(preinit).toContain(`"NODE_OPTIONS=${ROLE_NODE_OPTIONS.join(' ')}"`);
  });
});
