// ContainerImageStatuses.containers.talos.dev (namespace containers, id the container's name,
// as Talos's GetImageDigest reads it): where the pull of a declared container's image stands:
// pending, pulling, ready (with the digest it resolved to) or failed (with the pull's error).
// machined's workload controller writes it. Talos: pkg/machinery/resources/containers/
// image_status.go, containers.proto (ContainerImageStatusSpec); the YAML keys are Talos's.
import type { ResourceDefinition } from './definition.ts';
import { CONTAINERS_NAMESPACE } from './container-spec.ts';

export const CONTAINER_IMAGE_STATUS_TYPE = 'ContainerImageStatuses.containers.talos.dev';

/** Talos's ContainerImagePhase names, in enums.proto's order (ContainersContainerImagePhase). */
const CONTAINER_IMAGE_PHASES = ['pending', 'pulling', 'ready', 'failed'] as const;
export type ContainerImagePhase = (typeof CONTAINER_IMAGE_PHASES)[number];

export interface ContainerImageStatusSpec {
  phase: ContainerImagePhase;
  /** The reference that was requested, in normal form. */
  image: string;
  /** The digest it resolved to, once the pull completes. */
  digest?: string;
  /** The last pull failure, verbatim. */
  error?: string;
}

export const containerImageStatusDefinition: ResourceDefinition<ContainerImageStatusSpec> = {
  type: CONTAINER_IMAGE_STATUS_TYPE,
  displayType: 'ContainerImageStatus',
  aliases: ['containerimagestatus', 'containerimagestatuses'],
  defaultNamespace: CONTAINERS_NAMESPACE,
  owner: 'machined',
  printColumns: [
    { name: 'Phase', jsonPath: '{.phase}' },
    { name: 'Digest', jsonPath: '{.digest}' },
  ],
  proto: {
    message: 'talos.resource.definitions.containers.ContainerImageStatusSpec',
    fields: { phase: { as: (p: string) => Math.max(0, CONTAINER_IMAGE_PHASES.indexOf(p as ContainerImagePhase)) } },
  },
};
