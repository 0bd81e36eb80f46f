import { describe, expect, it } from 'vitest';
import type { BootStatusSpec } from '../../contract/resources/boot-status.ts';
import { DOWN_WITHIN_MS, POLL_MS, waitForUpgrade, type UpgradeWaitDeps } from './upgrade-impl.ts';

/**
 * A node on a virtual clock: `phases` says, by time, whether its API answers, its boot status
 * and its etcd errors. Each poll advances the clock by POLL_MS.
 */
function node(phases: Array<{ until: number; down?: boolean; boot?: Partial<BootStatusSpec>; etcd?: string[]; etcdState?: string }>) {
  let t = 0;
  const lines: string[] = [];
  const at = () => phases.find((p) => t < p.until) ?? phases[phases.length - 1]!;
  const up = () => {
    if (at().down) throw new Error('14 UNAVAILABLE: connect ECONNREFUSED');
    return at();
  };
  const d: UpgradeWaitDeps = {
    bootStatus: async () => ({ installed: true, booted: 'A', version: 'v1', ...up().boot }) as BootStatusSpec,
    etcdState: async () => up().etcdState,
    etcdErrors: async () => up().etcd ?? [],
    options: () => ({}),
    out: (l) => lines.push(l),
    sleep: async (ms) => void (t += ms),
    now: () => t,
  };
  return { d, lines };
}

const trying = { booted: 'A', version: 'v1', upgrade: { state: 'trying', to: 'B' } };
const committed = { booted: 'B', version: 'v2', upgrade: { state: 'committed', to: 'B' } };

describe('upgrade --wait', () => {
  it('follows a control plane through the reboot until the slot is committed and etcd is healthy', async () => {
    const { d, lines } = node([
      { until: 4000, boot: trying },
      { until: 60_000, down: true },
      { until: 90_000, boot: { ...committed, upgrade: { state: 'trying', to: 'B' } }, etcdState: 'Running' },
      { until: 100_000, boot: committed, etcdState: 'Running', etcd: ['etcdserver: no leader'] },
      { until: Infinity, boot: committed, etcdState: 'Running' },
    ]);
    await waitForUpgrade(d, '10.5.0.2', 30 * 60_000);
    expect(lines).toEqual([
      'waiting for node reboot...',
      '10.5.0.2: rebooted',
      'waiting for node to be ready...',
      '10.5.0.2: upgraded to v2 (slot B)',
      'waiting for etcd to be healthy...',
      '10.5.0.2: etcd is healthy',
    ]);
    expect(d.now()).toBeGreaterThanOrEqual(100_000);
  });

  it('a worker is ready once committed: no etcd step', async () => {
    const { d, lines } = node([{ until: 2000, down: true }, { until: Infinity, boot: committed }]);
    await waitForUpgrade(d, 'w1', 60_000);
    expect(lines.at(-1)).toBe('w1: upgraded to v2 (slot B)');
    expect(lines.join('\n')).not.toContain('etcd');
  });

  it('a control plane whose etcd waits for bootstrap is ready once committed', async () => {
    const { d, lines } = node([{ until: 2000, down: true }, { until: Infinity, boot: committed, etcdState: 'Preparing', etcd: ['etcd is not running on this node'] }]);
    await waitForUpgrade(d, 'cp', 60_000);
    expect(lines.at(-1)).toBe('cp: etcd is Preparing (not bootstrapped or joined yet): not waiting for it');
  });

  it('an upgrade the node fell back from is an error naming the slot it is on', async () => {
    const { d } = node([{ until: 2000, down: true }, { until: Infinity, boot: { booted: 'A', version: 'v1', upgrade: { state: 'failed', to: 'B' }, last: 'upgrade to v2 failed: GRUB fell back to slot A' } }]);
    await expect(waitForUpgrade(d, 'n', 60_000)).rejects.toThrow('n: the upgrade failed, the node is back on slot A (upgrade to v2 failed: GRUB fell back to slot A)');
  });

  it('a node that never goes down did not reboot', async () => {
    const { d } = node([{ until: Infinity, boot: trying }]);
    await expect(waitForUpgrade(d, 'n', 60 * 60_000)).rejects.toThrow('n: timed out waiting for node reboot');
    expect(d.now()).toBeGreaterThanOrEqual(DOWN_WITHIN_MS);
    expect(d.now()).toBeLessThan(DOWN_WITHIN_MS + 2 * POLL_MS);
  });

  it('--timeout bounds the whole wait, with what was seen last', async () => {
    const { d } = node([{ until: 2000, down: true }, { until: Infinity, boot: { booted: 'B', version: 'v2', upgrade: { state: 'trying', to: 'B' } } }]);
    await expect(waitForUpgrade(d, 'n', 120_000)).rejects.toThrow('n: timed out waiting for node to be ready (last: upgrade trying on slot B)');
    expect(d.now()).toBeLessThan(120_000 + 2 * POLL_MS);
  });
});
