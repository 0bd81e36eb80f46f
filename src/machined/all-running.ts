// Logs each service's state change and says once when every service is up: Running and
// healthy. Not in the way: a Skipped service (etcd on a worker) and etcd waiting for bootstrap
// or for a cluster to join (the node itself is up; Talos likewise).
import fs from 'node:fs';
import type { Logger } from '../lib/log.ts';
import type { Supervisor } from './supervisor/supervisor.ts';

export interface AllRunning {
  /** Whether every service is up now (since the last "all N services Running"). */
  readonly reached: boolean;
}

function uptime(): string {
  try {
    return `${fs.readFileSync('/proc/uptime', 'utf8').split(' ')[0]} s since kernel start`;
  } catch {
    return `${process.uptime().toFixed(2)} s since machined start`;
  }
}

export function watchAllRunning(supervisor: Pick<Supervisor, 'on' | 'list'>, o: { log: Logger; etcdWaiting: () => boolean; onRunning: () => void }): AllRunning {
  let reached = false;
  supervisor.on('event', (id: string, ev: { state: string; message: string }) => {
    o.log.info(`service ${id}: ${ev.state}${ev.message ? `: ${ev.message}` : ''}`);
    const list = supervisor.list();
    const aside = list.filter((s) => s.state === 'Skipped' || (s.id === 'etcd' && s.state === 'Preparing' && o.etcdWaiting()));
    const up = list.filter((s) => !aside.includes(s));
    const allUp = up.every((s) => s.state === 'Running' && s.healthy);
    if (allUp && !reached) {
      reached = true;
      const etcdNote = aside.some((s) => s.id === 'etcd' && s.state === 'Preparing') ? '; etcd waits for bootstrap or a cluster to join' : '';
      o.log.info(`all ${up.length} services Running (${uptime()}${etcdNote})`);
      o.onRunning();
    }
    if (!allUp && reached && up.some((s) => s.state !== 'Running')) reached = false;
  });
  return {
    get reached() {
      return reached;
    },
  };
}
