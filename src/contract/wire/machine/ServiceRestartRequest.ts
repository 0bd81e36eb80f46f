// Original file: protos/machine/machine.proto


export interface ServiceRestartRequest {
  'id'?: (string);
}

export interface ServiceRestartRequest__Output {
  'id': (string);
}
