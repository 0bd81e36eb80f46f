// Original file: protos/common/common.proto


export interface NetIP {
  'ip'?: (Buffer | Uint8Array | string);
}

export interface NetIP__Output {
  'ip': (Buffer);
}
