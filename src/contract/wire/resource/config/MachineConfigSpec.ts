// Original file: protos/resource/config/config.proto


export interface MachineConfigSpec {
  'yaml_marshalled'?: (Buffer | Uint8Array | string);
}

export interface MachineConfigSpec__Output {
  'yaml_marshalled': (Buffer);
}
