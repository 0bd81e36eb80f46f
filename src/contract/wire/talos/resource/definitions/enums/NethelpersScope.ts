// Original file: protos/resource/definitions/enums/enums.proto

export const NethelpersScope = {
  SCOPE_GLOBAL: 'SCOPE_GLOBAL',
  SCOPE_SITE: 'SCOPE_SITE',
  SCOPE_LINK: 'SCOPE_LINK',
  SCOPE_HOST: 'SCOPE_HOST',
  SCOPE_NOWHERE: 'SCOPE_NOWHERE',
} as const;

export type NethelpersScope =
  | 'SCOPE_GLOBAL'
  | 0
  | 'SCOPE_SITE'
  | 200
  | 'SCOPE_LINK'
  | 253
  | 'SCOPE_HOST'
  | 254
  | 'SCOPE_NOWHERE'
  | 255

export type NethelpersScope__Output = typeof NethelpersScope[keyof typeof NethelpersScope]
