// The registry: Talos's names for every type Bronze shares with Talos, COSI's automatic aliases,
// resolution as a Talos client does it, ownership, and the definitions' own checks.
import { describe, expect, it } from 'vitest';
import { definitionSpec, type ResourceDefinition } from './definition.ts';
import { AmbiguousResourceTypeError, DefinitionRegistry, RESOURCE_DEFINITIONS, UnknownResourceTypeError, mayWrite, resolveDefinition } from './registry.ts';

/** Every type: its name before the move to Talos's names, and after. Bronze-only types keep bronze.dev. */
const RENAMES: Array<[old: string | null, type: string, namespace: string, owner: string]> = [
  [null, 'Namespaces.meta.cosi.dev', 'meta', 'machined'],
  ['ResourceDefinitions.meta.cosi.dev', 'ResourceDefinitions.meta.cosi.dev', 'meta', 'machined'],
  ['MachineConfigs.config.bronze.dev', 'MachineConfigs.config.talos.dev', 'config', 'machined'],
  [null, 'ParsedMachineConfigs.config.bronze.dev', 'config', 'machined'],
  ['Services.bronze.dev', 'Services.v1alpha1.talos.dev', 'runtime', 'machined'],
  ['MachineStatuses.bronze.dev', 'MachineStatuses.runtime.talos.dev', 'runtime', 'machined'],
  ['KernelParamStatuses.runtime.bronze.dev', 'KernelParamStatuses.runtime.talos.dev', 'runtime', 'machined'],
  [null, 'MountStatuses.runtime.talos.dev', 'runtime', 'machined'],
  [null, 'SecurityStates.talos.dev', 'runtime', 'machined'],
  ['BootStatuses.bronze.dev', 'BootStatuses.runtime.bronze.dev', 'runtime', 'machined'],
  [null, 'RootfsStatuses.runtime.bronze.dev', 'runtime', 'machined'],
  ['TimeStatuses.runtime.bronze.dev', 'TimeStatuses.v1alpha1.talos.dev', 'runtime', 'timed'],
  ['Disks.block.bronze.dev', 'Disks.block.talos.dev', 'runtime', 'udevd'],
  ['BlockDevices.block.bronze.dev', 'BlockDevices.block.talos.dev', 'runtime', 'udevd'],
  [null, 'DiscoveredVolumes.block.talos.dev', 'runtime', 'udevd'],
  [null, 'VolumeStatuses.block.talos.dev', 'runtime', 'machined'],
  [null, 'BlockSymlinks.block.talos.dev', 'runtime', 'udevd'],
  ['Links.net.bronze.dev', 'LinkStatuses.net.talos.dev', 'network', 'networkd'],
  ['AddressStatuses.net.bronze.dev', 'AddressStatuses.net.talos.dev', 'network', 'networkd'],
  ['RouteStatuses.net.bronze.dev', 'RouteStatuses.net.talos.dev', 'network', 'networkd'],
  ['ResolverStatuses.net.bronze.dev', 'ResolverStatuses.net.talos.dev', 'network', 'networkd'],
  ['HostnameStatuses.net.bronze.dev', 'HostnameStatuses.net.talos.dev', 'network', 'networkd'],
  ['TimeServerStatuses.net.bronze.dev', 'TimeServerStatuses.net.talos.dev', 'network', 'networkd'],
  ['NodeAddresses.net.bronze.dev', 'NodeAddresses.net.talos.dev', 'network', 'networkd'],
  [null, 'Members.cluster.talos.dev', 'cluster', 'machined'],
  [null, 'ContainerSpecs.containers.talos.dev', 'containers', 'machined'],
  [null, 'ContainerImageStatuses.containers.talos.dev', 'containers', 'machined'],
  [null, 'ContainerInstanceSpecs.containers.talos.dev', 'containers', 'machined'],
  [null, 'ContainerStatuses.containers.bronze.dev', 'containers', 'machined'],
];

const spec = (type: string) => definitionSpec(RESOURCE_DEFINITIONS.find((d) => d.type === type)!);

describe('the registry', () => {
  it('lists every type Bronze serves, with Talos\'s names, namespaces and the role that writes it', () => {
    expect(RESOURCE_DEFINITIONS.map((d) => [d.type, d.defaultNamespace, d.owner])).toEqual(RENAMES.map(([, t, ns, o]) => [t, ns, o]));
    const bronzeOnly = RESOURCE_DEFINITIONS.filter((d) => !/\.(talos|cosi)\.dev$/.test(d.type)).map((d) => d.type);
    expect(bronzeOnly).toEqual(['ParsedMachineConfigs.config.bronze.dev', 'BootStatuses.runtime.bronze.dev', 'RootfsStatuses.runtime.bronze.dev', 'ContainerStatuses.containers.bronze.dev']);
    expect(() => new DefinitionRegistry()).not.toThrow();
  });

  it('fills the aliases as COSI does: display type, initials, plural and the group\'s leading parts', () => {
    expect(spec('LinkStatuses.net.talos.dev')).toMatchObject({
      displayType: 'LinkStatus',
      aliases: ['link', 'links', 'linkstatus', 'ls'],
      allAliases: ['linkstatuses', 'linkstatuses.net', 'linkstatuses.net.talos', 'link', 'links', 'linkstatus', 'ls'],
    });
    expect(spec('Services.v1alpha1.talos.dev').aliases).toEqual(['svc', 'service']);
    expect(spec('NodeAddresses.net.talos.dev').aliases).toEqual(['nodeaddress', 'na', 'nas']);
    expect(spec('KernelParamStatuses.runtime.talos.dev').aliases).toEqual(['sysctls', 'kernelparameters', 'kernelparams', 'kernelparamstatus', 'kps']);
    expect(spec('ResourceDefinitions.meta.cosi.dev').aliases).toEqual(['api-resources', 'resourcedefinition', 'rd', 'rds']);
    // Talos's runtime MountStatus skips them: only 'mounts' (and the type) name it.
    expect(spec('MountStatuses.runtime.talos.dev')).toMatchObject({ aliases: ['mounts'], allAliases: ['mounts'], skipAutomaticAliases: true });
    expect(spec('MachineConfigs.config.talos.dev').sensitivity).toBe('sensitive');
    expect(spec('ParsedMachineConfigs.config.bronze.dev').sensitivity).toBe('sensitive'); // the same configuration, typed
    expect(spec('ParsedMachineConfigs.config.bronze.dev').aliases).toEqual(['parsedmachineconfig', 'pmc', 'pmcs']);
    expect(spec('Services.v1alpha1.talos.dev').sensitivity).toBeUndefined();
  });

  it('resolves what a user types as a Talos client does: the type or any alias, any case', () => {
    const reg = new DefinitionRegistry();
    const cases: Record<string, string> = {
      svc: 'Services.v1alpha1.talos.dev',
      Services: 'Services.v1alpha1.talos.dev',
      'services.v1alpha1.talos.dev': 'Services.v1alpha1.talos.dev',
      ' SVC ': 'Services.v1alpha1.talos.dev',
      hostname: 'HostnameStatuses.net.talos.dev',
      links: 'LinkStatuses.net.talos.dev',
      addresses: 'AddressStatuses.net.talos.dev',
      routes: 'RouteStatuses.net.talos.dev',
      resolvers: 'ResolverStatuses.net.talos.dev',
      timeservers: 'TimeServerStatuses.net.talos.dev',
      nodeaddresses: 'NodeAddresses.net.talos.dev',
      timestatus: 'TimeStatuses.v1alpha1.talos.dev',
      disks: 'Disks.block.talos.dev',
      bd: 'BlockDevices.block.talos.dev',
      dv: 'DiscoveredVolumes.block.talos.dev',
      mc: 'MachineConfigs.config.talos.dev',
      machineconfig: 'MachineConfigs.config.talos.dev',
      parsedmachineconfig: 'ParsedMachineConfigs.config.bronze.dev',
      ms: 'MachineStatuses.runtime.talos.dev',
      sysctls: 'KernelParamStatuses.runtime.talos.dev',
      mounts: 'MountStatuses.runtime.talos.dev',
      securitystate: 'SecurityStates.talos.dev',
      bootstatus: 'BootStatuses.runtime.bronze.dev',
      boot: 'BootStatuses.runtime.bronze.dev',
      rootfs: 'RootfsStatuses.runtime.bronze.dev',
      verity: 'RootfsStatuses.runtime.bronze.dev',
      ns: 'Namespaces.meta.cosi.dev',
      rd: 'ResourceDefinitions.meta.cosi.dev',
    };
    for (const [name, type] of Object.entries(cases)) expect(reg.resolve(name).type, name).toBe(type);
  });

  it('says when a name is ambiguous, as Talos does for "rs"', () => {
    const reg = new DefinitionRegistry();
    expect(() => reg.resolve('rs')).toThrow(AmbiguousResourceTypeError);
    expect(() => reg.resolve('rs')).toThrow('resource type "rs" is ambiguous: resolverstatuses.net.talos.dev, routestatuses.net.talos.dev');
    // Every other name any type has is unique, but Talos's own 'cis' (ContainerImageStatuses and
    // ContainerInstanceSpecs share their initials in Talos too). A type may list a name twice, as
    // Talos's ContainerSpecs does ('containerspec' is also its automatic alias).
    const owners = new Map<string, Set<string>>();
    for (const s of reg.specs()) for (const n of [s.type.toLowerCase(), ...s.allAliases]) owners.set(n, (owners.get(n) ?? new Set()).add(s.type));
    expect([...owners].filter(([, ts]) => ts.size > 1).map(([n]) => n)).toEqual(['cis', 'rs']);
  });

  it('names close candidates for an unknown name', () => {
    const reg = new DefinitionRegistry();
    let err: unknown;
    try {
      reg.resolve('servces');
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(UnknownResourceTypeError);
    expect((err as UnknownResourceTypeError).candidates[0]).toBe('services (Services.v1alpha1.talos.dev)');
    expect(() => reg.resolve('zzzzzzzzzz')).toThrow(/^unknown resource type "zzzzzzzzzz"$/);
    expect(() => resolveDefinition('x', [])).toThrow(UnknownResourceTypeError);
  });

  it('lets each daemon write only the types it owns, and no one machined\'s', () => {
    const reg = new DefinitionRegistry();
    for (const d of RESOURCE_DEFINITIONS) {
      for (const writer of ['machined', 'networkd', 'timed', 'udevd', '']) {
        const want = writer !== 'machined' && writer !== '' && d.owner === writer;
        expect(reg.mayWrite(writer, d.type), `${writer} ${d.type}`).toBe(want);
        expect(mayWrite(writer, d.type)).toBe(want);
      }
    }
    expect(reg.mayWrite('networkd', 'Unknown.bronze.dev')).toBe(false);
  });

  it('refuses bad definitions and a type registered twice', () => {
    const base: ResourceDefinition = { type: 'Widgets.bronze.dev', displayType: 'Widget', aliases: [], defaultNamespace: 'runtime', owner: 'machined', printColumns: [] };
    const reg = new DefinitionRegistry([]);
    reg.register(base);
    expect(() => reg.register(base)).toThrow(/already registered/);
    expect(() => reg.register({ ...base, type: 'lowercase.dev' })).toThrow(/CamelCase plural/);
    expect(() => reg.register({ ...base, type: 'NoGroup' })).toThrow(/must look like/);
    expect(() => reg.register({ ...base, type: 'Gadgets.Bad.dev', displayType: 'Gadget' })).toThrow(/group must be lowercase/);
    expect(() => reg.register({ ...base, type: 'Gadgets.gizmo.dev', displayType: 'Thing' })).toThrow(/singular of Gadgets/);
    expect(() => reg.register({ ...base, type: 'Gadgets.gizmo.dev', displayType: 'Gadget', owner: 'apid' as never })).toThrow(/unknown owner/);
    expect(() => reg.register({ ...base, type: 'Gadgets.gizmo.dev', displayType: 'Gadget', aliases: ['Big'] })).toThrow(/bad alias/);
    expect(() => reg.register({ ...base, type: 'Gadgets.gizmo.dev', displayType: 'Gadget', printColumns: [{ name: 'X', jsonPath: '{range .x}' }] })).toThrow(
      /column X: unsupported JSONPath/,
    );
  });
});
