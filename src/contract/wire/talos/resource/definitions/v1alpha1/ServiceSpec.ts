// Original file: protos/resource/definitions/v1alpha1/v1alpha1.proto


export interface ServiceSpec {
  'running'?: (boolean);
  'healthy'?: (boolean);
  'unknown'?: (boolean);
}

export interface ServiceSpec__Output {
  'running': (boolean);
  'healthy': (boolean);
  'unknown': (boolean);
}
