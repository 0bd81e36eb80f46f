// Original file: protos/bronze/resource/definitions/runtime.proto


export interface BootUpgrade {
  'state'?: (string);
  'from'?: (string);
  'to'?: (string);
  'version'?: (string);
  'time'?: (string);
  'error'?: (string);
}

export interface BootUpgrade__Output {
  'state': (string);
  'from': (string);
  'to': (string);
  'version': (string);
  'time': (string);
  'error': (string);
}
