// Original file: protos/resource/definitions/network/network.proto


export interface HostnameStatusSpec {
  'hostname'?: (string);
  'domainname'?: (string);
}

export interface HostnameStatusSpec__Output {
  'hostname': (string);
  'domainname': (string);
}
