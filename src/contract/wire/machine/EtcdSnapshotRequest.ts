// Original file: protos/machine/machine.proto


export interface EtcdSnapshotRequest {
}

export interface EtcdSnapshotRequest__Output {
}
