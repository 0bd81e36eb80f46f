// Original file: protos/resource/definitions/containers/containers.proto

import type { ContainerRunAsSpec as _talos_resource_definitions_containers_ContainerRunAsSpec, ContainerRunAsSpec__Output as _talos_resource_definitions_containers_ContainerRunAsSpec__Output } from '../../../../talos/resource/definitions/containers/ContainerRunAsSpec.ts';
import type { ResolvedMountSpec as _talos_resource_definitions_containers_ResolvedMountSpec, ResolvedMountSpec__Output as _talos_resource_definitions_containers_ResolvedMountSpec__Output } from '../../../../talos/resource/definitions/containers/ResolvedMountSpec.ts';
import type { ContainerSecuritySpec as _talos_resource_definitions_containers_ContainerSecuritySpec, ContainerSecuritySpec__Output as _talos_resource_definitions_containers_ContainerSecuritySpec__Output } from '../../../../talos/resource/definitions/containers/ContainerSecuritySpec.ts';
import type { ContainerNetworkSpec as _talos_resource_definitions_containers_ContainerNetworkSpec, ContainerNetworkSpec__Output as _talos_resource_definitions_containers_ContainerNetworkSpec__Output } from '../../../../talos/resource/definitions/containers/ContainerNetworkSpec.ts';
import type { ContainerResourcesSpec as _talos_resource_definitions_containers_ContainerResourcesSpec, ContainerResourcesSpec__Output as _talos_resource_definitions_containers_ContainerResourcesSpec__Output } from '../../../../talos/resource/definitions/containers/ContainerResourcesSpec.ts';
import type { Long } from '@grpc/proto-loader';

export interface ContainerInstanceSpecSpec {
  'container_id'?: (string);
  'generation'?: (number | string | Long);
  'image'?: (string);
  'entrypoint'?: (string)[];
  'args'?: (string)[];
  'working_dir'?: (string);
  'run_as'?: (_talos_resource_definitions_containers_ContainerRunAsSpec | null);
  'environment'?: (string)[];
  'mounts'?: (_talos_resource_definitions_containers_ResolvedMountSpec)[];
  'security'?: (_talos_resource_definitions_containers_ContainerSecuritySpec | null);
  'network'?: (_talos_resource_definitions_containers_ContainerNetworkSpec | null);
  'resources'?: (_talos_resource_definitions_containers_ContainerResourcesSpec | null);
}

export interface ContainerInstanceSpecSpec__Output {
  'container_id': (string);
  'generation': (string);
  'image': (string);
  'entrypoint': (string)[];
  'args': (string)[];
  'working_dir': (string);
  'run_as': (_talos_resource_definitions_containers_ContainerRunAsSpec__Output | null);
  'environment': (string)[];
  'mounts': (_talos_resource_definitions_containers_ResolvedMountSpec__Output)[];
  'security': (_talos_resource_definitions_containers_ContainerSecuritySpec__Output | null);
  'network': (_talos_resource_definitions_containers_ContainerNetworkSpec__Output | null);
  'resources': (_talos_resource_definitions_containers_ContainerResourcesSpec__Output | null);
}
