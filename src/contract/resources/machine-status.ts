// MachineStatuses.runtime.talos.dev, id 'machine': the stage of the machine and whether it is
// ready, with the conditions that keep it from being so. machined writes it
// (src/machined/node-config.ts). Talos: pkg/machinery/resources/runtime/machine_status.go.
import type { ResourceDefinition } from './definition.ts';
import { NameTable } from './names.ts';

/** Talos's MachineStage names (enums.proto RuntimeMachineStage). */
export const MACHINE_STAGE = new NameTable('machine stage', [
  [0, 'unknown'],
  [1, 'booting'],
  [2, 'installing'],
  [3, 'maintenance'],
  [4, 'running'],
  [5, 'rebooting'],
  [6, 'shutting down'],
  [7, 'resetting'],
  [8, 'upgrading'],
]);

export interface MachineStatusSpec {
  stage: string;
  status: {
    ready: boolean;
    unmetConditions: Array<{ name: string; reason: string }>;
  };
}

export const MACHINE_STATUS_TYPE = 'MachineStatuses.runtime.talos.dev';
export const MACHINE_STATUS_ID = 'machine';

export const machineStatusDefinition: ResourceDefinition<MachineStatusSpec> = {
  type: MACHINE_STATUS_TYPE,
  displayType: 'MachineStatus',
  aliases: [],
  defaultNamespace: 'runtime',
  owner: 'machined',
  printColumns: [
    { name: 'Stage', jsonPath: '{.stage}' },
    { name: 'Ready', jsonPath: '{.status.ready}' },
  ],
  proto: {
    message: 'talos.resource.definitions.runtime.MachineStatusSpec',
    fields: { stage: { as: MACHINE_STAGE } },
  },
};
