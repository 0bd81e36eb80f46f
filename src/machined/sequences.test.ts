import { describe, expect, it } from 'vitest';
import { SEQUENCES, TASKS, runSequence, type TaskName } from './sequences.ts';

describe('sequences', () => {
  it('name only known tasks and end shutdown/reboot with the power task', () => {
    for (const phases of Object.values(SEQUENCES)) for (const p of phases) for (const t of p.tasks) expect(TASKS).toContain(t);
    expect(SEQUENCES.shutdown.at(-1)!.tasks.at(-1)).toBe('powerOff');
    expect(SEQUENCES.reboot.at(-1)!.tasks.at(-1)).toBe('restart');
    expect(SEQUENCES.shutdown[0]!.tasks[0]).toBe('stopServices');
  });
  it('runs tasks in order and skips PID-1-only tasks off a node', async () => {
    const ran: string[] = [];
    const impl = Object.fromEntries(TASKS.map((t) => [t, () => void ran.push(t)])) as Record<TaskName, () => void>;
    await runSequence('boot', impl, { pid1: false, log: () => {} });
    expect(ran).toEqual(['loadConfig', 'startReaper', 'startApi', 'startServices']);
    ran.length = 0;
    await runSequence('shutdown', impl, { pid1: true, log: () => {} });
    expect(ran).toEqual(['stopServices', 'sync', 'unmountAll', 'sync', 'wipeVolumes', 'sync', 'powerOff']);
  });
  it('logs each phase by what it did, and a plain shutdown has no wipe phase (issue 17: "phase wipe done")', async () => {
    const impl = Object.fromEntries(TASKS.map((t) => [t, () => {}])) as Record<TaskName, () => void>;
    const log: string[] = [];
    await runSequence('shutdown', impl, { pid1: true, log: (m) => log.push(m), conditions: { wipesPending: () => false } });
    expect(log.map((l) => l.replace(/ in \d+ ms \(machined's CPU \d+ ms\)$/, ''))).toEqual(['shutdown: services stopped', 'shutdown: filesystems synced and unmounted', 'shutdown: powering off']);
    log.length = 0;
    await runSequence('reboot', impl, { pid1: true, log: (m) => log.push(m), conditions: { wipesPending: () => true } });
    expect(log.map((l) => l.replace(/ in \d+ ms \(machined's CPU \d+ ms\)$/, ''))).toEqual([
      'reboot: services stopped',
      'reboot: filesystems synced and unmounted',
      'reboot: volumes wiped as a reset or an upgrade asked',
      'reboot: restarting',
    ]);
  });
});
