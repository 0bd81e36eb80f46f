// Original file: protos/resource/definitions/containers/containers.proto


export interface ContainerDependsOnSpec {
  'paths'?: (string)[];
  'networks'?: (string)[];
  'time'?: (boolean);
  'containers'?: (string)[];
}

export interface ContainerDependsOnSpec__Output {
  'paths': (string)[];
  'networks': (string)[];
  'time': (boolean);
  'containers': (string)[];
}
