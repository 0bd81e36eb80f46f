// Original file: protos/resource/definitions/runtime/runtime.proto


export interface KernelParamStatusSpec {
  'current'?: (string);
  'default'?: (string);
  'unsupported'?: (boolean);
}

export interface KernelParamStatusSpec__Output {
  'current': (string);
  'default': (string);
  'unsupported': (boolean);
}
