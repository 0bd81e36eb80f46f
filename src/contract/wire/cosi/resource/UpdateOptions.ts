// Original file: protos/cosi/v1alpha1/state.proto


export interface UpdateOptions {
  'owner'?: (string);
  'expected_phase'?: (string);
  '_expected_phase'?: "expected_phase";
}

export interface UpdateOptions__Output {
  'owner': (string);
  'expected_phase'?: (string);
  '_expected_phase'?: "expected_phase";
}
