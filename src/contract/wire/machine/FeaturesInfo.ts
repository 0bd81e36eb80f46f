// Original file: protos/machine/machine.proto


export interface FeaturesInfo {
  'rbac'?: (boolean);
}

export interface FeaturesInfo__Output {
  'rbac': (boolean);
}
