// Benchmark: `bronzectl cluster create --wait` to healthy, for 1 and for 3 control planes (no
// workers), each timed from the command's start to its return (health passed), then destroyed.
// QEMU with TCG, 512 MiB and one vCPU per node. Prints the times. Asserts nothing.
//   make bench-cluster   (needs root: the cluster's network namespace)
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bronze-bench-cluster-'));
const cli = (args: string[]) => spawnSync(process.execPath, ['bin/bronzectl.mjs', '--bronzeconfig', path.join(dir, 'config'), ...args, '--state', path.join(dir, 'clusters')], { encoding: 'utf8', timeout: 30 * 60_000 });
try {
  for (const cps of [1, 3]) {
    const name = `bench-${cps}cp`;
    const t0 = Date.now();
    const r = cli(['cluster', 'create', '--name', name, '--controlplanes', String(cps), '--workers', '0', '--cpus', '1']);
    const s = (Date.now() - t0) / 1000;
    cli(['cluster', 'destroy', '--name', name]);
    if (r.status !== 0) {
      console.error(`cluster create (${cps} control planes) failed:\n${r.stdout}\n${r.stderr}`);
      process.exit(1);
    }
    console.log(`cluster: create --controlplanes ${cps} --workers 0 to healthy: ${s.toFixed(1)} s`);
  }
} finally {
  fs.rmSync(dir, { recursive: true, force: true });
}
