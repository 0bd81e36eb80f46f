// Original file: protos/cosi/v1alpha1/resource.proto


export interface Spec {
  'proto_spec'?: (Buffer | Uint8Array | string);
  'yaml_spec'?: (string);
}

export interface Spec__Output {
  'proto_spec': (Buffer);
  'yaml_spec': (string);
}
