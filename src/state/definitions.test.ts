import { describe, expect, it } from 'vitest';
import {
  DefinitionRegistry,
  META_NAMESPACE,
  RESOURCE_DEFINITION_TYPE,
  UnknownResourceTypeError,
  allAliases,
  bronzeDefinitions,
  evaluateJsonPath,
  parseJsonPath,
  printColumnValue,
  publishDefinitions,
  registerDefinitions,
  servicesDefinition,
  type ResourceDefinition,
  type ResourceDefinitionSpec,
} from './definitions.ts';
import { MemoryState } from './memory.ts';

function bronzeRegistry(): DefinitionRegistry {
  const reg = new DefinitionRegistry();
  registerDefinitions(reg, bronzeDefinitions);
  return reg;
}

const extra: ResourceDefinition = {
  type: 'TimeStatuses.bronze.dev',
  displayType: 'TimeStatus',
  aliases: [],
  defaultNamespace: 'runtime',
  printColumns: [{ name: 'Synced', jsonPath: '{.synced}' }],
};

describe('DefinitionRegistry', () => {
  it('resolves the type, its plural, the display type and aliases, in any case', () => {
    const reg = bronzeRegistry();
    for (const name of ['svc', 'SVC', 'service', 'Services', 'services.bronze.dev', 'Services.bronze.dev', ' svc ']) {
      expect(reg.resolve(name).type).toBe('Services.bronze.dev');
    }
    for (const name of ['machinestatus', 'MachineStatuses', 'ms']) expect(reg.resolve(name).type).toBe('MachineStatuses.bronze.dev');
    for (const name of ['hostname', 'hostnamestatus', 'hostnamestatuses', 'HostnameStatuses.net.bronze.dev']) {
      expect(reg.resolve(name).type).toBe('HostnameStatuses.net.bronze.dev');
    }
    for (const name of ['rd', 'resourcedefinitions', 'resourcedefinition']) expect(reg.resolve(name).type).toBe(RESOURCE_DEFINITION_TYPE);
  });

  it('has the Talos-like columns and namespaces', () => {
    const reg = bronzeRegistry();
    expect(reg.resolve('svc')).toMatchObject({
      defaultNamespace: 'runtime',
      printColumns: [
        { name: 'Running', jsonPath: '{.running}' },
        { name: 'Healthy', jsonPath: '{.healthy}' },
        { name: 'Health Unknown', jsonPath: '{.unknown}' },
      ],
    });
    expect(reg.resolve('ms').defaultNamespace).toBe('runtime');
    expect(reg.resolve('hostname').defaultNamespace).toBe('network');
    expect(reg.resolve('rd').defaultNamespace).toBe(META_NAMESPACE);
  });

  it('names close candidates for an unknown name', () => {
    const reg = bronzeRegistry();
    const err = (() => {
      try {
        reg.resolve('servces');
      } catch (e) {
        return e;
      }
    })();
    expect(err).toBeInstanceOf(UnknownResourceTypeError);
    expect((err as UnknownResourceTypeError).candidates[0]).toBe('services (Services.bronze.dev)');
    expect((err as Error).message).toMatch(/unknown resource type "servces"; did you mean services \(Services\.bronze\.dev\)/);
    expect(() => reg.resolve('host')).toThrow(/did you mean hostname \(HostnameStatuses\.net\.bronze\.dev\)/);
    expect(() => reg.resolve('machinestat')).toThrow(/machinestatus/);
    const none = (() => {
      try {
        reg.resolve('zzzzzzzzzz');
      } catch (e) {
        return e as UnknownResourceTypeError;
      }
    })();
    expect(none?.candidates).toEqual([]);
    expect(none?.message).toBe('unknown resource type "zzzzzzzzzz"');
  });

  it('is extended explicitly and refuses taken names and bad definitions', () => {
    const reg = bronzeRegistry();
    expect(() => reg.resolve('timestatus')).toThrow(UnknownResourceTypeError);
    registerDefinitions(reg, [extra]);
    expect(reg.resolve('timestatus').type).toBe('TimeStatuses.bronze.dev');
    expect(reg.list().map((d) => d.type)).toEqual([
      'BootStatuses.bronze.dev',
      'HostnameStatuses.net.bronze.dev',
      'MachineStatuses.bronze.dev',
      RESOURCE_DEFINITION_TYPE,
      'Services.bronze.dev',
      'TimeStatuses.bronze.dev',
    ]);
    expect(() => reg.register(extra)).toThrow(/already registered/);
    expect(() => reg.register({ ...extra, type: 'Svcs.other.dev', displayType: 'Svc', aliases: ['svc'] })).toThrow(
      /"svc" is already used by Services\.bronze\.dev/,
    );
    expect(() => reg.register({ ...extra, type: 'lowercase.dev' })).toThrow(/type must look like/);
    expect(() => reg.register({ ...extra, type: 'NoDomain' })).toThrow(/type must look like/);
    expect(() => reg.register({ ...extra, type: 'Bad.x.dev', displayType: 'Bad', printColumns: [{ name: 'X', jsonPath: '{range .x}' }] })).toThrow(
      /column X: unsupported JSONPath/,
    );
    expect(() => new DefinitionRegistry().register(servicesDefinition)).not.toThrow();
  });

  it('hands out copies', () => {
    const reg = bronzeRegistry();
    reg.resolve('svc').aliases.push('mine');
    expect(() => reg.resolve('mine')).toThrow(UnknownResourceTypeError);
    expect(reg.get('Services.bronze.dev')?.aliases).toEqual(['svc']);
  });

  it('computes all aliases', () => {
    expect(allAliases(servicesDefinition)).toEqual(['services.bronze.dev', 'services', 'service', 'svc']);
  });
});

describe('publishDefinitions', () => {
  it('publishes one ResourceDefinition per type in meta, then keeps them in sync', async () => {
    const st = new MemoryState();
    const reg = bronzeRegistry();
    await publishDefinitions(st, reg);
    const published = await st.list<ResourceDefinitionSpec>(META_NAMESPACE, RESOURCE_DEFINITION_TYPE);
    expect(published.map((r) => r.metadata.id)).toEqual([
      'bootstatuses.bronze.dev',
      'hostnamestatuses.net.bronze.dev',
      'machinestatuses.bronze.dev',
      'resourcedefinitions.meta.cosi.dev',
      'services.bronze.dev',
    ]);
    const svc = await st.get<ResourceDefinitionSpec>(META_NAMESPACE, RESOURCE_DEFINITION_TYPE, 'services.bronze.dev');
    expect(svc.spec).toEqual({
      type: 'Services.bronze.dev',
      displayType: 'Service',
      aliases: ['svc'],
      allAliases: ['services.bronze.dev', 'services', 'service', 'svc'],
      defaultNamespace: 'runtime',
      printColumns: servicesDefinition.printColumns,
      sensitive: false,
    });
    expect(svc.metadata.owner).toBe('ResourceDefinitionController');

    // Publishing again changes nothing.
    await publishDefinitions(st, reg);
    expect((await st.get(META_NAMESPACE, RESOURCE_DEFINITION_TYPE, 'services.bronze.dev')).metadata.version).toBe(1);

    // A registry with more definitions adds them; one with fewer removes the missing ones.
    registerDefinitions(reg, [extra]);
    await publishDefinitions(st, reg);
    expect((await st.list(META_NAMESPACE, RESOURCE_DEFINITION_TYPE)).map((r) => r.metadata.id)).toContain('timestatuses.bronze.dev');
    await publishDefinitions(st, bronzeRegistry());
    expect((await st.list(META_NAMESPACE, RESOURCE_DEFINITION_TYPE)).map((r) => r.metadata.id)).not.toContain('timestatuses.bronze.dev');
  });
});

describe('print columns', () => {
  const spec = { running: true, status: { ready: false, list: [{ name: 'a' }] }, 'odd key': 'v', s: 'text' };

  it('evaluates the JSONPath subset', () => {
    expect(evaluateJsonPath(spec, '{.running}')).toBe(true);
    expect(evaluateJsonPath(spec, '{.status.ready}')).toBe(false);
    expect(evaluateJsonPath(spec, '{.status.list[0].name}')).toBe('a');
    expect(evaluateJsonPath(spec, "{.['odd key']}")).toBe('v');
    expect(evaluateJsonPath(spec, '.s')).toBe('text');
    expect(evaluateJsonPath(spec, '{.}')).toBe(spec);
    expect(evaluateJsonPath(spec, '{.missing.deeper}')).toBeUndefined();
    expect(evaluateJsonPath(spec, '{.status.list[3]}')).toBeUndefined();
    expect(evaluateJsonPath(spec, '{.s.length}')).toBeUndefined();
    expect(() => parseJsonPath('{.a[*]}')).toThrow(/unsupported JSONPath/);
    expect(() => parseJsonPath('running')).toThrow(/must start with "."/);
  });

  it('renders cells', () => {
    expect(printColumnValue(spec, { name: 'R', jsonPath: '{.running}' })).toBe('true');
    expect(printColumnValue(spec, { name: 'S', jsonPath: '{.s}' })).toBe('text');
    expect(printColumnValue(spec, { name: 'L', jsonPath: '{.status.list}' })).toBe('[{"name":"a"}]');
    expect(printColumnValue(spec, { name: 'M', jsonPath: '{.missing}' })).toBe('');
  });
});

describe('table columns', () => {
  it('no definition repeats a column every table has already (issue 17: BootStatus had two VERSION columns)', () => {
    const base = ['NODE', 'NAMESPACE', 'TYPE', 'ID', 'VERSION'];
    for (const d of bronzeDefinitions) {
      const names = d.printColumns.map((c) => c.name.toUpperCase());
      expect(names.filter((n) => base.includes(n)), d.type).toEqual([]);
      expect(new Set(names).size, d.type).toBe(names.length);
    }
  });
});
