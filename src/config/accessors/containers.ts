// The node's declared containers (Talos: Config().ContainerConfigs(), and the ConfigController
// that projects each into a ContainerSpec): every ContainerConfig document resolved into what
// the runtime runs (src/containerd/types.ts ContainerRunSpec: the image in containerd's normal
// form, millicores and bytes, the mounts as OCI mounts with Talos's defaults applied), the
// ContainerSpecs resource's spec as Talos projects it, the health probe of Bronze's
// ContainerHealthConfig of the same name with Kubernetes's defaults, and what it waits for.
// In stream order. Light: types only from the validator, so a daemon may import this.
import type { ContainerRunSpec, RunMount } from '../../containerd/types.ts';
import type { ContainerSpecSpec, ContainerMountSpec } from '../../contract/resources/container-spec.ts';
import { normalizeImageReference } from '../image-ref.ts';
import type { ContainerConfig, ContainerHealthConfig } from '../kinds.ts';
import { parseHumanBytes, parseMillicores } from '../quantities.ts';
import type { TypedConfig } from './typed.ts';

/** Kubernetes's probe defaults (core/v1 Probe). */
export const PROBE_DEFAULTS = { initialDelaySeconds: 0, periodSeconds: 10, timeoutSeconds: 1, successThreshold: 1, failureThreshold: 3 } as const;
/** Where HTTP and TCP probes dial without a host: a probed container shares the host's network. */
const PROBE_DEFAULT_HOST = '127.0.0.1';

/** A container's health probe, every default filled in (machined's workloads/probes.ts HealthProbe). */
export interface ContainerProbe {
  exec?: { command: string[] };
  httpGet?: { port: number; path: string; host: string };
  tcpSocket?: { port: number; host: string };
  initialDelaySeconds: number;
  periodSeconds: number;
  timeoutSeconds: number;
  successThreshold: number;
  failureThreshold: number;
}

/** What a container waits for before it starts (Talos's dependsOn). */
export interface ContainerDependsOn {
  paths: string[];
  networks: string[];
  time: boolean;
  containers: string[];
}

export interface DeclaredContainer {
  spec: ContainerRunSpec;
  probe?: ContainerProbe;
  dependsOn: ContainerDependsOn;
  /** The ContainerSpecs resource's spec, as Talos's ConfigController projects the document. */
  resource: ContainerSpecSpec;
}

/** Talos's option defaults: host paths read-only unless `rw`; a tmpfs writable unless `ro`. `rw` itself is never passed on. */
function talosOptions(options: readonly string[] | undefined, readOnlyDefault: boolean): string[] {
  const opts = options ?? [];
  if (opts.includes('rw')) return opts.filter((o) => o !== 'rw');
  return readOnlyDefault && !opts.includes('ro') ? [...opts, 'ro'] : [...opts];
}

type Mount = NonNullable<ContainerConfig['mounts']>[number];

/** Talos's ContainerMountSpec of a mount (the resource's form). */
function mountSpec(m: Mount): ContainerMountSpec | undefined {
  if (m.tmpfs) {
    const size = m.tmpfs.size !== undefined ? parseHumanBytes(m.tmpfs.size) : 0;
    return { kind: 'tmpfs', destination: m.tmpfs.destination, ...(typeof size === 'number' && size > 0 ? { size } : {}), ...nonEmpty('options', talosOptions(m.tmpfs.options, false)) };
  }
  if (m.hostPath) return { kind: 'hostPath', source: m.hostPath.source, destination: m.hostPath.destination, options: talosOptions(m.hostPath.options, true) };
  // Refused by validation until user volumes exist (issue 46); Talos's volume id, for the record.
  if (m.userVolume) return { kind: 'userVolume', volumeID: `u-${m.userVolume.name ?? ''}`, destination: m.userVolume.destination, options: talosOptions(m.userVolume.options, true) };
  return undefined;
}

/**
 * The OCI mount of a resolved mount. Both kinds are nosuid and nodev (EPHEMERAL, where host
 * paths come from, is mounted so anyway); a bind is not recursive and private unless the
 * operator asks for rbind and rshared; a tmpfs is world-writable with the sticky bit (mode
 * 1777, as Docker's --tmpfs), so that a container running as another uid can use it.
 */
export function runMount(m: ContainerMountSpec): RunMount | undefined {
  const opts = m.options ?? [];
  const plain = opts.filter((o) => !['rbind', 'rshared'].includes(o));
  if (m.kind === 'tmpfs') {
    return { type: 'tmpfs', destination: m.destination, options: unique(['nosuid', 'nodev', 'mode=1777', ...plain, ...(m.size ? [`size=${m.size}`] : [])]) };
  }
  if (m.kind === 'hostPath' && m.source) {
    const bind = opts.includes('rbind') ? 'rbind' : 'bind';
    const propagation = opts.includes('rshared') ? 'rshared' : 'rprivate';
    return { type: 'bind', source: m.source, destination: m.destination, options: unique([bind, 'nosuid', 'nodev', ...plain, propagation]) };
  }
  return undefined;
}

const unique = (xs: string[]) => [...new Set(xs)];
const nonEmpty = <K extends string>(k: K, xs: readonly string[] | undefined): Partial<Record<K, string[]>> => (xs && xs.length ? ({ [k]: [...xs] } as Record<K, string[]>) : {});

function probeOf(h: ContainerHealthConfig): ContainerProbe {
  const timing = {
    initialDelaySeconds: h.initialDelaySeconds ?? PROBE_DEFAULTS.initialDelaySeconds,
    periodSeconds: h.periodSeconds ?? PROBE_DEFAULTS.periodSeconds,
    timeoutSeconds: h.timeoutSeconds ?? PROBE_DEFAULTS.timeoutSeconds,
    successThreshold: h.successThreshold ?? PROBE_DEFAULTS.successThreshold,
    failureThreshold: h.failureThreshold ?? PROBE_DEFAULTS.failureThreshold,
  };
  if (h.exec) return { exec: { command: [...h.exec.command] }, ...timing };
  if (h.httpGet) return { httpGet: { port: h.httpGet.port, path: h.httpGet.path ?? '/', host: h.httpGet.host ?? PROBE_DEFAULT_HOST }, ...timing };
  return { tcpSocket: { port: h.tcpSocket!.port, host: h.tcpSocket!.host ?? PROBE_DEFAULT_HOST }, ...timing };
}

/** One document, resolved (the validator has checked it: its values parse). */
function declared(d: ContainerConfig, health: ContainerHealthConfig | undefined): DeclaredContainer {
  const name = d.name ?? '';
  const image = d.image ? (normalizeImageReference(d.image) ?? d.image) : '';
  const mounts = (d.mounts ?? []).map(mountSpec).filter((m): m is ContainerMountSpec => m !== undefined);
  const cpu = d.resources?.limits?.cpu ? parseMillicores(d.resources.limits.cpu) : undefined;
  const memory = d.resources?.limits?.memory ? parseHumanBytes(d.resources.limits.memory) : undefined;
  const cpuMillis = typeof cpu === 'number' ? cpu : undefined;
  const memoryBytes = typeof memory === 'number' && memory > 0 ? memory : undefined;
  const privileged = d.security?.profile === 'privileged';
  const add = d.security?.capabilities?.add ?? [];
  const drop = d.security?.capabilities?.drop ?? [];
  const host = d.network?.mode === 'host';
  const runAs = d.runAs && (d.runAs.uid !== undefined || d.runAs.gid !== undefined) ? { ...d.runAs } : undefined;
  const dependsOn: ContainerDependsOn = {
    paths: [...(d.dependsOn?.paths ?? [])],
    networks: [...(d.dependsOn?.networks ?? [])],
    time: d.dependsOn?.time ?? false,
    containers: [...(d.dependsOn?.containers ?? [])],
  };
  const spec: ContainerRunSpec = {
    name,
    image,
    ...(d.entrypoint?.length ? { entrypoint: [...d.entrypoint] } : {}),
    ...(d.args?.length ? { args: [...d.args] } : {}),
    ...(d.workingDir ? { workingDir: d.workingDir } : {}),
    ...(runAs ? { runAs } : {}),
    environment: [...(d.environment ?? [])],
    mounts: mounts.map(runMount).filter((m): m is RunMount => m !== undefined),
    profile: privileged ? 'privileged' : 'restricted',
    capabilities: { add: [...add], drop: [...drop] },
    network: host ? 'host' : 'none',
    limits: { ...(cpuMillis !== undefined ? { cpuMillis } : {}), ...(memoryBytes !== undefined ? { memoryBytes } : {}) },
  };
  const resource: ContainerSpecSpec = {
    image: { ref: image },
    ...nonEmpty('entrypoint', d.entrypoint),
    ...nonEmpty('args', d.args),
    ...(d.workingDir ? { workingDir: d.workingDir } : {}),
    ...(runAs ? { runAs } : {}),
    ...nonEmpty('environment', d.environment),
    ...(mounts.length ? { mounts } : {}),
    ...(privileged || add.length || drop.length ? { security: { ...(privileged ? { privileged } : {}), ...nonEmpty('capabilitiesAdd', add), ...nonEmpty('capabilitiesDrop', drop) } } : {}),
    ...(host ? { network: { hostNetwork: true } } : {}),
    ...(cpuMillis !== undefined || memoryBytes !== undefined ? { resources: { ...(memoryBytes !== undefined ? { memoryLimit: memoryBytes } : {}), ...(cpuMillis !== undefined ? { cpuLimit: cpuMillis } : {}) } } : {}),
    ...(Object.values(dependsOn).some((v) => v === true || (Array.isArray(v) && v.length))
      ? { dependsOn: { ...nonEmpty('paths', dependsOn.paths), ...nonEmpty('networks', dependsOn.networks), ...(dependsOn.time ? { time: true } : {}), ...nonEmpty('containers', dependsOn.containers) } }
      : {}),
  };
  return { spec, ...(health ? { probe: probeOf(health) } : {}), dependsOn, resource };
}

/** Every ContainerConfig document, resolved, with the ContainerHealthConfig of its name. */
export function containerDocs(c: TypedConfig | undefined): DeclaredContainer[] {
  const docs = c?.documents ?? [];
  const health = new Map<string, ContainerHealthConfig>();
  for (const d of docs) if (d.kind === 'ContainerHealthConfig') health.set(d.name, d);
  return docs.filter((d): d is ContainerConfig => d.kind === 'ContainerConfig').map((d) => declared(d, health.get(d.name ?? '')));
}
