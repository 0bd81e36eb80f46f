// Original file: protos/resource/definitions/containers/containers.proto

import type { ContainersContainerImagePhase as _talos_resource_definitions_enums_ContainersContainerImagePhase, ContainersContainerImagePhase__Output as _talos_resource_definitions_enums_ContainersContainerImagePhase__Output } from '../../../../talos/resource/definitions/enums/ContainersContainerImagePhase.ts';

export interface ContainerImageStatusSpec {
  'phase'?: (_talos_resource_definitions_enums_ContainersContainerImagePhase);
  'image'?: (string);
  'digest'?: (string);
  'error'?: (string);
}

export interface ContainerImageStatusSpec__Output {
  'phase': (_talos_resource_definitions_enums_ContainersContainerImagePhase__Output);
  'image': (string);
  'digest': (string);
  'error': (string);
}
