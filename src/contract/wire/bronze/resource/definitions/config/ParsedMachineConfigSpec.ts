// Original file: protos/bronze/resource/definitions/config.proto


export interface ParsedMachineConfigSpec {
  'yaml_marshalled'?: (Buffer | Uint8Array | string);
}

export interface ParsedMachineConfigSpec__Output {
  'yaml_marshalled': (Buffer);
}
