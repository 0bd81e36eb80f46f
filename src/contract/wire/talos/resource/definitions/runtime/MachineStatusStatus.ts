// Original file: protos/resource/definitions/runtime/runtime.proto

import type { UnmetCondition as _talos_resource_definitions_runtime_UnmetCondition, UnmetCondition__Output as _talos_resource_definitions_runtime_UnmetCondition__Output } from '../../../../talos/resource/definitions/runtime/UnmetCondition.ts';

export interface MachineStatusStatus {
  'ready'?: (boolean);
  'unmet_conditions'?: (_talos_resource_definitions_runtime_UnmetCondition)[];
}

export interface MachineStatusStatus__Output {
  'ready': (boolean);
  'unmet_conditions': (_talos_resource_definitions_runtime_UnmetCondition__Output)[];
}
