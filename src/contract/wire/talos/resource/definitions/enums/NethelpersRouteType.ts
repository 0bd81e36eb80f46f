// Original file: protos/resource/definitions/enums/enums.proto

export const NethelpersRouteType = {
  TYPE_UNSPEC: 'TYPE_UNSPEC',
  TYPE_UNICAST: 'TYPE_UNICAST',
  TYPE_LOCAL: 'TYPE_LOCAL',
  TYPE_BROADCAST: 'TYPE_BROADCAST',
  TYPE_ANYCAST: 'TYPE_ANYCAST',
  TYPE_MULTICAST: 'TYPE_MULTICAST',
  TYPE_BLACKHOLE: 'TYPE_BLACKHOLE',
  TYPE_UNREACHABLE: 'TYPE_UNREACHABLE',
  TYPE_PROHIBIT: 'TYPE_PROHIBIT',
  TYPE_THROW: 'TYPE_THROW',
  TYPE_NAT: 'TYPE_NAT',
  TYPE_X_RESOLVE: 'TYPE_X_RESOLVE',
} as const;

export type NethelpersRouteType =
  | 'TYPE_UNSPEC'
  | 0
  | 'TYPE_UNICAST'
  | 1
  | 'TYPE_LOCAL'
  | 2
  | 'TYPE_BROADCAST'
  | 3
  | 'TYPE_ANYCAST'
  | 4
  | 'TYPE_MULTICAST'
  | 5
  | 'TYPE_BLACKHOLE'
  | 6
  | 'TYPE_UNREACHABLE'
  | 7
  | 'TYPE_PROHIBIT'
  | 8
  | 'TYPE_THROW'
  | 9
  | 'TYPE_NAT'
  | 10
  | 'TYPE_X_RESOLVE'
  | 11

export type NethelpersRouteType__Output = typeof NethelpersRouteType[keyof typeof NethelpersRouteType]
