// The work of `bronzectl health` (health.ts): talosctl's client-side checks, each printed as it
// starts ("waiting for ...: ...") and when it passes or gives up. The nodes come from the flags,
// else from the Member resources the endpoint knows (Members.cluster.talos.dev).
import YAML from 'yaml';
import type { Ctx } from '../session.ts';
import type { Client, CallOptions, Envelope, Item } from '../../client/index.ts';
import { load } from '../lazy.ts';
import { UserError } from '../session.ts';
import { goDurationMs } from '../../lib/duration.ts';

// What commands get from `load('health')` (lazy.ts): named here, not in lazy.ts, so that lazy.ts
// names no command file (the commands import it: that would be an import circle).
declare module '../lazy.ts' {
  interface LazyModules {
    health: {
      health: typeof health;
    };
  }
}

export interface HealthFlags {
  controlPlaneNodes: string[];
  workerNodes: string[];
  waitTimeout: string;
}

/** --wait-timeout: a Go duration (talosctl's), positive. */
export function parseWait(text: string): number {
  const ms = goDurationMs(text);
  if (ms === undefined || ms <= 0) throw new UserError(`--wait-timeout ${JSON.stringify(text)}: expected a duration such as 30s, 5m or 1h`);
  return ms;
}

interface Check {
  name: string;
  /** Resolves when the check passes; throws with what is wrong. */
  run(): Promise<void>;
}

/** Every reply item's error, by node; throws them all together. */
function errorsOf<M extends Item>(reply: Envelope<M>, label: (m: M, i: number) => string): void {
  const bad = reply.messages.map((m, i) => (m.metadata?.error ? `${label(m, i)}: ${m.metadata.error}` : '')).filter(Boolean);
  if (bad.length) throw new Error(bad.join('; '));
}

export async function health(ctx: Ctx, flags: HealthFlags): Promise<void> {
  const s = ctx.session();
  const waitMs = parseWait(flags.waitTimeout);
  const client: Client = await s.client();
  const { nodes: nodesMd, node: nodeMd } = await load('client');
  const opts = (targets: readonly string[]): CallOptions => s.callOptions({ metadata: nodesMd(targets) });
  const label = (targets: readonly string[]) => (m: Item, i: number) => m.metadata?.hostname || targets[i] || '?';

  let cps = flags.controlPlaneNodes;
  let workers = flags.workerNodes;
  if (cps.length === 0) {
    // Discover them: the Member resources of the node the endpoint is.
    const found: Array<{ hostname: string; type: string; address: string }> = [];
    for await (const r of client.state.list('cluster', 'Members.cluster.talos.dev', s.callOptions())) {
      const spec = (YAML.parse(r.spec?.yaml_spec ?? '') ?? {}) as { hostname?: string; machineType?: string; addresses?: string[] };
      if (spec.addresses?.[0]) found.push({ hostname: spec.hostname ?? '', type: spec.machineType ?? '', address: spec.addresses[0] });
    }
    cps = found.filter((m) => m.type === 'controlplane').map((m) => m.address);
    if (workers.length === 0) workers = found.filter((m) => m.type === 'worker').map((m) => m.address);
    if (cps.length === 0) throw new UserError('no control plane nodes: the endpoint knows no control-plane Member (pass --control-plane-nodes)');
    s.out(`discovered nodes: ${JSON.stringify({ controlplane: cps, worker: workers })}\n`);
  }
  const all = [...cps, ...workers];

  const checks: Check[] = [
    {
      name: 'etcd to be healthy',
      run: async () => {
        const r = await client.machine.EtcdStatus({}, opts(cps));
        errorsOf(r, label(cps));
        const bad = r.messages.filter((m) => m.member_status?.errors.length).map((m) => `${m.metadata?.hostname}: ${m.member_status!.errors.join(', ')}`);
        if (bad.length) throw new Error(bad.join('; '));
      },
    },
    {
      name: 'etcd members to be consistent across nodes',
      run: async () => {
        const r = await client.machine.EtcdMemberList({ query_local: true }, opts(cps));
        errorsOf(r, label(cps));
        const sets = r.messages.map((m) => (m.members ?? []).map((x) => x.id).sort().join(','));
        if (new Set(sets).size > 1) throw new Error(`the nodes see different members: ${r.messages.map((m, i) => `${label(cps)(m, i)}: ${(m.members ?? []).map((x) => x.hostname || x.id).join(',')}`).join('; ')}`);
      },
    },
    {
      name: 'etcd members to be control plane nodes',
      run: async () => {
        const r = await client.machine.EtcdMemberList({ query_local: true }, opts([cps[0]!]));
        errorsOf(r, label([cps[0]!]));
        const members = r.messages[0]?.members ?? [];
        const learners = members.filter((m) => m.is_learner).map((m) => m.hostname || m.id);
        if (members.length !== cps.length) throw new Error(`etcd has ${members.length} members (${members.map((m) => m.hostname || m.id).join(', ')}), expected ${cps.length} control plane nodes`);
        if (learners.length) throw new Error(`still learners: ${learners.join(', ')}`);
      },
    },
    {
      name: 'apid to be ready',
      run: async () => errorsOf(await client.machine.Version({}, opts(all)), label(all)),
    },
    {
      name: "all nodes' services to be running and healthy",
      run: async () => {
        const r = await client.machine.ServiceList({}, opts(all));
        errorsOf(r, label(all));
        const bad: string[] = [];
        r.messages.forEach((m, i) => {
          for (const svc of m.services ?? []) {
            if (svc.state === 'Skipped' && !(svc.id === 'etcd' && cps.includes(all[i]!))) continue;
            // A service without a health check (machined itself) reports its health as unknown.
            const healthy = svc.health ? svc.health.unknown || svc.health.healthy : true;
            if (svc.state !== 'Running' || !healthy) bad.push(`${label(all)(m, i)}: ${svc.id} ${svc.state}${svc.health?.last_message ? ` (${svc.health.last_message})` : ''}`);
          }
        });
        if (bad.length) throw new Error(bad.join('; '));
      },
    },
    {
      name: 'every node to see every node as a member',
      run: async () => {
        const bad: string[] = [];
        await Promise.all(
          all.map(async (n) => {
            let count = 0;
            try {
              for await (const _ of client.state.list('cluster', 'Members.cluster.talos.dev', s.callOptions({ metadata: nodeMd(n) }))) count++;
            } catch (e) {
              bad.push(`${n}: ${(e as Error).message}`);
              return;
            }
            if (count !== all.length) bad.push(`${n} sees ${count} members, expected ${all.length}`);
          }),
        );
        if (bad.length) throw new Error(bad.join('; '));
      },
    },
  ];

  const deadline = Date.now() + waitMs;
  for (const check of checks) {
    s.out(`waiting for ${check.name}: ...\n`);
    let last = '';
    for (;;) {
      try {
        await check.run();
        s.out(`waiting for ${check.name}: OK\n`);
        break;
      } catch (e) {
        const msg = (e as Error).message;
        if (Date.now() >= deadline) {
          s.fail('', `waiting for ${check.name}: ${msg}`);
          throw new UserError(`health check failed: ${check.name}`);
        }
        if (msg !== last) s.out(`waiting for ${check.name}: ${msg}\n`);
        last = msg;
        await new Promise((r) => setTimeout(r, 2000));
      }
    }
  }
}
