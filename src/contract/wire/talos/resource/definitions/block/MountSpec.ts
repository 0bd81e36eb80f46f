// Original file: protos/resource/definitions/block/block.proto


export interface MountSpec {
  'target_path'?: (string);
}

export interface MountSpec__Output {
  'target_path': (string);
}
