// LinkStatuses.net.talos.dev: one per network link, id the link's name. networkd writes them
// from rtnetlink (and sysfs). Talos: pkg/machinery/resources/network/link_status.go, whose YAML
// keys these are; optional keys are left out when Bronze does not know the value.
import type { ResourceDefinition } from './definition.ts';
import { DUPLEX, LINK_FLAGS, LINK_TYPE, OPER_STATE, PORT, VLAN_PROTOCOL, hardwareAddr } from './net.ts';
import { NETWORK_NAMESPACE } from './hostname-status.ts';

export interface LinkStatusSpec {
  alias?: string;
  altNames?: string[];
  index: number;
  /** LINK_TYPE's name: 'ether', 'loopback', ... */
  type: string;
  /** The lower link (a VLAN's parent), 0 for none. */
  linkIndex: number;
  /** LINK_FLAGS: 'UP,BROADCAST,RUNNING,MULTICAST,LOWER_UP'. */
  flags: string;
  hardwareAddr: string;
  permanentAddr: string;
  broadcastAddr: string;
  mtu: number;
  queueDisc: string;
  masterIndex?: number;
  /** OPER_STATE's name. */
  operationalState: string;
  /** 'vlan', 'veth', 'bridge', ...; '' for hardware. */
  kind: string;
  slaveKind: string;
  busPath?: string;
  pciID?: string;
  driver?: string;
  driverVersion?: string;
  firmwareVersion?: string;
  productID?: string;
  vendorID?: string;
  product?: string;
  vendor?: string;
  /** Carrier. */
  linkState: boolean;
  speedMbit?: number;
  /** PORT's name; left out when not known. */
  port?: string;
  /** DUPLEX's name; left out when not known. */
  duplex?: string;
  vlan?: { vlanID: number; vlanProtocol: string };
}

export const LINK_STATUS_TYPE = 'LinkStatuses.net.talos.dev';

export const linkStatusDefinition: ResourceDefinition<LinkStatusSpec> = {
  type: LINK_STATUS_TYPE,
  displayType: 'LinkStatus',
  aliases: ['link', 'links'],
  defaultNamespace: NETWORK_NAMESPACE,
  owner: 'networkd',
  printColumns: [
    { name: 'Type', jsonPath: '{.type}' },
    { name: 'Kind', jsonPath: '{.kind}' },
    { name: 'Hw Addr', jsonPath: '{.hardwareAddr}' },
    { name: 'Oper State', jsonPath: '{.operationalState}' },
    { name: 'Link State', jsonPath: '{.linkState}' },
  ],
  proto: {
    message: 'talos.resource.definitions.network.LinkStatusSpec',
    fields: {
      type: { as: LINK_TYPE },
      flags: { as: LINK_FLAGS },
      hardware_addr: { as: hardwareAddr },
      permanent_addr: { as: hardwareAddr },
      broadcast_addr: { as: hardwareAddr },
      operational_state: { as: OPER_STATE },
      speed_megabits: { from: 'speedMbit' },
      port: { as: PORT },
      duplex: { as: DUPLEX },
      'vlan.vid': { from: 'vlanID' },
      'vlan.protocol': { from: 'vlanProtocol', as: VLAN_PROTOCOL },
    },
  },
};
