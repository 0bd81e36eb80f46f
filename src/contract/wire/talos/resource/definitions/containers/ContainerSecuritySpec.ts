// Original file: protos/resource/definitions/containers/containers.proto


export interface ContainerSecuritySpec {
  'privileged'?: (boolean);
  'capabilities_add'?: (string)[];
  'capabilities_drop'?: (string)[];
}

export interface ContainerSecuritySpec__Output {
  'privileged': (boolean);
  'capabilities_add': (string)[];
  'capabilities_drop': (string)[];
}
