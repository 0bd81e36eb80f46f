// The service graph machined supervises, as data: each daemon and what it waits for.
import type { DaemonName } from '../contract/paths.ts';
import { socketPath } from '../contract/paths.ts';
import { healthChecker } from '../daemon/health-client.ts';
import { selfInvocation } from '../lib/self.ts';
import type { ServiceSpec } from './supervisor.ts';

export interface ServiceNode {
  id: DaemonName;
  dependsOn: DaemonName[];
  /** Stopped only once these have stopped (shutdown order only). */
  stopAfter?: DaemonName[];
  description: string;
}

// No daemon waits for another to start: they meet only through machined's state, where each
// publishes what it owns and watches what it reads, so an input that appears later is picked
// up when it appears. All five start at once, in this order: apid first, so that the API
// (maintenance mode included) answers as early as the machine allows. At shutdown networkd is
// stopped last: apid's last replies (the end of an upgrade's, install's or repair's stream)
// leave through the addresses networkd removes when it stops.
export const SERVICE_GRAPH: readonly ServiceNode[] = [
  { id: 'apid', dependsOn: [], description: 'the mTLS API gateway on :50000' },
  { id: 'networkd', dependsOn: [], stopAfter: ['apid'], description: 'links, addresses, routes, DHCP, hostname, resolvers' },
  { id: 'udevd', dependsOn: [], description: 'device events and /dev/disk links' },
  { id: 'timed', dependsOn: [], description: 'time synchronisation (SNTP)' },
  { id: 'trustd', dependsOn: [], description: 'certificate signing for joining nodes' },
];

/**
 * V8 flags per daemon, as NODE_OPTIONS (the single executable reads it; none of these changes
 * V8's flag hash, so the code caches still apply). One V8 worker thread each: six processes
 * share two CPUs on a small node. A 1 MiB semi-space for the daemons that only idle and watch;
 * apid keeps V8's default, since every API call allocates there. Measured on a host run of
 * machined with apid, trustd and timed: 2.5% less PSS in total, no slower start.
 */
export const DAEMON_V8_FLAGS: Readonly<Record<DaemonName, readonly string[]>> = {
  apid: ['--v8-pool-size=1'],
  networkd: ['--v8-pool-size=1', '--max-semi-space-size=1'],
  udevd: ['--v8-pool-size=1', '--max-semi-space-size=1'],
  timed: ['--v8-pool-size=1', '--max-semi-space-size=1'],
  trustd: ['--v8-pool-size=1', '--max-semi-space-size=1'],
};

/** A daemon's whole environment: `env`, with its V8 flags added to NODE_OPTIONS. */
export function daemonEnv(id: string, env: Record<string, string>): Record<string, string> {
  const flags = Object.hasOwn(DAEMON_V8_FLAGS, id) ? DAEMON_V8_FLAGS[id as DaemonName] : [];
  if (flags.length === 0) return env;
  return { ...env, NODE_OPTIONS: [env.NODE_OPTIONS ?? '', ...flags].join(' ').trim() };
}

/** Turns the graph into supervisor specs: every daemon is this binary under another name,
 * with machined's environment plus `extraEnv`; `only` picks a subset (host runs and tests). */
export function baseServiceEnv(extraEnv: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined) env[k] = v;
  return Object.assign(env, extraEnv);
}

export function serviceSpecs(extraEnv: Record<string, string> = {}, only?: readonly string[]): ServiceSpec[] {
  const env = baseServiceEnv(extraEnv);
  const chosen = only ? SERVICE_GRAPH.filter((n) => only.includes(n.id)) : SERVICE_GRAPH;
  for (const id of only ?? []) if (!SERVICE_GRAPH.some((n) => n.id === id)) throw new Error(`unknown service ${id}`);
  return chosen.map((node) => {
    const inv = selfInvocation(node.id);
    const health = healthChecker(socketPath(node.id));
    return {
      id: node.id,
      // A subset (host runs) keeps only the dependencies it includes.
      dependsOn: node.dependsOn.filter((d) => chosen.some((n) => n.id === d)),
      stopAfter: (node.stopAfter ?? []).filter((d) => chosen.some((n) => n.id === d)),
      command: inv.command,
      args: inv.args,
      argv0: inv.argv0,
      env: daemonEnv(node.id, env),
      healthCheck: health.check,
      healthInterval: 2000,
      stopTimeout: 10_000,
      restart: 'always',
    };
  });
}
