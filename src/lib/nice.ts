// A process's nice value, on every one of its threads.
import fs from 'node:fs';
import os from 'node:os';

/**
 * Sets the nice value of every thread of a process. On Linux a nice value belongs to a thread
 * (setpriority's PRIO_PROCESS takes a thread id), and a thread starts with its creator's: Node's
 * V8 and libuv workers started while the process ran at a start-up nice value would keep it
 * otherwise. A process already gone (or a host run without the right) keeps its own.
 */
export function setNice(pid: number, nice: number): void {
  let threads: number[];
  try {
    threads = fs.readdirSync(`/proc/${pid}/task`).map(Number);
  } catch {
    threads = [pid];
  }
  for (const tid of threads) {
    try {
      os.setPriority(tid, nice);
    } catch {
      // ESRCH: it exited meanwhile; EACCES: a host run as a user cannot raise a priority back.
    }
  }
}
