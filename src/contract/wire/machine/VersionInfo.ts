// Original file: protos/machine/machine.proto


export interface VersionInfo {
  'tag'?: (string);
  'sha'?: (string);
  'built'?: (string);
  'go_version'?: (string);
  'os'?: (string);
  'arch'?: (string);
}

export interface VersionInfo__Output {
  'tag': (string);
  'sha': (string);
  'built': (string);
  'go_version': (string);
  'os': (string);
  'arch': (string);
}
