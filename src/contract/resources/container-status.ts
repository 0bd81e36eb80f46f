// ContainerStatuses.containers.bronze.dev (namespace containers, id the container's name):
// Bronze's own, until Talos writes the ContainerStatus it announces (containers.go: "arrive in
// follow-up controllers"): how the running instance of a declared container is doing: its
// phase, process, starts, last exit, and its health when a ContainerHealthConfig probes it.
// machined's workload controller writes it (src/machined/workloads/).
import type { ResourceDefinition } from './definition.ts';
import { CONTAINERS_NAMESPACE } from './container-spec.ts';

export const CONTAINER_STATUS_TYPE = 'ContainerStatuses.containers.bronze.dev';

export type ContainerPhase = 'waiting' | 'starting' | 'running' | 'exited' | 'failed';

export interface ContainerStatusSpec {
  phase: ContainerPhase;
  /** The image reference it runs. */
  image: string;
  /** Its init process; 0 when not running. */
  pid?: number;
  /** Times it was started since the document was declared (1: the first start). */
  starts?: number;
  /** When it last started (RFC 3339). */
  startedAt?: string;
  exitCode?: number;
  /** Absent: no health probe is declared. */
  healthy?: boolean;
  /** Why it waits or failed, or the last probe failure. */
  message?: string;
  /** The declared document's hash this instance runs. */
  hash?: string;
}

export const containerStatusDefinition: ResourceDefinition<ContainerStatusSpec> = {
  type: CONTAINER_STATUS_TYPE,
  displayType: 'ContainerStatus',
  // Its automatic initials, 'cs', would name Talos's ContainerSpecs too: the names are spelled out.
  aliases: ['containerstatus', 'containerstatuses'],
  skipAutomaticAliases: true,
  defaultNamespace: CONTAINERS_NAMESPACE,
  owner: 'machined',
  printColumns: [
    { name: 'Phase', jsonPath: '{.phase}' },
    { name: 'Healthy', jsonPath: '{.healthy}' },
    { name: 'Starts', jsonPath: '{.starts}' },
    { name: 'Image', jsonPath: '{.image}' },
  ],
  proto: {
    message: 'bronze.resource.definitions.containers.ContainerStatusSpec',
  },
};
