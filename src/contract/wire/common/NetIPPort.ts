// Original file: protos/common/common.proto


export interface NetIPPort {
  'ip'?: (Buffer | Uint8Array | string);
  'port'?: (number);
}

export interface NetIPPort__Output {
  'ip': (Buffer);
  'port': (number);
}
