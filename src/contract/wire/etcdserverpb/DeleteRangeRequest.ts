// Original file: protos/etcd/rpc.proto


export interface DeleteRangeRequest {
  'key'?: (Buffer | Uint8Array | string);
  'range_end'?: (Buffer | Uint8Array | string);
}

export interface DeleteRangeRequest__Output {
  'key': (Buffer);
  'range_end': (Buffer);
}
