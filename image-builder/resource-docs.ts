// Writes docs/api.md's table of resource types from the registry (src/contract/resources/docs.ts).
//   tsx image-builder/resource-docs.ts
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { withResourceTable } from '../src/contract/resources/docs.ts';

const DOC = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', 'docs', 'api.md');
const before = fs.readFileSync(DOC, 'utf8');
const after = withResourceTable(before);
if (after !== before) fs.writeFileSync(DOC, after);
