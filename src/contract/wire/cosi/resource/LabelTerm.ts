// Original file: protos/cosi/v1alpha1/resource.proto


// Original file: protos/cosi/v1alpha1/resource.proto

export const _cosi_resource_LabelTerm_Operation = {
  EXISTS: 'EXISTS',
  EQUAL: 'EQUAL',
  NOT_EXISTS: 'NOT_EXISTS',
  IN: 'IN',
  LT: 'LT',
  LTE: 'LTE',
  LT_NUMERIC: 'LT_NUMERIC',
  LTE_NUMERIC: 'LTE_NUMERIC',
} as const;

export type _cosi_resource_LabelTerm_Operation =
  | 'EXISTS'
  | 0
  | 'EQUAL'
  | 1
  | 'NOT_EXISTS'
  | 2
  | 'IN'
  | 3
  | 'LT'
  | 4
  | 'LTE'
  | 5
  | 'LT_NUMERIC'
  | 6
  | 'LTE_NUMERIC'
  | 7

export type _cosi_resource_LabelTerm_Operation__Output = typeof _cosi_resource_LabelTerm_Operation[keyof typeof _cosi_resource_LabelTerm_Operation]

export interface LabelTerm {
  'key'?: (string);
  'op'?: (_cosi_resource_LabelTerm_Operation);
  'value'?: (string)[];
  'invert'?: (boolean);
}

export interface LabelTerm__Output {
  'key': (string);
  'op': (_cosi_resource_LabelTerm_Operation__Output);
  'value': (string)[];
  'invert': (boolean);
}
