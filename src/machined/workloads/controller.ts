// ContainerController: the node's ContainerConfig documents, kept running. Each pass reads the
// configuration, publishes one ContainerSpecs resource per document (as Talos's
// ConfigController projects it), hands the declared containers to the workload engine, and
// writes what the engine reports: ContainerImageStatuses (per container, as Talos keys them),
// ContainerInstanceSpecs (the instance running now, `<name>-<generation>`) and
// ContainerStatuses (Bronze's: phase, pid, starts, health). A container's dependsOn is read
// here from the resources that say it: TimeStatuses (time), NodeAddresses (addresses),
// RouteStatuses (connectivity: a default route), HostnameStatuses (hostname), ResolverStatuses
// (etcfiles); paths from the filesystem.
import fs from 'node:fs';
import type { Controller, ControllerContext } from '../../state/controller.ts';
import type { Logger } from '../../lib/log.ts';
import { type DeclaredContainer, containerDocs } from '../../config/accessors/containers.ts';
import { registries } from '../../config/accessors/registries.ts';
import type { RegistryConfig } from '../../containerd/types.ts';
import { MACHINE_CONFIG_ID, MACHINE_CONFIG_NS, MACHINE_CONFIG_TYPE, type MachineConfigSpec } from '../../contract/resources/machine-config.ts';
import { CONTAINERS_NAMESPACE, CONTAINER_SPEC_TYPE, type ContainerSpecSpec } from '../../contract/resources/container-spec.ts';
import { CONTAINER_IMAGE_STATUS_TYPE, type ContainerImageStatusSpec } from '../../contract/resources/container-image-status.ts';
import { CONTAINER_INSTANCE_SPEC_TYPE, type ContainerInstanceSpecSpec, containerInstanceId } from '../../contract/resources/container-instance-spec.ts';
import { CONTAINER_STATUS_TYPE, type ContainerStatusSpec } from '../../contract/resources/container-status.ts';
import { TIME_STATUS_NAMESPACE, TIME_STATUS_TYPE } from '../../contract/resources/time-status.ts';
import { HOSTNAME_STATUS_TYPE, NETWORK_NAMESPACE } from '../../contract/resources/hostname-status.ts';
import { RESOLVER_STATUS_TYPE } from '../../contract/resources/resolver-status.ts';
import { ROUTE_STATUS_TYPE } from '../../contract/resources/route-status.ts';
import { NODE_ADDRESS_TYPE } from '../../contract/resources/node-address.ts';
import { type ImageState, type InstanceState, type RuntimePort, WorkloadEngine } from './engine.ts';

export const CONTAINER_CONTROLLER = 'ContainerController';

/** The conditions the node meets now, read at each pass. */
export interface NodeConditions {
  time: boolean;
  addresses: boolean;
  connectivity: boolean;
  hostname: boolean;
  etcfiles: boolean;
}

/** Why a declared container must wait (Talos's dependsOn other than containers), or undefined. */
export function unmetDependency(d: Pick<DeclaredContainer, 'dependsOn'>, c: NodeConditions, exists: (p: string) => boolean = fs.existsSync): string | undefined {
  if (d.dependsOn.time && !c.time) return 'waiting for the clock to be synchronized';
  for (const n of d.dependsOn.networks) if (!c[n as keyof NodeConditions]) return `waiting for network condition ${n}`;
  for (const p of d.dependsOn.paths) if (!exists(p)) return `waiting for path ${p}`;
  return undefined;
}

/** What the controller needs: the runtime once containerd answers (undefined until then). */
export interface ContainerControllerDeps {
  port: () => RuntimePort | undefined;
  log: Logger;
  /** The engine, once made: the upgrade's commit asks it (settled), the runtime's exits go to it. */
  onEngine?: (e: WorkloadEngine) => void;
  /** Whether every declared container now runs and is healthy changed. */
  onSettled?: (ok: boolean) => void;
  /** At each pass: how many containers the configuration declares, and its registry settings. */
  onConfig?: (declared: number, registries: RegistryConfig) => void;
  restartDelayMs?: number;
}

export function containerController(d: ContainerControllerDeps): Controller {
  let engine: WorkloadEngine | undefined;
  let ctxNow: ControllerContext | undefined;
  let conditions: NodeConditions = { time: false, addresses: false, connectivity: false, hostname: false, etcfiles: false };
  const images = new Map<string, ImageState | undefined>();
  const instances = new Map<string, InstanceState | undefined>();
  const dirty = { images: new Set<string>(), instances: new Set<string>() };
  let declared: DeclaredContainer[] = [];
  const generations = new Map<string, { hash: string; generation: number }>();
  let lastSettled: boolean | undefined;
  const poke = () => ctxNow?.requeueAfter(0);

  const makeEngine = (port: RuntimePort): WorkloadEngine => {
    const e = new WorkloadEngine({
      port,
      log: d.log,
      ...(d.restartDelayMs !== undefined ? { restartDelayMs: d.restartDelayMs } : {}),
      dependencyMet: (x) => {
        const decl = declared.find((y) => y.spec.name === x.spec.name);
        return decl ? unmetDependency(decl, conditions) : undefined;
      },
      publish: {
        image: (ref, s) => {
          images.set(ref, s);
          dirty.images.add(ref);
          poke();
        },
        instance: (id, s) => {
          instances.set(id, s);
          dirty.instances.add(id);
          poke();
        },
      },
    });
    d.onEngine?.(e);
    return e;
  };

  const readConditions = async (ctx: ControllerContext): Promise<NodeConditions> => {
    const time = await ctx.state.find<{ synced: boolean }>(TIME_STATUS_NAMESPACE, TIME_STATUS_TYPE, 'node');
    const addrs = await ctx.state.list<{ addresses: string[] }>(NETWORK_NAMESPACE, NODE_ADDRESS_TYPE);
    const routes = await ctx.state.list<{ dst: string }>(NETWORK_NAMESPACE, ROUTE_STATUS_TYPE);
    const hostname = await ctx.state.list(NETWORK_NAMESPACE, HOSTNAME_STATUS_TYPE);
    const resolvers = await ctx.state.list(NETWORK_NAMESPACE, RESOLVER_STATUS_TYPE);
    return {
      time: !!time?.spec.synced,
      addresses: addrs.some((a) => a.spec.addresses.some((x) => !x.startsWith('127.') && x !== '::1/128')),
      connectivity: routes.some((r) => !r.spec.dst || r.spec.dst === '0.0.0.0/0' || r.spec.dst === '::/0'),
      hostname: hostname.length > 0,
      etcfiles: resolvers.length > 0,
    };
  };

  const flush = async (ctx: ControllerContext) => {
    for (const ref of [...dirty.images]) {
      dirty.images.delete(ref);
      // Talos keys image statuses by container: one per container that uses the image.
      for (const c of declared.filter((x) => x.spec.image === ref)) {
        const s = images.get(ref);
        if (s) await ctx.state.apply<ContainerImageStatusSpec>(CONTAINERS_NAMESPACE, CONTAINER_IMAGE_STATUS_TYPE, c.spec.name, imageStatus(s));
      }
    }
    for (const id of [...dirty.instances]) {
      dirty.instances.delete(id);
      const s = instances.get(id);
      if (!s) {
        await destroyAll(ctx, CONTAINER_STATUS_TYPE, (rid) => rid === id);
        await destroyAll(ctx, CONTAINER_INSTANCE_SPEC_TYPE, (rid) => rid.startsWith(`${id}-`));
        continue;
      }
      await ctx.state.apply<ContainerStatusSpec>(CONTAINERS_NAMESPACE, CONTAINER_STATUS_TYPE, id, statusOf(s));
      const decl = declared.find((x) => x.spec.name === id);
      if (decl && s.phase === 'running') {
        const gen = generationOf(id, s.hash);
        const instanceId = containerInstanceId(id, gen);
        await ctx.state.apply<ContainerInstanceSpecSpec>(CONTAINERS_NAMESPACE, CONTAINER_INSTANCE_SPEC_TYPE, instanceId, instanceSpec(decl.resource, id, gen));
        await destroyAll(ctx, CONTAINER_INSTANCE_SPEC_TYPE, (rid) => rid.startsWith(`${id}-`) && rid !== instanceId);
      }
    }
  };

  const generationOf = (id: string, hash: string): number => {
    const g = generations.get(id);
    if (g?.hash === hash) return g.generation;
    const next = { hash, generation: (g?.generation ?? 0) + 1 };
    generations.set(id, next);
    return next.generation;
  };

  return {
    name: CONTAINER_CONTROLLER,
    inputs: [
      { namespace: MACHINE_CONFIG_NS, type: MACHINE_CONFIG_TYPE, kind: 'weak' },
      { namespace: TIME_STATUS_NAMESPACE, type: TIME_STATUS_TYPE, kind: 'weak' },
      { namespace: NETWORK_NAMESPACE, type: NODE_ADDRESS_TYPE, kind: 'weak' },
      { namespace: NETWORK_NAMESPACE, type: ROUTE_STATUS_TYPE, kind: 'weak' },
      { namespace: NETWORK_NAMESPACE, type: HOSTNAME_STATUS_TYPE, kind: 'weak' },
      { namespace: NETWORK_NAMESPACE, type: RESOLVER_STATUS_TYPE, kind: 'weak' },
    ],
    outputs: [
      { type: CONTAINER_SPEC_TYPE, kind: 'exclusive' },
      { type: CONTAINER_IMAGE_STATUS_TYPE, kind: 'exclusive' },
      { type: CONTAINER_INSTANCE_SPEC_TYPE, kind: 'exclusive' },
      { type: CONTAINER_STATUS_TYPE, kind: 'exclusive' },
    ],
    async run(ctx) {
      if (ctxNow !== ctx) {
        ctxNow = ctx;
        ctx.signal.addEventListener('abort', () => engine?.stop(), { once: true });
      }
      const cfg = await ctx.state.find<MachineConfigSpec>(MACHINE_CONFIG_NS, MACHINE_CONFIG_TYPE, MACHINE_CONFIG_ID);
      declared = containerDocs(cfg?.spec);
      d.onConfig?.(declared.length, registries(cfg?.spec));
      // Read only when some container waits on them: a pass follows every status change.
      if (declared.some((x) => x.dependsOn.time || x.dependsOn.networks.length > 0)) conditions = await readConditions(ctx);
      // ContainerSpecs: what the configuration declares, whether or not containerd runs yet.
      const names = new Set(declared.map((x) => x.spec.name));
      for (const x of declared) await ctx.state.apply<ContainerSpecSpec>(CONTAINERS_NAMESPACE, CONTAINER_SPEC_TYPE, x.spec.name, x.resource);
      await destroyAll(ctx, CONTAINER_SPEC_TYPE, (id) => !names.has(id));
      await destroyAll(ctx, CONTAINER_IMAGE_STATUS_TYPE, (id) => !names.has(id));
      if (!engine) {
        const port = d.port();
        if (!port) {
          for (const x of declared) {
            await ctx.state.apply<ContainerStatusSpec>(CONTAINERS_NAMESPACE, CONTAINER_STATUS_TYPE, x.spec.name, { phase: 'waiting', image: x.spec.image, message: 'waiting for containerd' });
          }
          await destroyAll(ctx, CONTAINER_STATUS_TYPE, (id) => !names.has(id));
          if (declared.length) ctx.requeueAfter(1000);
          return;
        }
        engine = makeEngine(port);
      }
      // Not awaited: pulls and starts take their time; what they report comes back as passes.
      void engine.declare(declared.map((x) => ({ spec: x.spec, ...(x.probe ? { probe: x.probe } : {}), dependsOn: x.dependsOn })));
      // A container waiting on a path is looked at again (paths are polled, as Talos's).
      if (declared.some((x) => x.dependsOn.paths.length > 0)) ctx.requeueAfter(5000);
      await flush(ctx);
      const settled = engine.settled().ok;
      if (settled !== lastSettled) {
        lastSettled = settled;
        d.onSettled?.(settled);
      }
    },
  };
}

async function destroyAll(ctx: ControllerContext, type: string, match: (id: string) => boolean): Promise<void> {
  for (const r of await ctx.state.list(CONTAINERS_NAMESPACE, type)) {
    if (r.metadata.owner === CONTAINER_CONTROLLER && match(r.metadata.id)) await ctx.state.retire(r);
  }
}

function imageStatus(s: ImageState): ContainerImageStatusSpec {
  return { phase: s.phase, image: s.ref, ...(s.digest ? { digest: s.digest } : {}), ...(s.error ? { error: s.error } : {}) };
}

function statusOf(s: InstanceState): ContainerStatusSpec {
  return {
    phase: s.phase,
    image: s.image,
    pid: s.pid,
    starts: s.starts,
    hash: s.hash,
    ...(s.startedAt ? { startedAt: s.startedAt } : {}),
    ...(s.exitCode !== undefined ? { exitCode: s.exitCode } : {}),
    ...(s.healthy !== undefined ? { healthy: s.healthy } : {}),
    ...(s.message ? { message: s.message } : {}),
  };
}

function instanceSpec(r: ContainerSpecSpec, id: string, generation: number): ContainerInstanceSpecSpec {
  const { image, dependsOn: _d, ...rest } = r;
  return { containerID: id, generation, image: image.ref, ...rest };
}
