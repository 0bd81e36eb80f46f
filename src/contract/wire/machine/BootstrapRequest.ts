// Original file: protos/machine/machine.proto


export interface BootstrapRequest {
  'recover_etcd'?: (boolean);
  'recover_skip_hash_check'?: (boolean);
}

export interface BootstrapRequest__Output {
  'recover_etcd': (boolean);
  'recover_skip_hash_check': (boolean);
}
