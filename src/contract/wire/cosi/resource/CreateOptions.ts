// Original file: protos/cosi/v1alpha1/state.proto


export interface CreateOptions {
  'owner'?: (string);
}

export interface CreateOptions__Output {
  'owner': (string);
}
