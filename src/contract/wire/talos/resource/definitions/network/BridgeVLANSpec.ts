// Original file: protos/resource/definitions/network/network.proto


export interface BridgeVLANSpec {
  'filtering_enabled'?: (boolean);
}

export interface BridgeVLANSpec__Output {
  'filtering_enabled': (boolean);
}
