// Test and measurement aids that only kernel arguments turn on, run once every service is up.
import type { Logger } from '../lib/log.ts';
import type { Cmdline } from './cmdline.ts';
import type { Supervisor } from './supervisor/supervisor.ts';
import { cpuReport, mappingReport, memoryReport } from './memstats.ts';

export interface DebugAids {
  /** Once every service is up: each aid its kernel argument asks for, at most once per boot. */
  afterRunning(): void;
}

export function debugAids(supervisor: Pick<Supervisor, 'get' | 'list'>, cmdline: () => Cmdline, log: Logger): DebugAids {
  let killed = false;
  let memstatsScheduled = false;

  // Test aid, only with the kernel argument `bronze.debug.kill=<service>`: once every service
  // is up, SIGKILL that service's process once, so an end-to-end test can watch the restart.
  const kill = () => {
    const target = cmdline().get('bronze.debug.kill');
    if (!target || killed) return;
    const pid = supervisor.get(target)?.pid;
    if (!pid) return log.warn(`debug: bronze.debug.kill=${target}: no such running service`);
    killed = true;
    log.info(`debug: sending SIGKILL to ${target} (pid ${pid})`);
    process.kill(pid, 'SIGKILL');
  };

  // Measurement aid, only with `bronze.debug.memstats=<seconds>`: log the CPU time every
  // process has used once all are up, and after that long at idle the PSS of machined and
  // every daemon (the benchmark reads both from the console).
  const memstats = () => {
    const secs = Number(cmdline().get('bronze.debug.memstats'));
    if (!secs || memstatsScheduled) return;
    memstatsScheduled = true;
    const procs = () => [{ name: 'machined', pid: process.pid }, ...supervisor.list().map((s) => ({ name: s.id, pid: s.pid }))];
    // Where the boot's CPU went: each process's CPU time when all came up. PID 1's counts
    // the kernel's own start-up and preinit as well, which ran as PID 1 before machined.
    log.info(`cpustats: at Running ${cpuReport(procs())}`);
    setTimeout(() => {
      log.info(`memstats: pss ${memoryReport(procs())}`);
      // Where each process's PSS is, by mapping (MiB): what a change to lower it would aim at.
      for (const p of procs()) if (p.pid !== undefined) log.info(`memstats: ${p.name} ${mappingReport(p.pid)}`);
    }, secs * 1000);
  };

  return {
    afterRunning: () => {
      kill();
      memstats();
    },
  };
}
