// Original file: protos/resource/definitions/containers/containers.proto


export interface ContainerNetworkSpec {
  'host_network'?: (boolean);
}

export interface ContainerNetworkSpec__Output {
  'host_network': (boolean);
}
