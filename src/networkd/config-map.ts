// networkd's input from the machine configuration: the network settings as the configuration's
// accessors resolve them (config/accessors/network.ts: machine.network with the typed documents
// that replace parts of it, and the time servers networkd publishes for timed when DHCP gives
// none), shaped as networkd's NetworkConfig: a bond's or bridge's document becomes the link
// options networkd sets (virtual-links.ts). The input is the validator's typed configuration.
import { network, type LinkSettings } from '../config/accessors/network.ts';
import type { MachineConfigView } from '../daemon/config-watch.ts';
import type { InterfaceConfig, NetworkConfig } from './config.ts';
import { bondOptions, bridgeOptions } from './virtual-links.ts';

/** A link as networkd's: a bond or bridge to create carries its kernel options. */
function interfaceOf(l: LinkSettings): InterfaceConfig {
  const { bond, bridge, ...rest } = l;
  const d = bond ?? bridge;
  if (!d) return rest;
  const options = bond ? bondOptions(bond) : bridgeOptions(bridge!);
  return { ...rest, virtual: { kind: bond ? 'bond' : 'bridge', options, ...(d.hardwareAddr ? { mac: d.hardwareAddr } : {}) } };
}

export function networkConfigOf(spec: MachineConfigView | undefined): NetworkConfig {
  const { interfaces, ...rest } = network(spec);
  return { ...rest, ...(interfaces ? { interfaces: interfaces.map(interfaceOf) } : {}) };
}
