// Original file: protos/machine/machine.proto


export interface MetaDeleteRequest {
  'key'?: (number);
}

export interface MetaDeleteRequest__Output {
  'key': (number);
}
