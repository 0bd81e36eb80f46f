// Original file: protos/machine/machine.proto


export interface MetaWriteRequest {
  'key'?: (number);
  'value'?: (Buffer | Uint8Array | string);
}

export interface MetaWriteRequest__Output {
  'key': (number);
  'value': (Buffer);
}
