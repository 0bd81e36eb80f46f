// The generated wire types are what the protos make today: a proto changed without
// `make wire-types` fails here, so the types the code is checked against cannot drift.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { WIRE_DIR, compareTrees, generateWireTypes, listFiles } from './wire-types.ts';

describe('src/contract/wire', () => {
  it('is exactly what the protos generate', () => {
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'wire-test-'));
    try {
      const out = path.join(tmp, 'wire');
      generateWireTypes(out);
      expect(compareTrees(out, WIRE_DIR)).toEqual([]);
      // The messages the code uses are there.
      for (const f of ['cosi/resource/Resource.ts', 'talos/resource/definitions/network/LinkStatusSpec.ts', 'machine/VersionResponse.ts']) expect(listFiles(WIRE_DIR)).toContain(f);
    } finally {
      fs.rmSync(tmp, { recursive: true, force: true });
    }
  });

  it('tells a stale, a missing and a changed file apart', () => {
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'wire-cmp-'));
    try {
      const [a, b] = [path.join(tmp, 'a'), path.join(tmp, 'b')];
      fs.mkdirSync(path.join(a, 'x'), { recursive: true });
      fs.mkdirSync(b);
      fs.writeFileSync(path.join(a, 'x', 'One.ts'), '1');
      fs.writeFileSync(path.join(a, 'Two.ts'), '2');
      fs.writeFileSync(path.join(b, 'Two.ts'), '2!');
      fs.writeFileSync(path.join(b, 'Three.ts'), '3');
      expect(compareTrees(a, b)).toEqual(['changed Two.ts', 'missing x/One.ts', 'stale Three.ts']);
    } finally {
      fs.rmSync(tmp, { recursive: true, force: true });
    }
  });
});
