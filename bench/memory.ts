// Benchmark: the least memory a node needs. Boots the image (QEMU -kernel, maintenance mode, no
// disk) in VMs of decreasing size and prints, for each, the time from QEMU start to machined's
// "all services Running", the memory the kernel gives it (MemTotal, from machined's console
// line), health-check failures on the console, and any OOM kill. 512 MiB (the size every test
// uses) is booted first and last; the minimum is the smallest size that reached Running within
// twice the slower of the two 512 MiB times. src/machined/memory-check.ts holds that minimum
// (and the MemTotal it gives), which machined checks at boot. Asserts nothing.
//   tsx bench/memory.ts            (BENCH_SIZES=512,448,384,... to choose the sizes)
import { QemuVM } from '../image-builder/qemu.ts';
import { freePort } from '../test/lib/ports.ts';

const SIZES = (process.env.BENCH_SIZES ?? '448,384,352,320,288,256').split(',').map(Number).filter((n) => n > 0);
const LIMIT_MS = Number(process.env.BENCH_LIMIT_MS ?? 600_000);
const RUNNING = /machined\[1\]: all \d+ services Running/;

interface Run {
  mib: number;
  runningMs?: number;
  memTotalMiB?: number;
  healthFailures: number;
  oom?: string;
  error?: string;
}

async function boot(mib: number): Promise<Run> {
  const vm = new QemuVM({ apiPort: await freePort(), memoryMiB: mib, noReboot: true }).start();
  const run: Run = { mib, healthFailures: 0 };
  try {
    await vm.waitFor(RUNNING, LIMIT_MS);
    run.runningMs = Date.now() - vm.startedAt;
  } catch (err) {
    run.error = (err as Error).message.split('\n')[0];
  } finally {
    try {
      vm.kill();
    } catch {
      // an OOM kill is reported below, not thrown
    }
  }
  run.oom = vm.oom;
  const mem = vm.lines.map((l) => /machined\[1\]: memory: (\d+) MiB \(MemTotal\)|this machine has (\d+) MiB of memory/.exec(l)).find(Boolean);
  if (mem) run.memTotalMiB = Number(mem[1] ?? mem[2]);
  run.healthFailures = vm.lines.filter((l) => /Health check failed/.test(l)).length;
  return run;
}

const secs = (ms?: number) => (ms === undefined ? '-' : `${(ms / 1000).toFixed(1)} s`);

const runs: Run[] = [];
const show = (r: Run) =>
  console.log(
    `memory: ${String(r.mib).padStart(4)} MiB VM: Running after ${secs(r.runningMs).padStart(8)}, MemTotal ${r.memTotalMiB ?? '?'} MiB, ` +
      `${r.healthFailures} health check failures${r.oom ? `, OOM: ${r.oom}` : ''}${r.error ? `, ${r.error}` : ''}`,
  );
for (const mib of [512, ...SIZES, 512]) {
  const r = await boot(mib);
  runs.push(r);
  show(r);
}
const refs = runs.filter((r) => r.mib === 512 && r.runningMs !== undefined).map((r) => r.runningMs!);
const ref = refs.reduce((a, b) => a + b, 0) / refs.length;
const fits = (r: Run) => r.runningMs !== undefined && r.runningMs <= 2 * ref && !r.oom;
// The smallest size that fits, with every larger size fitting too.
let min: Run | undefined;
for (const mib of [...new Set(runs.map((r) => r.mib))].sort((a, b) => b - a)) {
  const at = runs.filter((r) => r.mib === mib);
  if (!at.every(fits)) break;
  min = at[0];
}
console.log(`memory: 512 MiB reaches Running in ${secs(ref)} (mean of ${refs.length}); within 2x (${secs(2 * ref)}) down to ${min ? `${min.mib} MiB (MemTotal ${min.memTotalMiB} MiB)` : 'no size'}`);
