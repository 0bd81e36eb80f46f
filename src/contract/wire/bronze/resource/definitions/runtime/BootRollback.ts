// Original file: protos/bronze/resource/definitions/runtime.proto


export interface BootRollback {
  'state'?: (string);
  'from'?: (string);
  'to'?: (string);
  'version'?: (string);
  'time'?: (string);
  'error'?: (string);
}

export interface BootRollback__Output {
  'state': (string);
  'from': (string);
  'to': (string);
  'version': (string);
  'time': (string);
  'error': (string);
}
