// LinkStatuses.net.talos.dev: one per network link, id the link's name. networkd writes them
// from rtnetlink (and sysfs). Talos: pkg/machinery/resources/network/link_status.go, whose YAML
// keys these are; optional keys are left out when Bronze does not know the value.
import type { LinkStatusSpec as LinkStatusSpecProto } from '../wire/talos/resource/definitions/network/LinkStatusSpec.ts';
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
    encode: (s): LinkStatusSpecProto => {
      const m: LinkStatusSpecProto = {
        index: s.index,
        type: LINK_TYPE.number(s.type) as LinkStatusSpecProto['type'],
        link_index: s.linkIndex,
        flags: LINK_FLAGS.mask(s.flags),
        hardware_addr: hardwareAddr(s.hardwareAddr),
        permanent_addr: hardwareAddr(s.permanentAddr),
        broadcast_addr: hardwareAddr(s.broadcastAddr),
        mtu: s.mtu,
        queue_disc: s.queueDisc,
        master_index: s.masterIndex ?? 0,
        operational_state: OPER_STATE.number(s.operationalState) as LinkStatusSpecProto['operational_state'],
        kind: s.kind,
        slave_kind: s.slaveKind,
        bus_path: s.busPath ?? '',
        pciid: s.pciID ?? '',
        driver: s.driver ?? '',
        driver_version: s.driverVersion ?? '',
        firmware_version: s.firmwareVersion ?? '',
        product_id: s.productID ?? '',
        vendor_id: s.vendorID ?? '',
        product: s.product ?? '',
        vendor: s.vendor ?? '',
        link_state: s.linkState,
        speed_megabits: String(s.speedMbit ?? 0),
        alias: s.alias ?? '',
        alt_names: s.altNames ?? [],
      };
      if (s.port !== undefined) m.port = PORT.number(s.port) as LinkStatusSpecProto['port'];
      if (s.duplex !== undefined) m.duplex = DUPLEX.number(s.duplex) as LinkStatusSpecProto['duplex'];
      if (s.vlan) m.vlan = { vid: s.vlan.vlanID, protocol: VLAN_PROTOCOL.number(s.vlan.vlanProtocol) as NonNullable<LinkStatusSpecProto['vlan']>['protocol'] };
      return m;
    },
  },
};
