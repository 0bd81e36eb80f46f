// ContainerInstanceSpecs.containers.talos.dev (namespace containers, id `<container>-<generation>`,
// Talos's InstanceID): one execution of a declared container, resolved once (the image by
// digest, the mounts' host paths), so that what runs never changes under it: a changed
// document makes a new generation instead. machined's workload controller writes it. Talos:
// pkg/machinery/resources/containers/instance.go, containers.proto (ContainerInstanceSpecSpec).
import type { ResourceDefinition } from './definition.ts';
import { CONTAINERS_NAMESPACE, type ContainerResourcesSpec, type ContainerRunAsSpec, type ContainerSecuritySpec } from './container-spec.ts';

export const CONTAINER_INSTANCE_SPEC_TYPE = 'ContainerInstanceSpecs.containers.talos.dev';

/** Talos's InstanceID. */
export function containerInstanceId(container: string, generation: number): string {
  return `${container}-${generation}`;
}

export interface ResolvedMountSpec {
  kind: 'tmpfs' | 'hostPath' | 'userVolume';
  /** The host path to bind from; absent for a tmpfs. */
  source?: string;
  destination: string;
  size?: number;
  options?: string[];
}

export interface ContainerInstanceSpecSpec {
  /** The owning container: its ContainerSpec's id. */
  containerID: string;
  /** This instance's sequence number for that container. */
  generation: number;
  /** The digest-resolved reference it runs. */
  image: string;
  entrypoint?: string[];
  args?: string[];
  workingDir?: string;
  runAs?: ContainerRunAsSpec;
  environment?: string[];
  mounts?: ResolvedMountSpec[];
  security?: ContainerSecuritySpec;
  network?: { hostNetwork?: boolean };
  resources?: ContainerResourcesSpec;
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
