import { describe, expect, it } from 'vitest';
import type { Lifecycle, ResetOptions } from '../api/lifecycle.ts';
import { quorumGuardedLifecycle, type QuorumGuard } from './guard.ts';

function fakes(refuse?: string) {
  const calls: string[] = [];
  const inner: Lifecycle = {
    upgrade: async () => void calls.push('upgrade'),
    install: async () => void calls.push('install'),
    reboot: () => void calls.push('reboot'),
    reset: async () => void calls.push('reset'),
    rollback: async () => void calls.push('rollback'),
    checkReset: async () => void calls.push('inner checkReset'),
  };
  const guard: QuorumGuard = {
    quorumCheck: async (op, what, hint) => {
      calls.push(`check ${op} ${what}`);
      if (refuse) throw new Error(`${op} would break etcd quorum: ${refuse} (${hint})`);
    },
    isMember: () => true,
    leave: async () => void calls.push('leave'),
  };
  return { calls, lc: quorumGuardedLifecycle(inner, guard) };
}

const reset = (graceful: boolean): ResetOptions => ({ graceful, reboot: false, labels: [] });
const upgrade = (force: boolean) => ({ image: 'x', preserve: true, stage: false, force });
const ctl = new AbortController().signal;

describe('quorumGuardedLifecycle', () => {
  it('an upgrade checks the member may be away, and is refused before anything is written', async () => {
    const ok = fakes();
    await ok.lc.upgrade(upgrade(false), undefined, 0, () => {}, ctl);
    expect(ok.calls).toEqual(['check upgrade absent', 'upgrade']);
    const no = fakes('1 of 2 healthy');
    await expect(no.lc.upgrade(upgrade(false), undefined, 0, () => {}, ctl)).rejects.toThrow(/upgrade would break etcd quorum: 1 of 2 healthy \(--force does it anyway\)/);
    expect(no.calls).toEqual(['check upgrade absent']);
  });

  it('--force skips the check', async () => {
    const f = fakes('down');
    await f.lc.upgrade(upgrade(true), undefined, 0, () => {}, ctl);
    expect(f.calls).toEqual(['upgrade']);
  });

  it('a graceful reset checks the member may leave, then leaves etcd before the reset', async () => {
    const g = fakes();
    await g.lc.checkReset!(reset(true));
    await g.lc.reset(reset(true), 'a');
    expect(g.calls).toEqual(['inner checkReset', 'check reset leave', 'leave', 'reset']);
    await expect(fakes('no').lc.checkReset!(reset(true))).rejects.toThrow(/reset --graceful=false skips etcd/);
  });

  it('a reset that is not graceful leaves etcd alone', async () => {
    const g = fakes('down');
    await g.lc.checkReset!(reset(false));
    await g.lc.reset(reset(false), 'a');
    expect(g.calls).toEqual(['inner checkReset', 'reset']);
  });
});
