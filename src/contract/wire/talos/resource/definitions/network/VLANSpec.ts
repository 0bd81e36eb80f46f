// Original file: protos/resource/definitions/network/network.proto

import type { NethelpersVLANProtocol as _talos_resource_definitions_enums_NethelpersVLANProtocol, NethelpersVLANProtocol__Output as _talos_resource_definitions_enums_NethelpersVLANProtocol__Output } from '../../../../talos/resource/definitions/enums/NethelpersVLANProtocol.ts';

export interface VLANSpec {
  'vid'?: (number);
  'protocol'?: (_talos_resource_definitions_enums_NethelpersVLANProtocol);
}

export interface VLANSpec__Output {
  'vid': (number);
  'protocol': (_talos_resource_definitions_enums_NethelpersVLANProtocol__Output);
}
