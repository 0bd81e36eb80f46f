// Original file: protos/etcd/rpc.proto


export interface DefragmentRequest {
}

export interface DefragmentRequest__Output {
}
