// Original file: protos/cosi/v1alpha1/state.proto


export interface GetOptions {
}

export interface GetOptions__Output {
}
