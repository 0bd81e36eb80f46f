// Original file: protos/resource/definitions/containers/containers.proto


export interface ContainerImageSpec {
  'ref'?: (string);
}

export interface ContainerImageSpec__Output {
  'ref': (string);
}
