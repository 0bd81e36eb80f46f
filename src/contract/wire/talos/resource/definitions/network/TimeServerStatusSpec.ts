// Original file: protos/resource/definitions/network/network.proto


export interface TimeServerStatusSpec {
  'ntp_servers'?: (string)[];
  'use_nts'?: (boolean);
}

export interface TimeServerStatusSpec__Output {
  'ntp_servers': (string)[];
  'use_nts': (boolean);
}
