// Original file: protos/resource/definitions/enums/enums.proto

export const NethelpersVLANProtocol = {
  NETHELPERS_VLANPROTOCOL_UNSPECIFIED: 'NETHELPERS_VLANPROTOCOL_UNSPECIFIED',
  VLAN_PROTOCOL8021_Q: 'VLAN_PROTOCOL8021_Q',
  VLAN_PROTOCOL8021_AD: 'VLAN_PROTOCOL8021_AD',
} as const;

export type NethelpersVLANProtocol =
  | 'NETHELPERS_VLANPROTOCOL_UNSPECIFIED'
  | 0
  | 'VLAN_PROTOCOL8021_Q'
  | 33024
  | 'VLAN_PROTOCOL8021_AD'
  | 34984

export type NethelpersVLANProtocol__Output = typeof NethelpersVLANProtocol[keyof typeof NethelpersVLANProtocol]
