// Original file: protos/machine/machine.proto


// Original file: protos/machine/machine.proto

export const _machine_ListRequest_Type = {
  REGULAR: 'REGULAR',
  DIRECTORY: 'DIRECTORY',
  SYMLINK: 'SYMLINK',
} as const;

export type _machine_ListRequest_Type =
  | 'REGULAR'
  | 0
  | 'DIRECTORY'
  | 1
  | 'SYMLINK'
  | 2

export type _machine_ListRequest_Type__Output = typeof _machine_ListRequest_Type[keyof typeof _machine_ListRequest_Type]

export interface ListRequest {
  'root'?: (string);
  'recurse'?: (boolean);
  'recursion_depth'?: (number);
  'types'?: (_machine_ListRequest_Type)[];
}

export interface ListRequest__Output {
  'root': (string);
  'recurse': (boolean);
  'recursion_depth': (number);
  'types': (_machine_ListRequest_Type__Output)[];
}
