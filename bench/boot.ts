// Benchmark: how fast and how lean a node boots, against a floor measured in the same run.
//
//   floor   the project's own vmlinuz and default command line, with a throwaway initramfs
//           whose init (bench/floor-init.c, static) powers off at once: QEMU start to exit
//   Bronze  the image in a 512 MiB VM: QEMU start to the maintenance API answering a Version
//           call (probed from the host), to all five services Running (machined's console
//           line), and the PSS of every Bronze process at idle (machined reads /proc inside
//           the VM, `bronze.debug.memstats`)
//
// Same QEMU flags for both (q35, TCG, 2 vCPUs; arm64: virt, -cpu max), runs interleaved so that
// the machine's noise falls on both alike; medians and their ratios to the floor are printed.
// Asserts nothing.
//   make bench              (BENCH_RUNS=5 for more runs; BENCH_MEMORY=384 for another VM size)
//   make bench ARCH=arm64   (BENCH_ARCH: the arm64 image, its floor init cross-compiled)
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { DEFAULT_MEMORY_MIB, QemuVM, type QemuArch, isQemuArch } from '../image-builder/qemu.ts';
import { StateAPI, connect } from '../src/client/index.ts';
import { freePort } from '../test/lib/ports.ts';

const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const MEMORY = Number(process.env.BENCH_MEMORY ?? DEFAULT_MEMORY_MIB);
const IDLE_SECONDS = 20;
const ARCH: QemuArch = (() => {
  const a = process.env.BENCH_ARCH ?? 'amd64';
  if (!isQemuArch(a)) throw new Error(`BENCH_ARCH=${a}: not amd64 or arm64`);
  return a;
})();
const ARCH_DIR = `_out/${ARCH}`;
/** The floor's static init is built for the VM's arch (the cross compiler for arm64, as preinit is). */
const FLOOR_CC = { amd64: ['gcc', 'strip'], arm64: ['aarch64-linux-gnu-gcc', 'aarch64-linux-gnu-strip'] }[ARCH];
const MACHINE = { amd64: 'q35', arm64: 'virt, -cpu max' }[ARCH];

function size(file: string): string {
  const b = fs.statSync(file).size;
  return `${(b / 1024 / 1024).toFixed(1)} MiB`;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const secs = (ms: number) => `${(ms / 1000).toFixed(2)} s`;

/** The floor's initramfs: a cpio holding only the static init that powers off. */
function floorInitramfs(): string {
  const dir = `_out/bench/floor-${ARCH}`;
  const [cc, strip] = FLOOR_CC;
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(path.join(dir, 'root'), { recursive: true });
  execFileSync(cc!, ['-static', '-Os', '-o', path.join(dir, 'root', 'init'), 'bench/floor-init.c']);
  execFileSync(strip!, [path.join(dir, 'root', 'init')]);
  const cpio = path.join(path.resolve(dir), 'initramfs.cpio');
  execFileSync('bash', ['-c', `cd ${dir}/root && echo init | cpio --quiet -o -H newc --owner=0:0 > ${cpio}`]);
  return cpio;
}

async function floorOnce(initrd: string): Promise<number> {
  const vm = new QemuVM({ arch: ARCH, apiPort: await freePort(), noReboot: true, memoryMiB: MEMORY, initrd }).start();
  try {
    await vm.waitExit(120_000);
    return Date.now() - vm.startedAt;
  } finally {
    vm.kill();
  }
}

/**
 * The time the maintenance API first answers a resource read (what maintenance mode serves, as
 * Talos's does). An attempt starts every 250 ms while fewer than two are in flight, each with
 * its own client (a channel whose connections failed waits out gRPC's reconnect backoff) and a
 * 3 s deadline (until the guest's network is up, QEMU's port forward holds a connection without
 * an answer); the first answer ends it. At most two: a dozen held connections let through at
 * once when the guest's network comes up were a dozen TLS handshakes on a node still starting,
 * which the measurement itself then paid for.
 */
/** What each failed attempt of the last apiAnswers() saw, for the run's log. */
const probes: string[] = [];

function apiAnswers(port: number, vm: QemuVM): Promise<number> {
  probes.length = 0;
  return new Promise((resolve, reject) => {
    let done = false;
    const clients = new Set<ReturnType<typeof connect>>();
    const finish = (err: Error | undefined, at?: number) => {
      if (done) return;
      done = true;
      clearInterval(timer);
      for (const c of clients) c.close();
      if (err) reject(err);
      else resolve(at!);
    };
    const attempt = () => {
      if (clients.size >= 2) return;
      if (vm.exited) return finish(new Error(`QEMU exited before the API answered\n${vm.tail()}`));
      if (vm.oom) return finish(new Error(`OOM kill before the API answered: ${vm.oom}`));
      if (Date.now() - vm.startedAt > 300_000) return finish(new Error(`API not answering after 300 s\n${vm.tail()}`));
      const client = connect({ endpoints: [`127.0.0.1:${port}`], insecure: true });
      clients.add(client);
      const began = Date.now() - vm.startedAt;
      new StateAPI(client)
        .get('meta', 'ResourceDefinitions.meta.cosi.dev', 'resourcedefinitions.meta.cosi.dev', { deadline: Date.now() + 3000 })
        .then(() => finish(undefined, Date.now() - vm.startedAt))
        .catch((err: Error) => probes.push(`${(began / 1000).toFixed(2)}..${((Date.now() - vm.startedAt) / 1000).toFixed(2)} s: ${err.message.split('\n')[0]}`))
        .finally(() => {
          clients.delete(client);
          client.close();
        });
    };
    const timer = setInterval(attempt, 250);
    attempt();
  });
}

interface BronzeRun {
  api: number;
  running: number;
  pss: string;
  total: number;
}

async function bronzeOnce(): Promise<BronzeRun> {
  const port = await freePort();
  const vm = new QemuVM({ arch: ARCH, apiPort: port, noReboot: true, memoryMiB: MEMORY, append: `bronze.debug.memstats=${IDLE_SECONDS}` }).start();
  try {
    const api = await apiAnswers(port, vm);
    const up = await vm.waitFor(/all 5 services Running/, 300_000);
    const running = Date.now() - vm.startedAt;
    const mem = await vm.waitFor(/memstats: pss (.*)$/, (IDLE_SECONDS + 60) * 1000, up);
    const pss = /memstats: pss (.*)$/.exec(vm.lines[mem]!)![1]!;
    const total = Number(/total=([\d.]+)MiB/.exec(pss)?.[1] ?? NaN);
    // The console of the run, for reading where its time went (machined logs each phase and
    // every daemon its start-up times).
    fs.mkdirSync('_out/bench', { recursive: true });
    fs.writeFileSync(`_out/bench/bronze-console-${ARCH}-${port}.log`, vm.lines.join('\n') + '\n');
    fs.writeFileSync(`_out/bench/bronze-probes-${ARCH}-${port}.log`, probes.join('\n') + '\n');
    await vm.monitorCommand('system_powerdown');
    await vm.waitExit(120_000);
    return { api, running, pss, total };
  } finally {
    vm.kill();
  }
}

async function main(): Promise<void> {
  console.log(`image sizes (${ARCH})`);
  for (const f of [`${ARCH_DIR}/vmlinuz`, `${ARCH_DIR}/initramfs.xz`, `${ARCH_DIR}/rootfs.sqsh`, `_out/build/${ARCH}/bronze`]) console.log(`  ${f.padEnd(28)} ${size(f)}`);
  const initrd = floorInitramfs();
  console.log(`boot under QEMU/TCG (${ARCH}: ${MACHINE}, 2 vCPUs, ${MEMORY} MiB), ${RUNS} runs of each, interleaved`);
  const floors: number[] = [];
  const runs: BronzeRun[] = [];
  for (let i = 0; i < RUNS; i++) {
    const f = await floorOnce(initrd);
    floors.push(f);
    const r = await bronzeOnce();
    runs.push(r);
    console.log(`  run ${i + 1}: floor ${secs(f)}; Bronze: API answering ${secs(r.api)}, all 5 services Running ${secs(r.running)}`);
    console.log(`         PSS at idle (${IDLE_SECONDS} s): ${r.pss}`);
  }
  const floor = median(floors);
  const api = median(runs.map((r) => r.api));
  const running = median(runs.map((r) => r.running));
  console.log(`median floor (trivial init, power off)   ${secs(floor)}`);
  console.log(`median maintenance API answering         ${secs(api)}  = ${(api / floor).toFixed(1)}x the floor (target <= 3x)`);
  console.log(`median all 5 services Running            ${secs(running)}  = ${(running / floor).toFixed(1)}x the floor (target <= 4x)`);
  console.log(`median idle PSS, all six processes       ${median(runs.map((r) => r.total)).toFixed(1)} MiB (target <= 200)`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
