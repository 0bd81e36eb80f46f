// Original file: protos/machine/machine.proto


export interface ConfigLoadErrorEvent {
  'error'?: (string);
}

export interface ConfigLoadErrorEvent__Output {
  'error': (string);
}
