// Original file: protos/bronze/resource/definitions/runtime.proto


export interface BootInstall {
  'state'?: (string);
  'disk'?: (string);
  'error'?: (string);
  'time'?: (string);
}

export interface BootInstall__Output {
  'state': (string);
  'disk': (string);
  'error': (string);
  'time': (string);
}
