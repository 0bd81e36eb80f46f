import { describe, expect, it } from 'vitest';
import { CAPABILITY_NAMES, NEVER_GRANTED } from './capability-names.ts';

describe('capability names', () => {
  it("index each name by its number in linux/capability.h, once", () => {
    expect(CAPABILITY_NAMES).toHaveLength(41);
    expect(new Set(CAPABILITY_NAMES).size).toBe(CAPABILITY_NAMES.length);
    expect(CAPABILITY_NAMES.indexOf('CAP_CHOWN')).toBe(0);
    expect(CAPABILITY_NAMES.indexOf('CAP_SETPCAP')).toBe(8);
    expect(CAPABILITY_NAMES.indexOf('CAP_NET_ADMIN')).toBe(12);
    expect(CAPABILITY_NAMES.indexOf('CAP_SYS_ADMIN')).toBe(21);
    expect(CAPABILITY_NAMES.indexOf('CAP_SYS_TIME')).toBe(25);
    expect(CAPABILITY_NAMES.indexOf('CAP_CHECKPOINT_RESTORE')).toBe(40);
    for (const c of NEVER_GRANTED) expect(CAPABILITY_NAMES).toContain(c);
  });
});
