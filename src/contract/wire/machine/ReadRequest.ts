// Original file: protos/machine/machine.proto


export interface ReadRequest {
  'path'?: (string);
}

export interface ReadRequest__Output {
  'path': (string);
}
