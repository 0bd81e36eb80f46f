// Original file: protos/machine/machine.proto


export interface ConfigValidationErrorEvent {
  'error'?: (string);
}

export interface ConfigValidationErrorEvent__Output {
  'error': (string);
}
