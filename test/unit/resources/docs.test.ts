// docs/api.md lists every resource type as the registry defines it.
import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { resourceTable, withResourceTable } from '../../../src/contract/resources/docs.ts';
import { RESOURCE_DEFINITIONS } from '../../../src/contract/resources/registry.ts';

describe('docs/api.md\'s resource table', () => {
  it('is the one the registry makes (tsx image-builder/resource-docs.ts writes it)', () => {
    const readme = fs.readFileSync('docs/api.md', 'utf8');
    expect(readme).toContain(resourceTable());
    expect(withResourceTable(readme)).toBe(readme);
    for (const d of RESOURCE_DEFINITIONS) expect(readme).toContain(`| \`${d.type}\` | ${d.defaultNamespace} |`);
  });
});
