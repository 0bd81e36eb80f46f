// machined's sequences as data: each is an ordered list of phases, each phase a list of
// task names. The tasks themselves are implemented in boot-tasks.ts (a record keyed by these
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
  /** What the phase has done, for the log: `<sequence>: <done> in N ms`. */
  done: string;
  tasks: TaskName[];
  /** Run only when this condition holds (else nothing is logged): see CONDITIONS. */
  onlyIf?: ConditionName;
}

/** Conditions a phase may depend on; node.ts implements them. */
export const CONDITIONS = ['wipesPending'] as const;
export type ConditionName = (typeof CONDITIONS)[number];

export type SequenceName = 'boot' | 'shutdown' | 'reboot';

/** The end of a shutdown or a reboot: the same up to the power task. */
const wind = (power: TaskName, done: string): Phase[] => [
  { name: 'stopServices', done: 'services stopped', tasks: ['stopServices'] },
  { name: 'unmount', done: 'filesystems synced and unmounted', tasks: ['sync', 'unmountAll', 'sync'] },
  // Reset and upgrades (without --preserve) wipe volumes once nothing has them mounted.
  { name: 'wipe', done: 'volumes wiped as a reset or an upgrade asked', tasks: ['wipeVolumes', 'sync'], onlyIf: 'wipesPending' },
  { name: 'power', done, tasks: [power] },
];

export const SEQUENCES: Record<SequenceName, Phase[]> = {
  boot: [
    { name: 'earlyMounts', done: 'runtime filesystems and volumes mounted', tasks: ['mountEarly', 'systemEtc', 'mountVolumes'] },
    { name: 'identity', done: 'hostname set', tasks: ['hostname', 'ctrlAltDelSignal'] },
    { name: 'config', done: 'machine configuration loaded', tasks: ['loadConfig'] },
    { name: 'services', done: 'API and services started', tasks: ['startReaper', 'startApi', 'startServices', 'watchPowerButton'] },
  ],
  shutdown: wind('powerOff', 'powering off'),
  reboot: wind('restart', 'restarting'),
};

/** Tasks that only make sense as PID 1 on a real node (skipped in host runs). */
export const PID1_ONLY: ReadonlySet<TaskName> = new Set(['mountEarly', 'systemEtc', 'mountVolumes', 'hostname', 'ctrlAltDelSignal', 'watchPowerButton', 'sync', 'unmountAll', 'wipeVolumes', 'powerOff', 'restart']);

export async function runSequence(
  name: SequenceName,
  impl: Record<TaskName, () => void | Promise<void>>,
  opts: { pid1: boolean; log: (msg: string) => void; conditions?: Partial<Record<ConditionName, () => boolean>> },
): Promise<void> {
  for (const phase of SEQUENCES[name]) {
    if (phase.onlyIf && !(opts.conditions?.[phase.onlyIf]?.() ?? true)) continue;
    const t0 = Date.now();
    const cpu0 = process.cpuUsage();
    let ran = false;
    for (const task of phase.tasks) {
      if (!opts.pid1 && PID1_ONLY.has(task)) continue;
      ran = true;
      await impl[task]();
    }
    if (ran) {
      // machined's CPU in the phase too: at boot the two are far apart when others load beside it.
      const cpu = process.cpuUsage(cpu0);
      opts.log(`${name}: ${phase.done} in ${Date.now() - t0} ms (machined's CPU ${Math.round((cpu.user + cpu.system) / 1000)} ms)`);
    }
  }
}
