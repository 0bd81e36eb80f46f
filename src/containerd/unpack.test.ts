import { describe, expect, it } from 'vitest';
import { chainIds } from './unpack.ts';

describe('chain ids', () => {
  it('follows identity.ChainID: the first diff id, then sha256("<parent chain id> <diff id>")', () => {
    // Expected values computed with `printf '%s %s' … | sha256sum`, independently of this code.
    const a = 'sha256:5f70bf18a086007016e948b04aed3b82103a36bea41755b6cddfaf10ace3c6ef';
    const b = 'sha256:9e8f0ae0dd5f7c8ba2f4a1c3b6de5b9e1a6a2ad3f3b6d0a6c8b3e5b2e4d9c1f0';
    const c = 'sha256:2d711642b726b04401627ca9fbac32f5c8530fb1903cc4db02258717921a4881';
    expect(chainIds([a, b, c])).toEqual([a, 'sha256:9cc9ec9dfe4ee0149a18c41da8b553a640ece89918ad1b85d25eb87e73405274', 'sha256:4e246548b6e6202a5890b00d17cc143f9949fd8f129e0ede74b2516797bed0ec']);
    expect(chainIds([])).toEqual([]);
  });
});
