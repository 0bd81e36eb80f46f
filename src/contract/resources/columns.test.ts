import { describe, expect, it } from 'vitest';
import { evaluateJsonPath, parseJsonPath, printColumnValue } from './columns.ts';

describe('print columns', () => {
  const spec = { running: true, status: { ready: false, list: [{ name: 'a' }, { name: 'b' }] }, 'odd key': 'v', s: 'text', aliases: ['x', 'y'] };

  it('evaluates the JSONPath subset', () => {
    expect(evaluateJsonPath(spec, '{.running}')).toEqual([true]);
    expect(evaluateJsonPath(spec, '{.status.ready}')).toEqual([false]);
    expect(evaluateJsonPath(spec, '{.status.list[0].name}')).toEqual(['a']);
    expect(evaluateJsonPath(spec, '{.status.list[*].name}')).toEqual(['a', 'b']);
    expect(evaluateJsonPath(spec, "{.['odd key']}")).toEqual(['v']);
    expect(evaluateJsonPath(spec, '.s')).toEqual(['text']);
    expect(evaluateJsonPath(spec, '{.}')).toEqual([spec]);
    expect(evaluateJsonPath(spec, '{.missing.deeper}')).toEqual([]);
    expect(evaluateJsonPath(spec, '{.status.list[3]}')).toEqual([]);
    expect(evaluateJsonPath(spec, '{.s.length}')).toEqual([]);
    expect(() => parseJsonPath('{range .a}')).toThrow(/unsupported JSONPath/);
    expect(() => parseJsonPath('running')).toThrow(/must start with "."/);
  });

  it('renders cells as kubectl does', () => {
    expect(printColumnValue(spec, { jsonPath: '{.running}' })).toBe('true');
    expect(printColumnValue(spec, { jsonPath: '{.s}' })).toBe('text');
    expect(printColumnValue(spec, { jsonPath: '{.status.list}' })).toBe('[{"name":"a"},{"name":"b"}]');
    expect(printColumnValue(spec, { jsonPath: '{.aliases[:]}' })).toBe('x y');
    expect(printColumnValue(spec, { jsonPath: '{.missing}' })).toBe('');
  });
});

describe('table columns', () => {
  it('no definition repeats a column every table has already (issue 17: BootStatus had two VERSION columns)', async () => {
    const { RESOURCE_DEFINITIONS } = await import('./registry.ts');
    // TYPE is not among them: Talos's own BlockDevices has a Type column (disk, partition), and
    // talosctl shows it beside the resource's TYPE; Talos's choice stands.
    const base = ['NODE', 'NAMESPACE', 'ID', 'VERSION'];
    for (const d of RESOURCE_DEFINITIONS) {
      const names = d.printColumns.map((c) => c.name.toUpperCase());
      expect(names.filter((n) => base.includes(n)), d.type).toEqual([]);
      expect(new Set(names).size, d.type).toBe(names.length);
    }
  });
});
