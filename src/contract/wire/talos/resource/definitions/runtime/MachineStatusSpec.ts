// Original file: protos/resource/definitions/runtime/runtime.proto

import type { RuntimeMachineStage as _talos_resource_definitions_enums_RuntimeMachineStage, RuntimeMachineStage__Output as _talos_resource_definitions_enums_RuntimeMachineStage__Output } from '../../../../talos/resource/definitions/enums/RuntimeMachineStage.ts';
import type { MachineStatusStatus as _talos_resource_definitions_runtime_MachineStatusStatus, MachineStatusStatus__Output as _talos_resource_definitions_runtime_MachineStatusStatus__Output } from '../../../../talos/resource/definitions/runtime/MachineStatusStatus.ts';

export interface MachineStatusSpec {
  'stage'?: (_talos_resource_definitions_enums_RuntimeMachineStage);
  'status'?: (_talos_resource_definitions_runtime_MachineStatusStatus | null);
}

export interface MachineStatusSpec__Output {
  'stage': (_talos_resource_definitions_enums_RuntimeMachineStage__Output);
  'status': (_talos_resource_definitions_runtime_MachineStatusStatus__Output | null);
}
