// Original file: protos/resource/definitions/network/network.proto


export interface STPSpec {
  'enabled'?: (boolean);
}

export interface STPSpec__Output {
  'enabled': (boolean);
}
