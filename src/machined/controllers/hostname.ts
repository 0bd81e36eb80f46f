// HostnameController: the node's hostname from the configuration (HostnameConfig, else
// machine.network.hostname), else a stable default; sets it in the kernel and publishes
// network/HostnameStatuses.net.bronze.dev (id "hostname"). A DHCP-provided name from
// networkd comes between the configuration and the default once networkd publishes it.
import type { Controller } from '../../state/controller.ts';
import { hostnameStatusDefinition } from '../../state/definitions.ts';
import { MACHINE_CONFIG_ID, MACHINE_CONFIG_NS, MACHINE_CONFIG_TYPE, type MachineConfigSpec } from './machineconfig.ts';

export function desiredHostname(cfg: MachineConfigSpec | undefined, fallback: string): { hostname: string; domainname: string; source: string } {
  const doc = cfg?.documents.find((d) => d.kind === 'HostnameConfig');
  const fromKind = typeof doc?.hostname === 'string' ? doc.hostname : undefined;
  const fromMachine = cfg?.v1alpha1.machine?.network?.hostname as string | undefined;
  const fqdn = fromKind ?? fromMachine;
  if (!fqdn) return { hostname: fallback, domainname: '', source: 'default' };
  const [host, ...domain] = fqdn.split('.');
  return { hostname: host!, domainname: domain.join('.'), source: fromKind ? 'HostnameConfig' : 'machine.network.hostname' };
}

export function hostnameController(setHostname: (name: string) => void, fallback: () => string): Controller {
  let applied = '';
  return {
    name: 'HostnameController',
    inputs: [{ namespace: MACHINE_CONFIG_NS, type: MACHINE_CONFIG_TYPE, kind: 'weak' }],
    outputs: [{ type: hostnameStatusDefinition.type, kind: 'exclusive' }],
    async run(ctx) {
      const cfg = await ctx.state.find<MachineConfigSpec>(MACHINE_CONFIG_NS, MACHINE_CONFIG_TYPE, MACHINE_CONFIG_ID);
      const want = desiredHostname(cfg?.spec, fallback());
      if (want.hostname !== applied) {
        setHostname(want.hostname);
        ctx.log.info(`hostname set to ${want.hostname} (from ${want.source})`);
        applied = want.hostname;
      }
      await ctx.state.apply('network', hostnameStatusDefinition.type, 'hostname', { hostname: want.hostname, domainname: want.domainname });
    },
  };
}
