// ContainerSpecs.containers.talos.dev (namespace containers, id the container's name): each
// ContainerConfig document as Talos's ConfigController projects it: the image in normal form,
// mounts with their read-only default applied and tmpfs sizes in bytes, limits in bytes and
// millicores, what it waits for. machined publishes them from the configuration
// (src/config/accessors/containers.ts makes the spec). Talos:
// pkg/machinery/resources/containers/container_spec.go, api/resource/definitions/containers/
// containers.proto (ContainerSpecSpec); the YAML keys are Talos's.
import type { ResourceDefinition } from './definition.ts';

export const CONTAINERS_NAMESPACE = 'containers';
export const CONTAINER_SPEC_TYPE = 'ContainerSpecs.containers.talos.dev';

/** A mount as Talos resolves it: kind 'userVolume', 'tmpfs' or 'hostPath'. */
export interface ContainerMountSpec {
  kind: 'userVolume' | 'tmpfs' | 'hostPath';
  /** A userVolume's block volume id, e.g. 'u-web-content'. */
  volumeID?: string;
  /** A hostPath's host path. */
  source?: string;
  destination: string;
  /** A tmpfs's size in bytes; absent: the kernel's default. */
  size?: number;
  /** With the read-only default applied (`rw` itself is never listed). */
  options?: string[];
}

export interface ContainerRunAsSpec {
  uid?: number;
  gid?: number;
}

export interface ContainerSecuritySpec {
  privileged?: boolean;
  capabilitiesAdd?: string[];
  capabilitiesDrop?: string[];
}

export interface ContainerNetworkSpec {
  /** The host's network namespace (network.mode: host); absent: none of its own. */
  hostNetwork?: boolean;
}

export interface ContainerResourcesSpec {
  /** Bytes; absent: unlimited. */
  memoryLimit?: number;
  /** Millicores; absent: unlimited. */
  cpuLimit?: number;
}

export interface ContainerSpecSpec {
  image: { ref: string };
  entrypoint?: string[];
  args?: string[];
  workingDir?: string;
  runAs?: ContainerRunAsSpec;
  environment?: string[];
  mounts?: ContainerMountSpec[];
  security?: ContainerSecuritySpec;
  network?: ContainerNetworkSpec;
  resources?: ContainerResourcesSpec;
  dependsOn?: { paths?: string[]; networks?: string[]; time?: boolean; containers?: string[] };
}

export const containerSpecDefinition: ResourceDefinition<ContainerSpecSpec> = {
  type: CONTAINER_SPEC_TYPE,
  displayType: 'ContainerSpec',
  aliases: ['containerspec', 'containerspecs'],
  defaultNamespace: CONTAINERS_NAMESPACE,
  owner: 'machined',
  printColumns: [{ name: 'Image', jsonPath: '{.image.ref}' }],
  proto: {
    message: 'talos.resource.definitions.containers.ContainerSpecSpec',
  },
};
