// Original file: protos/common/common.proto


export interface NetIPPrefix {
  'ip'?: (Buffer | Uint8Array | string);
  'prefix_length'?: (number);
}

export interface NetIPPrefix__Output {
  'ip': (Buffer);
  'prefix_length': (number);
}
