// Original file: protos/machine/machine.proto


export interface ServiceStopRequest {
  'id'?: (string);
}

export interface ServiceStopRequest__Output {
  'id': (string);
}
