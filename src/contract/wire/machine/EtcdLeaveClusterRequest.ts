// Original file: protos/machine/machine.proto


export interface EtcdLeaveClusterRequest {
}

export interface EtcdLeaveClusterRequest__Output {
}
