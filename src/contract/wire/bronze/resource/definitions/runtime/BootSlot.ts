// Original file: protos/bronze/resource/definitions/runtime.proto


export interface BootSlot {
  'present'?: (boolean);
  'version'?: (string);
  'failure'?: (string);
}

export interface BootSlot__Output {
  'present': (boolean);
  'version': (string);
  'failure': (string);
}
