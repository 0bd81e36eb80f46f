// ContainerInstanceSpecs.containers.talos.dev (namespace containers, id `<container>-<generation>`,
// Talos's InstanceID): one execution of a declared container, a copy of its ContainerSpec (less
// what it waits for) made when it runs: the image reference is copied as the ContainerSpec gives
// it, not resolved to a digest (the digest pulled is in its ContainerImageStatuses), the mounts'
// host paths as written. A changed document makes a new generation rather than changing this
// one. machined's workload controller writes it. Talos:
// pkg/machinery/resources/containers/instance.go, containers.proto (ContainerInstanceSpecSpec).
import type { ResourceDefinition } from './definition.ts';
import { CONTAINERS_NAMESPACE, type ContainerMountSpec, type ContainerSpecSpec } from './container-spec.ts';

export const CONTAINER_INSTANCE_SPEC_TYPE = 'ContainerInstanceSpecs.containers.talos.dev';

/** Talos's InstanceID. */
export function containerInstanceId(container: string, generation: number): string {
  return `${container}-${generation}`;
}

/** A mount of an instance: its ContainerSpec's, without a user volume's id (proto ResolvedMountSpec). */
export type ResolvedMountSpec = Omit<ContainerMountSpec, 'volumeID'>;

/** The ContainerSpec's fields (but what it waits for), with the instance's own. */
export interface ContainerInstanceSpecSpec extends Omit<ContainerSpecSpec, 'image' | 'mounts' | 'dependsOn'> {
  /** The owning container: its ContainerSpec's id. */
  containerID: string;
  /** This instance's sequence number for that container. */
  generation: number;
  /** Its ContainerSpec's image.ref, copied: a digest only when the document pins one. */
  image: string;
  mounts?: ResolvedMountSpec[];
}

export const containerInstanceSpecDefinition: ResourceDefinition<ContainerInstanceSpecSpec> = {
  type: CONTAINER_INSTANCE_SPEC_TYPE,
  displayType: 'ContainerInstanceSpec',
  aliases: ['containerinstancespec', 'containerinstancespecs'],
  defaultNamespace: CONTAINERS_NAMESPACE,
  owner: 'machined',
  printColumns: [
    { name: 'Container', jsonPath: '{.containerID}' },
    { name: 'Generation', jsonPath: '{.generation}' },
    { name: 'Image', jsonPath: '{.image}' },
  ],
  proto: {
    message: 'talos.resource.definitions.containers.ContainerInstanceSpecSpec',
  },
};
