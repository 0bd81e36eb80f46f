// Original file: protos/machine/machine.proto


export interface ContainerInfo {
  'namespace'?: (string);
  'id'?: (string);
  'image'?: (string);
  'pid'?: (number);
  'status'?: (string);
  'pod_id'?: (string);
  'name'?: (string);
  'network_namespace'?: (string);
  'internal_id'?: (string);
  'uid'?: (string);
}

export interface ContainerInfo__Output {
  'namespace': (string);
  'id': (string);
  'image': (string);
  'pid': (number);
  'status': (string);
  'pod_id': (string);
  'name': (string);
  'network_namespace': (string);
  'internal_id': (string);
  'uid': (string);
}
