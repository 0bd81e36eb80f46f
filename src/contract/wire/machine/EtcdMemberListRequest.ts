// Original file: protos/machine/machine.proto


export interface EtcdMemberListRequest {
  'query_local'?: (boolean);
}

export interface EtcdMemberListRequest__Output {
  'query_local': (boolean);
}
