// A real NTP server for a VM: chronyd on the host's loopback (a port of its own, never
// touching the host's clock), which a QEMU guest reaches as 10.0.2.2:<port>.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export interface HostChrony {
  port: number;
  stop(): Promise<void>;
}

export async function startHostChrony(port: number): Promise<HostChrony> {
  const chronyd = '/usr/sbin/chronyd';
  if (!fs.existsSync(chronyd)) throw new Error(`${chronyd} is missing: apt-get install chrony (scripts/deps.sh)`);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bronze-chrony-'));
  fs.writeFileSync(
    path.join(dir, 'chrony.conf'),
    [`port ${port}`, 'bindaddress 127.0.0.1', 'allow 127.0.0.1', 'local stratum 8', 'cmdport 0', `pidfile ${dir}/chronyd.pid`, `driftfile ${dir}/drift`, ''].join('\n'),
  );
  // -x: never adjust the host's clock; -d: foreground, log to stderr.
  const p: ChildProcess = spawn(chronyd, ['-x', '-d', '-f', path.join(dir, 'chrony.conf')], { stdio: ['ignore', 'ignore', 'pipe'] });
  let log = '';
  p.stderr!.on('data', (d) => (log += d));
  await new Promise((r) => setTimeout(r, 500));
  if (p.exitCode !== null) throw new Error(`chronyd exited at once: ${log}`);
  return {
    port,
    stop: async () => {
      if (p.exitCode === null) {
        p.kill('SIGTERM');
        await new Promise((r) => p.once('exit', r));
      }
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
