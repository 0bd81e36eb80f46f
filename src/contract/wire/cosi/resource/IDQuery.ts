// Original file: protos/cosi/v1alpha1/resource.proto


export interface IDQuery {
  'regexp'?: (string);
}

export interface IDQuery__Output {
  'regexp': (string);
}
