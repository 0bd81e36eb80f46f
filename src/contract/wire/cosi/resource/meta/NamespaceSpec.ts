// Original file: protos/cosi/v1alpha1/meta.proto


export interface NamespaceSpec {
  'description'?: (string);
}

export interface NamespaceSpec__Output {
  'description': (string);
}
