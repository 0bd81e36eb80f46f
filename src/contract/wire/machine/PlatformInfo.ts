// Original file: protos/machine/machine.proto


export interface PlatformInfo {
  'name'?: (string);
  'mode'?: (string);
}

export interface PlatformInfo__Output {
  'name': (string);
  'mode': (string);
}
