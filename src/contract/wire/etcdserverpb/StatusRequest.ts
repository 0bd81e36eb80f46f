// Original file: protos/etcd/rpc.proto


export interface StatusRequest {
}

export interface StatusRequest__Output {
}
