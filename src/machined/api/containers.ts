// Containers, Stats and Restart: the containers of one containerd namespace, as Talos's
// machined answers them, over the node's container runtime (src/containerd/types.ts's
// WorkloadsApi; machined passes a getter, since containerd comes up after the API does).
//
// Namespaces, as Talos's: the request names a containerd namespace and a driver. talosctl sends
// `system` (driver CONTAINERD) by default and `k8s.io` (driver CRI) with -k; Bronze's own
// containers (ContainerConfig) are in `taloscontainers`, as Talos's. Bronze has one containerd
// and no CRI plugin, so both drivers read the namespace from it; CRI is, as in Talos, only for
// `k8s.io`. Bronze's services are not containers: `system` lists whatever containerd holds in
// that namespace (nothing of Bronze's own).
//
// Per container, Talos's fields for a plain containerd container (no pod): id, name and pod_id
// are the container id (talosctl draws a container whose id differs from its pod's as a pod
// member), status in capitals (RUNNING, STOPPED, ...). Restart asks the runtime for a new
// instance; Talos sends SIGTERM and lets the container's supervisor start the next one, which
// is what WorkloadsApi.restart does in one step.
import type * as grpc from '@grpc/grpc-js';
import type { InstanceInfo, WorkloadsApi } from '../../containerd/types.ts';
import { invalidArgument, unary, unavailable } from './common.ts';

/** The node's container runtime, or undefined until containerd is up. */
export type WorkloadsSource = () => WorkloadsApi | undefined;

/** The namespace the CRI driver reads (Kubernetes'). */
const K8S_NAMESPACE = 'k8s.io';

/** containerd's rule for a namespace name (containerd/namespaces: identifiers.Validate). */
const NAMESPACE_RE = /^[A-Za-z0-9]+(?:[._-][A-Za-z0-9]+)*$/;
const NAMESPACE_MAX = 76;

// The runtime's errors are thrown as they are: status.ts answers containerd's gRPC code (NOT_FOUND
// for an unknown container, naming it and its namespace), a registry's failure by its kind.

/** The runtime, or UNAVAILABLE while it is not up. */
export function runtimeOf(workloads: WorkloadsSource | undefined): WorkloadsApi {
  const w = workloads?.();
  if (!w) throw unavailable('containerd is not running yet');
  return w;
}

/** The containerd namespace a Containers/Stats/Restart/Logs request names, checked. */
export function containerNamespace(namespace: string | undefined, driver: string | number | undefined): string {
  const ns = namespace ?? '';
  if (ns === '') throw invalidArgument('namespace is required: taloscontainers (ContainerConfig containers), system, or k8s.io');
  if (ns.length > NAMESPACE_MAX || !NAMESPACE_RE.test(ns)) throw invalidArgument(`invalid containerd namespace ${JSON.stringify(ns)}: letters and digits, separated by single '.', '_' or '-', at most ${NAMESPACE_MAX} characters`);
  const d = driver ?? 'CONTAINERD';
  if (d === 'CRI' || d === 1) {
    if (ns !== K8S_NAMESPACE) throw invalidArgument(`the CRI driver is only for the ${K8S_NAMESPACE} namespace, not ${JSON.stringify(ns)}`);
  } else if (d !== 'CONTAINERD' && d !== 0) {
    throw invalidArgument(`unsupported container driver ${JSON.stringify(d)}`);
  }
  return ns;
}

/** The container id a Restart/Logs request names: required (whether it exists is the runtime's to say). */
export function containerId(id: string | undefined): string {
  if (!id) throw invalidArgument('container id is required');
  return id;
}

/** By id, in code-unit order (as the CLI has always listed them). */
const byId = (a: { id: string }, b: { id: string }) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

interface ContainersRequest {
  namespace?: string;
  driver?: string | number;
}

interface RestartRequest extends ContainersRequest {
  id?: string;
}

function containerInfo(ns: string, c: InstanceInfo) {
  return {
    namespace: ns,
    id: c.id,
    internal_id: c.id,
    uid: '',
    image: c.image,
    pid: c.pid,
    status: c.status.toUpperCase(),
    pod_id: c.id,
    name: c.id,
    network_namespace: '',
  };
}

export function containersHandlers(deps: { workloads?: WorkloadsSource } = {}): Record<string, grpc.handleUnaryCall<any, any>> {
  return {
    Containers: unary(async (req: ContainersRequest) => {
      const ns = containerNamespace(req.namespace, req.driver);
      const w = runtimeOf(deps.workloads);
      const containers = (await w.listContainers(ns)).map((c) => containerInfo(ns, c)).sort(byId);
      return { messages: [{ containers }] };
    }),
    Stats: unary(async (req: ContainersRequest) => {
      const ns = containerNamespace(req.namespace, req.driver);
      const w = runtimeOf(deps.workloads);
      const stats = (await w.stats(ns)).map((s) => ({ namespace: ns, id: s.id, pod_id: s.id, name: s.id, memory_usage: s.memoryUsage, cpu_usage: s.cpuUsageNanos })).sort(byId);
      return { messages: [{ stats }] };
    }),
    Restart: unary(async (req: RestartRequest) => {
      const ns = containerNamespace(req.namespace, req.driver);
      const id = containerId(req.id);
      await runtimeOf(deps.workloads).restart(ns, id);
      return { messages: [{}] };
    }),
  };
}
