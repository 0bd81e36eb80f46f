// Original file: protos/etcd/rpc.proto


export interface SnapshotRequest {
}

export interface SnapshotRequest__Output {
}
