// The workload documents: Talos's ContainerConfig (pkg/machinery/config/types/container/: a
// container machined runs through containerd, without Kubernetes) with Talos's fields, defaults,
// rules and messages, and Bronze's own ContainerHealthConfig (a health probe of a declared
// container; none of Talos, Bottlerocket or Flatcar has one, so it is a kind of its own and a
// ContainerConfig stays valid under Talos's schema). Both apply without a reboot.
//
// Bronze checks more than Talos in four places, each because a node would otherwise be exposed
// or fail later with a worse message: a container may not take the name of one of Bronze's
// processes (RESERVED_CONTAINER_NAMES below); a hostPath mount reaches only the operator's part
// of /var (HOST_PATHS below); a userVolume mount is refused until Bronze makes user volumes;
// capabilities must be ones Linux has, the working directory absolute and a tmpfs size a size
// (Talos would fail at start).
import { CAPABILITY_NAMES, NEVER_GRANTED } from '../lib/capability-names.ts';
import { z } from '../lib/zod.ts';
import { asArray, asObject, asString, bool, checked, intIn, scalarString, type Obj, type PathSegment, type Reporter } from './fields.ts';
import { absolutePathError, hostnameError, ipBytes } from './formats.ts';
import { imageReferenceError, parseImageReference } from './image-ref.ts';
import type { KindEntry, KindSpec } from './kind-spec.ts';
import { parseHumanBytes, parseMillicores } from './quantities.ts';
import { DAEMONS } from '../contract/paths.ts';

const q = (v: unknown) => JSON.stringify(v);

const CONTAINER_NAME_MAX = 63;

/**
 * Names a container may not take: PID 1's (machined, `init`), the daemons', etcd, containerd and
 * its runc, and the CLI's. A container's containerd id and log live in its own namespace
 * (taloscontainers), apart from the services' (system), so nothing would clash; the names are
 * kept so that a name means one thing to the operator where services and containers meet
 * (`bronzectl logs apid` is the service's log, `bronzectl restart apid` restarts a container)
 * and no container passes for one of Bronze's own in the process and event listings.
 */
export const RESERVED_CONTAINER_NAMES: readonly string[] = ['machined', 'init', ...DAEMONS, 'etcd', 'containerd', 'runc', 'bronzectl'];

/** Talos's mount options (mounts.go validMountOptions). */
const MOUNT_OPTIONS = ['ro', 'rw', 'noexec', 'nosuid', 'nodev', 'noatime', 'rbind', 'rshared'] as const;
/** Talos's dependsOn.networks conditions (runtime.go validNetworkConditions). */
const NETWORK_CONDITIONS = ['addresses', 'connectivity', 'hostname', 'etcfiles'] as const;
const SECURITY_PROFILES = ['restricted', 'privileged'] as const;
const NETWORK_MODES = ['none', 'host'] as const;

/** Linux's capabilities (lib/capability-names.ts), without CAP_: a name runc would refuse at start is refused here. */
export const LINUX_CAPABILITIES: readonly string[] = CAPABILITY_NAMES.map((c) => c.slice('CAP_'.length));
/** Those no container is ever granted (lib/capability-names.ts NEVER_GRANTED), without CAP_: `add` refuses them. */
const NEVER_GRANTED_CAPABILITIES: readonly string[] = NEVER_GRANTED.map((c) => c.slice('CAP_'.length));

/**
 * Where a hostPath mount may come from. Bronze's root is its verified, read-only image and
 * /system, /proc, /sys and /dev are the system's own: a container that saw them could read the
 * node's secrets or change its devices, so only /var (EPHEMERAL, the operator's data, user
 * volumes under /var/mnt) is offered, less the parts of it that hold Bronze's own state:
 * containerd's store (a container could rewrite the images others run), etcd's database (the
 * cluster's secrets) and the staged upgrades (a container could swap the next OS image). A
 * source that contains one of those (/var, /var/lib) is refused as well. The check is on the
 * normalised path; machined resolves symbolic links before each start and checks again
 * (checkBindSources in src/machined/workloads/containerd-workloads.ts).
 */
const HOST_PATHS = {
  root: '/var/',
  protected: ['/var/lib/containerd', '/var/lib/etcd', '/var/lib/bronze'],
} as const;

/** Why a host path may not be bind-mounted into a container, or undefined. */
export function hostPathError(source: string): string | undefined {
  if (absolutePathError(source) || (source.length > 1 && source.endsWith('/'))) {
    return `hostPath.source ${q(source)} must be a normalised absolute path (no "//", "." or "..", no trailing "/")`;
  }
  if (!source.startsWith(HOST_PATHS.root)) {
    return `hostPath.source ${q(source)} is not allowed: containers may mount host paths under ${HOST_PATHS.root} only (the rest of the node is its read-only image and the system's own state)`;
  }
  for (const p of HOST_PATHS.protected) {
    if (source === p || source.startsWith(`${p}/`) || p.startsWith(`${source}/`)) {
      return `hostPath.source ${q(source)} is not allowed: ${p} holds Bronze's own state (${HOST_PATHS.protected.join(', ')} cannot be mounted into containers)`;
    }
  }
  return undefined;
}

/** Talos's container name rule and messages (container_config.go ValidateName). */
export function containerNameError(name: string): string | undefined {
  if (name === '') return 'name is required';
  if (name.length > CONTAINER_NAME_MAX) return `name ${q(name)} must be ${CONTAINER_NAME_MAX} characters or fewer`;
  if (!/^[a-z0-9-]+$/.test(name)) return `name ${q(name)}: name can only contain lowercase ASCII letters, digits and hyphens`;
  return undefined;
}

/** Talos's ValidateAbsPath: required and absolute. */
const absPath = (what: string) => checked((s) => (s === '' ? `${what} is required` : s.startsWith('/') ? undefined : `${what} ${q(s)} must be an absolute path`));

/** Talos's ValidateCapabilityName, then whether Linux has it. */
function capabilityError(field: string, cap: string): string | undefined {
  if (cap === '') return `${field}: capability name must not be empty`;
  if (cap.startsWith('CAP_')) return `${field}: capability ${q(cap)} must be given without the CAP_ prefix`;
  if (cap.toUpperCase() !== cap) return `${field}: capability ${q(cap)} must be upper case`;
  if (!/^[A-Z_]+$/.test(cap)) return `${field}: capability ${q(cap)} may only contain upper case letters and underscores`;
  if (cap !== 'ALL' && !LINUX_CAPABILITIES.includes(cap)) return `${field}: ${q(cap)} is not a Linux capability`;
  return undefined;
}

/** Talos's limits.cpu rule ("" is unset). */
function cpuError(s: string): string | undefined {
  const m = s === '' ? 0 : parseMillicores(s);
  return typeof m === 'string' ? m : undefined;
}

const oneOf = (values: readonly string[], message: (s: string) => string) => checked((s) => (s === '' || values.includes(s) ? undefined : message(s)));

function build() {
  const apiVersion = z.literal('v1alpha1');
  const options = z.array(checked((o) => ((MOUNT_OPTIONS as readonly string[]).includes(o) ? undefined : `unsupported mount option ${q(o)}`)));
  const sizeOf = (what: string) =>
    scalarString().pipe(
      checked((s) => {
        const n = s === '' ? 0 : parseHumanBytes(s);
        return typeof n === 'string' ? `${what} ${q(s)} is not a valid size: ${n}` : undefined;
      }),
    );
  const capabilities = (field: string) => z.array(checked((c) => capabilityError(field, c)));
  const port = () => intIn(1, 65535, 'port');
  const probeHost = () => checked((s) => (ipBytes(s) || !hostnameError(s) ? undefined : `${q(s)} is not a valid host: expected an IP address or a host name`));

  const containerConfigSchema = z.strictObject({
    apiVersion,
    kind: z.literal('ContainerConfig'),
    name: checked(containerNameError).optional(),
    image: checked((s) => (s === '' ? 'image is required' : imageReferenceError(s))).optional(),
    entrypoint: z.array(scalarString()).optional(),
    args: z.array(scalarString()).optional(),
    workingDir: checked((s) => (s === '' || s.startsWith('/') ? undefined : `workingDir ${q(s)} must be an absolute path`)).optional(),
    runAs: z
      .strictObject({
        uid: z.number().superRefine((n, ctx) => void ((Number.isInteger(n) && n >= 0 && n <= 0x7fffffff) || ctx.addIssue({ code: 'custom', message: `runAs.uid must be non-negative, got ${n}` }))).optional(),
        gid: z.number().superRefine((n, ctx) => void ((Number.isInteger(n) && n >= 0 && n <= 0x7fffffff) || ctx.addIssue({ code: 'custom', message: `runAs.gid must be non-negative, got ${n}` }))).optional(),
      })
      .optional(),
    environment: z.array(checked((e) => (e.includes('=') ? undefined : `${q(e)} must be in KEY=value form`))).optional(),
    mounts: z
      .array(
        z.strictObject({
          userVolume: z.strictObject({ name: z.string().optional(), destination: absPath('userVolume.destination'), options: options.optional() }).optional(),
          tmpfs: z.strictObject({ destination: absPath('tmpfs.destination'), size: sizeOf('tmpfs.size').optional(), options: options.optional() }).optional(),
          hostPath: z.strictObject({ source: absPath('hostPath.source'), destination: absPath('hostPath.destination'), options: options.optional() }).optional(),
        }),
      )
      .optional(),
    security: z
      .strictObject({
        profile: oneOf(SECURITY_PROFILES, (s) => `unsupported security profile ${q(s)}, expected restricted or privileged`).optional(),
        capabilities: z.strictObject({ add: capabilities('capabilities.add').optional(), drop: capabilities('capabilities.drop').optional() }).optional(),
      })
      .optional(),
    network: z.strictObject({ mode: oneOf(NETWORK_MODES, (s) => `unsupported network mode ${q(s)}, expected none or host`).optional() }).optional(),
    resources: z
      .strictObject({
        limits: z
          .strictObject({
            cpu: scalarString().pipe(checked(cpuError)).optional(),
            memory: sizeOf('limits.memory').optional(),
          })
          .optional(),
      })
      .optional(),
    dependsOn: z
      .strictObject({
        paths: z.array(absPath('dependsOn.paths entry')).optional(),
        networks: z.array(checked((c) => ((NETWORK_CONDITIONS as readonly string[]).includes(c) ? undefined : `unsupported dependsOn.networks condition ${q(c)}`))).optional(),
        time: bool().optional(),
        containers: z.array(checked((c) => (c === '' ? 'dependsOn.containers entry must not be empty' : undefined))).optional(),
      })
      .optional(),
  });

  const containerHealthConfigSchema = z.strictObject({
    apiVersion,
    kind: z.literal('ContainerHealthConfig'),
    /** The ContainerConfig it probes. */
    name: checked(containerNameError),
    exec: z.strictObject({ command: z.array(scalarString()).min(1) }).optional(),
    httpGet: z
      .strictObject({
        port: port(),
        path: checked((s) => (s.startsWith('/') ? undefined : `path ${q(s)} must start with "/"`)).optional(),
        host: probeHost().optional(),
      })
      .optional(),
    tcpSocket: z.strictObject({ port: port(), host: probeHost().optional() }).optional(),
    initialDelaySeconds: intIn(0, 0x7fffffff, 'initialDelaySeconds').optional(),
    periodSeconds: intIn(1, 0x7fffffff, 'periodSeconds').optional(),
    timeoutSeconds: intIn(1, 0x7fffffff, 'timeoutSeconds').optional(),
    successThreshold: intIn(1, 0x7fffffff, 'successThreshold').optional(),
    failureThreshold: intIn(1, 0x7fffffff, 'failureThreshold').optional(),
  });
  return { containerConfigSchema, containerHealthConfigSchema };
}

let built: ReturnType<typeof build> | undefined;

/** The schemas of the workload kinds, built once, when first asked for. */
export function containerKindSchemas(): ReturnType<typeof build> {
  return (built ??= build());
}

const MOUNT_SOURCES = ['userVolume', 'tmpfs', 'hostPath'] as const;

/** Talos's checks across a ContainerConfig's fields, and Bronze's (see the head of the file). */
function checkContainer(doc: Obj, report: Reporter): void {
  const name = asString(doc.name);
  if (name === undefined) report(['name'], 'name is required', 'key', 'missing');
  else if (RESERVED_CONTAINER_NAMES.includes(name)) {
    report(['name'], `name ${q(name)} is taken: it names one of Bronze's own services (${RESERVED_CONTAINER_NAMES.join(', ')}); choose another`);
  }
  const image = asString(doc.image);
  if (image === undefined) report(['image'], 'image is required', 'key', 'missing');
  else {
    const ref = parseImageReference(image);
    if (typeof ref !== 'string' && !ref.digest) {
      report(['image'], `advice: container ${q(name ?? '')}: image ${q(image)} is not digest-pinned, the running image may change on restart (pin it as repo@sha256:...)`, 'value', 'advice');
    }
  }

  const destinations = new Map<string, number>();
  asArray(doc.mounts).forEach((m, i) => {
    const mount = asObject(m);
    if (!mount) return;
    const set = MOUNT_SOURCES.filter((s) => mount[s] !== undefined);
    if (set.length !== 1) {
      report(['mounts', i], 'exactly one of userVolume, tmpfs or hostPath must be set');
      return;
    }
    const kind = set[0]!;
    const body = asObject(mount[kind]);
    if (!body) return;
    const at: PathSegment[] = ['mounts', i, kind];
    const opts = asArray(body.options);
    if (opts.includes('ro') && opts.includes('rw')) report([...at, 'options'], 'mount options ro and rw are mutually exclusive');
    if (kind === 'userVolume') {
      if (!asString(body.name)) report([...at, 'name'], 'userVolume.name is required', 'key', 'missing');
      report(at, 'user volumes are not available yet: Bronze makes no user volumes (UserVolumeConfig) to mount; use a hostPath under /var/ or a tmpfs', 'key', 'unsupported');
    }
    if (kind === 'hostPath' && typeof body.source === 'string' && body.source.startsWith('/')) {
      const why = hostPathError(body.source);
      if (why) report([...at, 'source'], why);
    }
    const dest = asString(body.destination);
    if (dest === undefined || dest === '') return;
    const first = destinations.get(dest);
    if (first !== undefined) report([...at, 'destination'], `duplicate destination ${q(dest)}: mounts[${first}] mounts there already`);
    else destinations.set(dest, i);
  });

  const caps = asObject(asObject(doc.security)?.capabilities);
  const add = asArray(caps?.add);
  const drop = asArray(caps?.drop);
  add.forEach((c, i) => {
    if (c === 'ALL') report(['security', 'capabilities', 'add', i], 'capabilities.add does not accept ALL, use profile: privileged instead');
    else if (drop.includes(c)) report(['security', 'capabilities', 'add', i], `capability ${q(c)} appears in both add and drop`);
    else if (typeof c === 'string' && NEVER_GRANTED_CAPABILITIES.includes(c)) report(['security', 'capabilities', 'add', i], `capability ${q(c)} is never granted to a container, privileged or not (loading kernel modules and rebooting the node are the node's alone)`);
  });

  asArray(asObject(doc.dependsOn)?.containers).forEach((c, i) => {
    if (c === name && name !== undefined) report(['dependsOn', 'containers', i], `container ${q(name)} cannot depend on itself`);
  });
}

/** Talos's container-level check: dependsOn.containers name declared containers and form no cycle. */
function checkDependencies(own: readonly KindEntry[]): void {
  const byName = new Map<string, KindEntry>();
  for (const e of own) if (typeof e.data.name === 'string') byName.set(e.data.name, e);
  const edges = new Map<string, string[]>();
  for (const [name, e] of byName) {
    const deps = asArray(asObject(e.data.dependsOn)?.containers).filter((d): d is string => typeof d === 'string' && d !== '');
    deps.forEach((d, i) => {
      if (!byName.has(d)) report(e, i, `container ${q(name)} depends on container ${q(d)}, which is not configured`);
    });
    edges.set(name, deps.filter((d) => byName.has(d) && d !== name));
  }
  // Depth-first, over sorted names so a configuration always reports the same cycle.
  const done = new Set<string>();
  const stack: string[] = [];
  const visit = (n: string) => {
    if (done.has(n)) return;
    const open = stack.indexOf(n);
    if (open >= 0) {
      const cycle = [...stack.slice(open), n];
      const from = byName.get(cycle[0]!)!;
      const i = asArray(asObject(from.data.dependsOn)?.containers).indexOf(cycle[1]);
      report(from, i, `container dependsOn cycle detected: ${cycle.join(' -> ')}`);
      return;
    }
    stack.push(n);
    for (const d of edges.get(n) ?? []) visit(d);
    stack.pop();
    done.add(n);
  };
  for (const n of [...byName.keys()].sort()) visit(n);
}

function report(e: KindEntry, index: number, message: string): void {
  e.report(['dependsOn', 'containers', index], message);
}

/** A probe names a declared container, and HTTP and TCP probes one that shares the host's network. */
function checkProbes(own: readonly KindEntry[], all: readonly KindEntry[]): void {
  const containers = new Map(all.filter((e) => e.kind === 'ContainerConfig').map((e) => [e.data.name, e.data]));
  for (const e of own) {
    const name = e.data.name;
    if (typeof name !== 'string') continue;
    const target = containers.get(name);
    if (!target) {
      e.report(['name'], `no ContainerConfig named ${q(name)}: a ContainerHealthConfig probes a declared container, by its name`);
      continue;
    }
    const mode = asObject(target.network)?.mode;
    const dial = e.data.httpGet !== undefined ? 'httpGet' : e.data.tcpSocket !== undefined ? 'tcpSocket' : undefined;
    if (dial && mode !== 'host') {
      e.report([dial], `ContainerConfig(${name}) has no network of its own to reach (network.mode: ${typeof mode === 'string' && mode ? mode : 'none'}): HTTP and TCP probes dial from the node, so they need network.mode: host; use exec otherwise`, 'key');
    }
  }
}

export const CONTAINER_KINDS: readonly KindSpec[] = [
  {
    kind: 'ContainerConfig',
    get schema() {
      return containerKindSchemas().containerConfigSchema;
    },
    named: true,
    example: { name: 'web', image: 'docker.io/library/busybox@sha256:0000000000000000000000000000000000000000000000000000000000000000', network: { mode: 'host' } },
    check: checkContainer,
    checkAcross: checkDependencies,
    conflicts: [],
  },
  {
    // Bronze's own kind: a ContainerConfig's health probe, in Kubernetes's names.
    kind: 'ContainerHealthConfig',
    get schema() {
      return containerKindSchemas().containerHealthConfigSchema;
    },
    named: true,
    example: { name: 'web', exec: { command: ['/bin/true'] } },
    check(doc, report) {
      const actions = ['exec', 'httpGet', 'tcpSocket'].filter((a) => doc[a] !== undefined);
      if (actions.length !== 1) report(actions.length ? [actions[1]!] : [], 'a health probe needs exactly one of exec, httpGet or tcpSocket', actions.length ? 'key' : 'value');
    },
    checkAcross: checkProbes,
    conflicts: [],
  },
];

type Schemas = ReturnType<typeof build>;
export type ContainerConfig = z.output<Schemas['containerConfigSchema']>;
export type ContainerHealthConfig = z.output<Schemas['containerHealthConfigSchema']>;
