// Members.cluster.talos.dev: every node of the cluster, as the cluster registry (kept in etcd,
// served to workers by trustd) knows it: hostname, addresses, machine type and OS. machined
// writes them on every node, id the member's hostname. Talos: pkg/machinery/resources/cluster/member.go.
import type { ResourceDefinition } from './definition.ts';

export interface MemberSpec {
  nodeId: string;
  addresses: string[];
  hostname: string;
  /** Talos's machine.Type text: 'controlplane' or 'worker'. */
  machineType: string;
  operatingSystem: string;
  /** Control planes: the API server port (Talos); Bronze has no Kubernetes API, so it is absent. */
  controlPlane?: { apiServerPort: number };
}

export const CLUSTER_NAMESPACE = 'cluster';
export const MEMBER_TYPE = 'Members.cluster.talos.dev';

/** Talos's machine types (enums.proto MachineType), by their configuration text. */
export const MACHINE_TYPES: Readonly<Record<string, number>> = { unknown: 0, init: 1, controlplane: 2, worker: 3 };

export const memberDefinition: ResourceDefinition<MemberSpec> = {
  type: MEMBER_TYPE,
  displayType: 'Member',
  aliases: [],
  defaultNamespace: CLUSTER_NAMESPACE,
  owner: 'machined',
  printColumns: [
    { name: 'Hostname', jsonPath: '{.hostname}' },
    { name: 'Machine Type', jsonPath: '{.machineType}' },
    { name: 'OS', jsonPath: '{.operatingSystem}' },
    { name: 'Addresses', jsonPath: '{.addresses}' },
  ],
  proto: {
    message: 'talos.resource.definitions.cluster.MemberSpec',
    fields: { machine_type: { as: (t: string) => MACHINE_TYPES[t] ?? 0 } },
  },
};
