// Original file: protos/resource/definitions/network/network.proto

import type { NetIPPrefix as _common_NetIPPrefix, NetIPPrefix__Output as _common_NetIPPrefix__Output } from '../../../../common/NetIPPrefix.ts';
import type { NetIP as _common_NetIP, NetIP__Output as _common_NetIP__Output } from '../../../../common/NetIP.ts';
import type { NethelpersFamily as _talos_resource_definitions_enums_NethelpersFamily, NethelpersFamily__Output as _talos_resource_definitions_enums_NethelpersFamily__Output } from '../../../../talos/resource/definitions/enums/NethelpersFamily.ts';
import type { NethelpersScope as _talos_resource_definitions_enums_NethelpersScope, NethelpersScope__Output as _talos_resource_definitions_enums_NethelpersScope__Output } from '../../../../talos/resource/definitions/enums/NethelpersScope.ts';

export interface AddressStatusSpec {
  'address'?: (_common_NetIPPrefix | null);
  'local'?: (_common_NetIP | null);
  'broadcast'?: (_common_NetIP | null);
  'anycast'?: (_common_NetIP | null);
  'multicast'?: (_common_NetIP | null);
  'link_index'?: (number);
  'link_name'?: (string);
  'family'?: (_talos_resource_definitions_enums_NethelpersFamily);
  'scope'?: (_talos_resource_definitions_enums_NethelpersScope);
  'flags'?: (number);
  'priority'?: (number);
}

export interface AddressStatusSpec__Output {
  'address': (_common_NetIPPrefix__Output | null);
  'local': (_common_NetIP__Output | null);
  'broadcast': (_common_NetIP__Output | null);
  'anycast': (_common_NetIP__Output | null);
  'multicast': (_common_NetIP__Output | null);
  'link_index': (number);
  'link_name': (string);
  'family': (_talos_resource_definitions_enums_NethelpersFamily__Output);
  'scope': (_talos_resource_definitions_enums_NethelpersScope__Output);
  'flags': (number);
  'priority': (number);
}
