// Original file: protos/etcd/rpc.proto


export interface MemberListRequest {
  'linearizable'?: (boolean);
}

export interface MemberListRequest__Output {
  'linearizable': (boolean);
}
