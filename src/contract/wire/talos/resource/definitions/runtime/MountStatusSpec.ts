// Original file: protos/resource/definitions/runtime/runtime.proto


export interface MountStatusSpec {
  'source'?: (string);
  'target'?: (string);
  'filesystem_type'?: (string);
  'options'?: (string)[];
  'encrypted'?: (boolean);
  'encryption_providers'?: (string)[];
}

export interface MountStatusSpec__Output {
  'source': (string);
  'target': (string);
  'filesystem_type': (string);
  'options': (string)[];
  'encrypted': (boolean);
  'encryption_providers': (string)[];
}
