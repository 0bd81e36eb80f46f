// Original file: protos/resource/definitions/network/network.proto

import type { NetIPPrefix as _common_NetIPPrefix, NetIPPrefix__Output as _common_NetIPPrefix__Output } from '../../../../common/NetIPPrefix.ts';
import type { NethelpersAddressSortAlgorithm as _talos_resource_definitions_enums_NethelpersAddressSortAlgorithm, NethelpersAddressSortAlgorithm__Output as _talos_resource_definitions_enums_NethelpersAddressSortAlgorithm__Output } from '../../../../talos/resource/definitions/enums/NethelpersAddressSortAlgorithm.ts';

export interface NodeAddressSpec {
  'addresses'?: (_common_NetIPPrefix)[];
  'sort_algorithm'?: (_talos_resource_definitions_enums_NethelpersAddressSortAlgorithm);
}

export interface NodeAddressSpec__Output {
  'addresses': (_common_NetIPPrefix__Output)[];
  'sort_algorithm': (_talos_resource_definitions_enums_NethelpersAddressSortAlgorithm__Output);
}
