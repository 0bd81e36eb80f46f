// Original file: protos/machine/machine.proto


export interface ServiceStartRequest {
  'id'?: (string);
}

export interface ServiceStartRequest__Output {
  'id': (string);
}
