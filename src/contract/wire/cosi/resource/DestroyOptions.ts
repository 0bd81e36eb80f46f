// Original file: protos/cosi/v1alpha1/state.proto


export interface DestroyOptions {
  'owner'?: (string);
}

export interface DestroyOptions__Output {
  'owner': (string);
}
