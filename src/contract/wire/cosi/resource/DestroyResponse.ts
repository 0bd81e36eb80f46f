// Original file: protos/cosi/v1alpha1/state.proto


export interface DestroyResponse {
}

export interface DestroyResponse__Output {
}
