import { describe, expect, it } from 'vitest';
import { runSpecHash, signalNumber } from './runtime.ts';
import type { ContainerRunSpec } from './types.ts';

const run: ContainerRunSpec = {
  name: 'web',
  image: 'busybox:1',
  environment: ['A=1'],
  mounts: [],
  profile: 'restricted',
  capabilities: { add: [], drop: [] },
  network: 'host',
  limits: { memoryBytes: 1 },
};

describe('runtime helpers', () => {
  it('hashes run specs by content, not key order or undefined fields', () => {
    const reordered = { limits: { memoryBytes: 1 }, network: 'host', capabilities: { drop: [], add: [] }, profile: 'restricted', mounts: [], environment: ['A=1'], image: 'busybox:1', name: 'web', workingDir: undefined } as ContainerRunSpec;
    expect(runSpecHash(reordered)).toBe(runSpecHash(run));
    expect(runSpecHash({ ...run, environment: ['A=2'] })).not.toBe(runSpecHash(run));
    expect(runSpecHash(run)).toMatch(/^[0-9a-f]{64}$/);
  });

  it('reads stop signals as names or numbers', () => {
    expect(signalNumber(undefined)).toBe(15);
    expect(signalNumber('SIGQUIT')).toBe(3);
    expect(signalNumber('int')).toBe(2);
    expect(signalNumber('9')).toBe(9);
    expect(signalNumber('SIGBOGUS')).toBe(15);
  });
});
