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
import { CONTAINERS_NAMESPACE, type InstanceInfo, type WorkloadsApi } from '../../containerd/types.ts';
import { ApiError, invalidArgument, notFound, unary, unavailable } from './common.ts';

export { CONTAINERS_NAMESPACE };

/** The node's container runtime, or undefined until containerd is up. */
export type WorkloadsSource = () => WorkloadsApi | undefined;

export const K8S_NAMESPACE = 'k8s.io';

/** containerd's rule for a namespace name (containerd/namespaces: identifiers.Validate). */
const NAMESPACE_RE = /^[A-Za-z0-9]+(?:[._-][A-Za-z0-9]+)*$/;
const NAMESPACE_MAX = 76;

/** The runtime, or UNAVAILABLE while it is not up. */
export function runtimeOf(workloads: WorkloadsSource | undefined): WorkloadsApi {
  const w = workloads?.();
  if (!w) throw unavailable('containerd is not running yet');
  return w;
}

/**
 * An error from the runtime as the status to answer with: containerd's API errors carry a gRPC
 * code (NOT_FOUND for an unknown image, ...), which the caller should see as it is; anything
 * else stays as thrown (statusOf decides, INTERNAL by default).
 */
export function runtimeError(err: unknown): unknown {
  if (err instanceof ApiError || !(err instanceof Error)) return err;
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'number' && Number.isInteger(code) && code > 0 && code <= 16) return new ApiError(code, err.message, { cause: err });
  return err;
}

/** Runs a runtime call, its errors mapped by runtimeError. */
export async function fromRuntime<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    throw runtimeError(err);
  }
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

/** The container `id` in `ns`, or NOT_FOUND naming it. */
export async function findContainer(w: WorkloadsApi, ns: string, id: string): Promise<InstanceInfo> {
  if (id === '') throw invalidArgument('container id is required');
  const found = (await fromRuntime(() => w.listContainers(ns))).find((c) => c.id === id);
  if (!found) throw notFound(`container ${JSON.stringify(id)} not found in namespace ${JSON.stringify(ns)}`);
  return found;
}

interface ContainersRequest {
  namespace?: string;
  driver?: string | number;
}

interface RestartRequest extends ContainersRequest {
  id?: string;
}

export function containerInfo(ns: string, c: InstanceInfo) {
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
      const list = await fromRuntime(() => w.listContainers(ns));
      const containers = list.map((c) => containerInfo(ns, c)).sort((a, b) => a.id.localeCompare(b.id));
      return { messages: [{ containers }] };
    }),
    Stats: unary(async (req: ContainersRequest) => {
      const ns = containerNamespace(req.namespace, req.driver);
      const w = runtimeOf(deps.workloads);
      const stats = (await fromRuntime(() => w.stats(ns)))
        .map((s) => ({ namespace: ns, id: s.id, pod_id: s.id, name: s.id, memory_usage: s.memoryUsage, cpu_usage: s.cpuUsageNanos }))
        .sort((a, b) => a.id.localeCompare(b.id));
      return { messages: [{ stats }] };
    }),
    Restart: unary(async (req: RestartRequest) => {
      const ns = containerNamespace(req.namespace, req.driver);
      const w = runtimeOf(deps.workloads);
      const id = req.id ?? '';
      await findContainer(w, ns, id);
      await fromRuntime(() => w.restart(ns, id));
      return { messages: [{}] };
    }),
  };
}
