// machined's sequences as data: each is an ordered list of phases, each phase a list of
// task names. The tasks themselves are implemented in main.ts (a record keyed by these
// names, so the compiler checks every task has an implementation).
export const TASKS = [
  'mountEarly',
  'systemEtc',
  'mountVolumes',
  'hostname',
  'ctrlAltDelSignal',
  'loadConfig',
  'startReaper',
  'startApi',
  'startServices',
  'watchPowerButton',
  'stopServices',
  'sync',
  'unmountAll',
  'wipeVolumes',
  'powerOff',
  'restart',
] as const;
export type TaskName = (typeof TASKS)[number];

export interface Phase {
  name: string;
  tasks: TaskName[];
}

export type SequenceName = 'boot' | 'shutdown' | 'reboot';

export const SEQUENCES: Record<SequenceName, Phase[]> = {
  boot: [
    { name: 'earlyMounts', tasks: ['mountEarly', 'systemEtc', 'mountVolumes'] },
    { name: 'identity', tasks: ['hostname', 'ctrlAltDelSignal'] },
    { name: 'config', tasks: ['loadConfig'] },
    { name: 'services', tasks: ['startReaper', 'startApi', 'startServices', 'watchPowerButton'] },
  ],
  shutdown: [
    { name: 'stopServices', tasks: ['stopServices'] },
    { name: 'unmount', tasks: ['sync', 'unmountAll', 'sync'] },
    // Reset and upgrades (without --preserve) wipe volumes once nothing has them mounted.
    { name: 'wipe', tasks: ['wipeVolumes', 'sync'] },
    { name: 'power', tasks: ['powerOff'] },
  ],
  reboot: [
    { name: 'stopServices', tasks: ['stopServices'] },
    { name: 'unmount', tasks: ['sync', 'unmountAll', 'sync'] },
    // Reset and upgrades (without --preserve) wipe volumes once nothing has them mounted.
    { name: 'wipe', tasks: ['wipeVolumes', 'sync'] },
    { name: 'power', tasks: ['restart'] },
  ],
};

/** Tasks that only make sense as PID 1 on a real node (skipped in host runs). */
export const PID1_ONLY: ReadonlySet<TaskName> = new Set(['mountEarly', 'systemEtc', 'mountVolumes', 'hostname', 'ctrlAltDelSignal', 'watchPowerButton', 'sync', 'unmountAll', 'wipeVolumes', 'powerOff', 'restart']);

export async function runSequence(
  name: SequenceName,
  impl: Record<TaskName, () => void | Promise<void>>,
  opts: { pid1: boolean; log: (msg: string) => void },
): Promise<void> {
  for (const phase of SEQUENCES[name]) {
    const t0 = Date.now();
    for (const task of phase.tasks) {
      if (!opts.pid1 && PID1_ONLY.has(task)) continue;
      await impl[task]();
    }
    opts.log(`${name}: phase ${phase.name} done in ${Date.now() - t0} ms`);
  }
}
