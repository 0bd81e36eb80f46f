// KernelParamStatuses.runtime.talos.dev: one per sysctl the configuration sets, id its key
// ('net.ipv4.ip_forward'). machined's KernelParamController writes them
// (src/machined/controllers/sysctls.ts). Talos: pkg/machinery/resources/runtime/kernel_params_status.go.
import type { ResourceDefinition } from './definition.ts';

export interface KernelParamStatusSpec {
  current: string;
  /** The value before Bronze first set it. */
  default: string;
  unsupported: boolean;
}

export const KERNEL_PARAM_STATUS_TYPE = 'KernelParamStatuses.runtime.talos.dev';

export const kernelParamStatusDefinition: ResourceDefinition<KernelParamStatusSpec> = {
  type: KERNEL_PARAM_STATUS_TYPE,
  displayType: 'KernelParamStatus',
  aliases: ['sysctls', 'kernelparameters', 'kernelparams'],
  defaultNamespace: 'runtime',
  owner: 'machined',
  printColumns: [
    { name: 'Current', jsonPath: '{.current}' },
    { name: 'Default', jsonPath: '{.default}' },
    { name: 'Unsupported', jsonPath: '{.unsupported}' },
  ],
  proto: {
    message: 'talos.resource.definitions.runtime.KernelParamStatusSpec',
  },
};
