// Original file: protos/resource/definitions/containers/containers.proto


export interface ContainerRunAsSpec {
  'uid'?: (number);
  'gid'?: (number);
}

export interface ContainerRunAsSpec__Output {
  'uid': (number);
  'gid': (number);
}
