// warmApi makes, ahead of the first caller, the code of the messages every client's first calls
// carry: afterwards those messages' types have their functions, and nothing else was written.
import { describe, expect, it } from 'vitest';
import { messageType } from '../../contract/protos.ts';
import { DefinitionRegistry } from '../../contract/resources/registry.ts';
import { NAMESPACES } from '../../contract/resources/namespace.ts';
import { MemoryState } from '../../state/memory.ts';
import { publishDefinitions, publishNamespaces } from '../meta.ts';
import { warmApi } from './warm.ts';

const generated = (name: string) => ['encode', 'decode', 'fromObject', 'toObject'].filter((f) => Object.hasOwn(messageType(name), f));

describe('warmApi', () => {
  it('generates the first calls\' message code: Version, and a ResourceDefinition by Get and List', async () => {
    const state = new MemoryState();
    const registry = new DefinitionRegistry();
    await publishNamespaces(state, NAMESPACES);
    await publishDefinitions(state, registry);
    const versions = (await state.list('meta', 'ResourceDefinitions.meta.cosi.dev')).map((r) => r.metadata.version);
    expect(generated('cosi.resource.GetResponse')).toEqual([]);
    await warmApi({ state, registry });
    expect(generated('cosi.resource.GetRequest').sort()).toEqual(['decode', 'encode', 'fromObject', 'toObject']);
    expect(generated('cosi.resource.GetResponse').sort()).toEqual(['encode', 'fromObject']);
    expect(generated('cosi.resource.ListResponse').sort()).toEqual(['encode', 'fromObject']);
    expect(generated('machine.VersionResponse').sort()).toEqual(['encode', 'fromObject']);
    expect(generated('cosi.resource.meta.ResourceDefinitionSpec')).toContain('encode');
    expect((await state.list('meta', 'ResourceDefinitions.meta.cosi.dev')).map((r) => r.metadata.version)).toEqual(versions);
  });
});
