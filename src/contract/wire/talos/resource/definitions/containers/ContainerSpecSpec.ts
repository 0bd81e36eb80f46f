// Original file: protos/resource/definitions/containers/containers.proto

import type { ContainerImageSpec as _talos_resource_definitions_containers_ContainerImageSpec, ContainerImageSpec__Output as _talos_resource_definitions_containers_ContainerImageSpec__Output } from '../../../../talos/resource/definitions/containers/ContainerImageSpec.ts';
import type { ContainerRunAsSpec as _talos_resource_definitions_containers_ContainerRunAsSpec, ContainerRunAsSpec__Output as _talos_resource_definitions_containers_ContainerRunAsSpec__Output } from '../../../../talos/resource/definitions/containers/ContainerRunAsSpec.ts';
import type { ContainerMountSpec as _talos_resource_definitions_containers_ContainerMountSpec, ContainerMountSpec__Output as _talos_resource_definitions_containers_ContainerMountSpec__Output } from '../../../../talos/resource/definitions/containers/ContainerMountSpec.ts';
import type { ContainerSecuritySpec as _talos_resource_definitions_containers_ContainerSecuritySpec, ContainerSecuritySpec__Output as _talos_resource_definitions_containers_ContainerSecuritySpec__Output } from '../../../../talos/resource/definitions/containers/ContainerSecuritySpec.ts';
import type { ContainerNetworkSpec as _talos_resource_definitions_containers_ContainerNetworkSpec, ContainerNetworkSpec__Output as _talos_resource_definitions_containers_ContainerNetworkSpec__Output } from '../../../../talos/resource/definitions/containers/ContainerNetworkSpec.ts';
import type { ContainerResourcesSpec as _talos_resource_definitions_containers_ContainerResourcesSpec, ContainerResourcesSpec__Output as _talos_resource_definitions_containers_ContainerResourcesSpec__Output } from '../../../../talos/resource/definitions/containers/ContainerResourcesSpec.ts';
import type { ContainerDependsOnSpec as _talos_resource_definitions_containers_ContainerDependsOnSpec, ContainerDependsOnSpec__Output as _talos_resource_definitions_containers_ContainerDependsOnSpec__Output } from '../../../../talos/resource/definitions/containers/ContainerDependsOnSpec.ts';

export interface ContainerSpecSpec {
  'image'?: (_talos_resource_definitions_containers_ContainerImageSpec | null);
  'entrypoint'?: (string)[];
  'args'?: (string)[];
  'working_dir'?: (string);
  'run_as'?: (_talos_resource_definitions_containers_ContainerRunAsSpec | null);
  'environment'?: (string)[];
  'mounts'?: (_talos_resource_definitions_containers_ContainerMountSpec)[];
  'security'?: (_talos_resource_definitions_containers_ContainerSecuritySpec | null);
  'network'?: (_talos_resource_definitions_containers_ContainerNetworkSpec | null);
  'resources'?: (_talos_resource_definitions_containers_ContainerResourcesSpec | null);
  'depends_on'?: (_talos_resource_definitions_containers_ContainerDependsOnSpec | null);
}

export interface ContainerSpecSpec__Output {
  'image': (_talos_resource_definitions_containers_ContainerImageSpec__Output | null);
  'entrypoint': (string)[];
  'args': (string)[];
  'working_dir': (string);
  'run_as': (_talos_resource_definitions_containers_ContainerRunAsSpec__Output | null);
  'environment': (string)[];
  'mounts': (_talos_resource_definitions_containers_ContainerMountSpec__Output)[];
  'security': (_talos_resource_definitions_containers_ContainerSecuritySpec__Output | null);
  'network': (_talos_resource_definitions_containers_ContainerNetworkSpec__Output | null);
  'resources': (_talos_resource_definitions_containers_ContainerResourcesSpec__Output | null);
  'depends_on': (_talos_resource_definitions_containers_ContainerDependsOnSpec__Output | null);
}
