// Original file: protos/machine/machine.proto


export interface RollbackRequest {
}

export interface RollbackRequest__Output {
}
