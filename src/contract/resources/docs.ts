// The README's table of resource types, made from the registry (image-builder/resource-docs.ts
// writes it; a test checks the README has it), so the docs list what a node serves.
import { definitionSpec } from './definition.ts';
import { RESOURCE_DEFINITIONS } from './registry.ts';

export const DOCS_BEGIN = '<!-- resources: generated from src/contract/resources by image-builder/resource-docs.ts -->';
export const DOCS_END = '<!-- resources: end -->';

export function resourceTable(): string {
  const rows = RESOURCE_DEFINITIONS.map((d) => {
    const s = definitionSpec(d);
    const names = s.aliases.map((a) => `\`${a}\``).join(' ');
    return `| \`${d.type}\` | ${d.defaultNamespace} | ${names} | ${d.owner} | ${d.proto ? `\`${d.proto.message}\`` : ''} |`;
  });
  return [
    DOCS_BEGIN,
    '| Type | Namespace | Aliases (besides the type and its plural) | Written by | proto_spec |',
    '| --- | --- | --- | --- | --- |',
    ...rows,
    DOCS_END,
  ].join('\n');
}

/** `text` with the table between the markers replaced (or placed at `anchor` when missing). */
export function withResourceTable(text: string): string {
  const begin = text.indexOf(DOCS_BEGIN);
  const end = text.indexOf(DOCS_END);
  if (begin < 0 || end < begin) throw new Error('the README has no resource table markers');
  return text.slice(0, begin) + resourceTable() + text.slice(end + DOCS_END.length);
}
