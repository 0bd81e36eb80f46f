// Original file: protos/resource/definitions/block/block.proto


export interface SymlinkSpec {
  'paths'?: (string)[];
}

export interface SymlinkSpec__Output {
  'paths': (string)[];
}
