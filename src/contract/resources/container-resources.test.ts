// The container resources: Talos's names, namespace and aliases for the three Talos has, Bronze's
// group for ContainerStatuses, resolution as `bronzectl get` does it, their columns, and specs
// that encode to Talos's messages (the full round trip is test/unit/resources/wire.test.ts's).
import { describe, expect, it } from 'vitest';
import { printColumnValue } from './columns.ts';
import { containerImageStatusDefinition } from './container-image-status.ts';
import { containerInstanceId, containerInstanceSpecDefinition } from './container-instance-spec.ts';
import { containerSpecDefinition } from './container-spec.ts';
import { containerStatusDefinition } from './container-status.ts';
import { definitionSpec } from './definition.ts';
import { AmbiguousResourceTypeError, DefinitionRegistry } from './registry.ts';
import { protoSpec } from './wire.ts';

describe('container resources', () => {
  it('have Talos\'s types, namespace and aliases (COSI adds the rest, as for Talos)', () => {
    expect(definitionSpec(containerSpecDefinition)).toMatchObject({ type: 'ContainerSpecs.containers.talos.dev', defaultNamespace: 'containers', aliases: ['containerspec', 'containerspecs', 'containerspec', 'cs'] });
    expect(definitionSpec(containerImageStatusDefinition).aliases).toEqual(['containerimagestatus', 'containerimagestatuses', 'containerimagestatus', 'cis']);
    expect(definitionSpec(containerInstanceSpecDefinition).aliases).toEqual(['containerinstancespec', 'containerinstancespecs', 'containerinstancespec', 'cis']);
    expect(definitionSpec(containerStatusDefinition)).toMatchObject({ type: 'ContainerStatuses.containers.bronze.dev', allAliases: ['containerstatus', 'containerstatuses'] });
    expect(containerInstanceId('web', 3)).toBe('web-3');
  });

  it('resolve by what a user types', () => {
    const reg = new DefinitionRegistry();
    expect(reg.resolve('containerspecs').type).toBe('ContainerSpecs.containers.talos.dev');
    expect(reg.resolve('cs').type).toBe('ContainerSpecs.containers.talos.dev');
    expect(reg.resolve('containerimagestatuses').type).toBe('ContainerImageStatuses.containers.talos.dev');
    expect(reg.resolve('ContainerInstanceSpecs').type).toBe('ContainerInstanceSpecs.containers.talos.dev');
    expect(reg.resolve('containerstatus').type).toBe('ContainerStatuses.containers.bronze.dev');
    expect(() => reg.resolve('cis')).toThrow(AmbiguousResourceTypeError); // as in Talos
  });

  it('show their columns and encode', () => {
    const col = (d: { printColumns: Array<{ name: string; jsonPath: string }> }, spec: unknown) => d.printColumns.map((c) => printColumnValue(spec, c));
    expect(col(containerSpecDefinition, { image: { ref: 'docker.io/library/busybox:latest' } })).toEqual(['docker.io/library/busybox:latest']);
    expect(col(containerImageStatusDefinition, { phase: 'ready', image: 'x', digest: 'sha256:ab' })).toEqual(['ready', 'sha256:ab']);
    expect(col(containerStatusDefinition, { phase: 'running', image: 'x', healthy: true, starts: 1 })).toEqual(['running', 'true', '1', 'x']);
    expect(protoSpec(containerImageStatusDefinition, { phase: 'failed', image: 'x', error: 'e' }).toString('hex')).toBe('08031201782201' + Buffer.from('e').toString('hex'));
    expect(protoSpec(containerStatusDefinition, { phase: 'running', image: 'x', healthy: false }).toString('hex')).toBe('0a0772756e6e696e67120178' + '3800');
  });
});
