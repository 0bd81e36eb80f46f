// Original file: protos/machine/machine.proto


export interface EtcdForfeitLeadershipRequest {
}

export interface EtcdForfeitLeadershipRequest__Output {
}
