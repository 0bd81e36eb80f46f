// The supervisor's specs of the daemons, from the service graph (service-graph.ts).
import fs from 'node:fs';
import { runDir, secretsDir, socketPath } from '../contract/paths.ts';
import { healthChecker } from '../daemon/health-client.ts';
import { selfInvocation } from '../lib/self.ts';
import { type UnprivilegedDaemon, daemonUser, ensureDaemonDirs } from '../lib/daemon-users.ts';
import type { ServiceSpec } from './supervisor/types.ts';
import { SERVICE_GRAPH, baseServiceEnv, daemonEnv } from './service-graph.ts';

export { SERVICE_ENV, SERVICE_GRAPH, DAEMON_V8_FLAGS, baseServiceEnv, daemonEnv, firstServices, type ServiceNode } from './service-graph.ts';

/** Turns the graph into supervisor specs: every daemon is this binary under another name,
 * with machined's environment plus `extraEnv`; `only` picks a subset (host runs and tests).
 * apid, trustd and timed run under their own users where daemon users are enabled
 * (lib/daemon-users.ts). */
export function serviceSpecs(extraEnv: Record<string, string> = {}, only?: readonly string[]): ServiceSpec[] {
  const env = baseServiceEnv(extraEnv);
  const chosen = only ? SERVICE_GRAPH.filter((n) => only.includes(n.id)) : SERVICE_GRAPH;
  for (const id of only ?? []) if (!SERVICE_GRAPH.some((n) => n.id === id)) throw new Error(`unknown service ${id}`);
  return chosen.map((node) => {
    const inv = selfInvocation(node.id);
    const health = healthChecker(socketPath(node.id));
    const user = daemonUser(node.id);
    return {
      id: node.id,
      ...(user
        ? { user, beforeStart: () => ensureDaemonDirs(node.id as UnprivilegedDaemon, { runDir: runDir(), secretsDir: secretsDir() }) }
        : {}),
      // A subset (host runs) keeps only the dependencies it includes.
      dependsOn: node.dependsOn.filter((d) => chosen.some((n) => n.id === d)),
      stopAfter: (node.stopAfter ?? []).filter((d) => chosen.some((n) => n.id === d)),
      command: inv.command,
      args: inv.args,
      argv0: inv.argv0,
      env: daemonEnv(node.id, env),
      healthCheck: health.check,
      healthInterval: 2000,
      // Every daemon serves through daemon/serve.ts, which says READY=1 once its socket serves
      // (early.ts starts apid and networkd the same way).
      notifiesReady: true,
      ...(node.startNice !== undefined ? { startNice: node.startNice, listening: () => fs.existsSync(socketPath(node.id)) } : {}),
      stopTimeout: 10_000,
      restart: 'always',
    };
  });
}
