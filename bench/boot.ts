// Benchmark: how fast and how lean a node boots, against a floor measured in the same run.
//
//   floor   the project's own vmlinuz and default command line, with a throwaway initramfs
//           whose init (bench/floor-init.c, static) powers off at once: QEMU start to exit
//   Bronze  the image in a 512 MiB VM: QEMU start to the maintenance API answering a Version
//           call (probed from the host), to all services Running (machined's console
//           line), and the PSS of every Bronze process at idle (machined reads /proc inside
//           the VM, `bronze.debug.memstats`)
//
// Same QEMU flags for both (q35, TCG, 2 vCPUs; arm64: virt, -cpu max), runs interleaved so that
// the machine's noise falls on both alike; medians and their ratios to the floor are printed.
// Asserts nothing.
//   make bench              (BENCH_RUNS=5 for more runs; BENCH_MEMORY=384 for another VM size)
//   BENCH_AGAINST=<dir>[,<dir>...]
//                           also boots the image in each <dir> (vmlinuz, initramfs.xz, cmdline,
//                           roothash of another build, e.g. copied from _out/amd64 before a
//                           change) in the same interleaved runs, and prints this build's times
//                           as a ratio to each one's
//   make bench ARCH=arm64   (BENCH_ARCH: the arm64 image, its floor init cross-compiled)
//   BENCH_APPEND="..."      more kernel arguments for every Bronze boot, e.g. bronze.profile=machined
//                           (the consoles are kept in _out/bench/)
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import tls from 'node:tls';
import { DEFAULT_MEMORY_MIB, QemuVM, type QemuArch, isQemuArch } from '../image-builder/qemu.ts';
import { StateAPI, connect } from '../src/client/index.ts';
import { freePort } from '../test/lib/ports.ts';

const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const MEMORY = Number(process.env.BENCH_MEMORY ?? DEFAULT_MEMORY_MIB);
const AGAINST = (process.env.BENCH_AGAINST ?? '').split(',').filter(Boolean);
for (const dir of AGAINST) {
  if (!['vmlinuz', 'initramfs.xz', 'cmdline', 'roothash'].every((f) => fs.existsSync(path.join(dir, f)))) {
    throw new Error(`BENCH_AGAINST: ${dir}: not an image directory (vmlinuz, initramfs.xz, cmdline, roothash)`);
  }
}
const IDLE_SECONDS = 20;
const APPEND = process.env.BENCH_APPEND ?? '';
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
 * Talos's does), in two steps. Until the guest's network and apid are up, QEMU's port forward
 * accepts a connection and then holds it without an answer, so first a TLS handshake is tried
 * every 250 ms, each given 1.5 s: a finished handshake is apid serving on the guest's address.
 * A new attempt starts every 250 ms whatever is in flight: a connection made before the guest
 * had its address stays unanswered (QEMU's user network retries its SYN only seconds later),
 * and when at most two were in flight, as before, the two made just before the address came
 * held the next attempt back for up to 1.5 s (the consoles showed apid serving 1.2 s before the
 * first handshake the benchmark finished). Each attempt's line says whether apid answered its
 * hello: in the runs of 2026-12-06 only the finished one was answered, so the attempts still in
 * flight cost apid nothing (the held connections never reach it). Then the read itself, one at a time with a long deadline, retried
 * 250 ms after a failure: on a node still starting the first call may take seconds, and one
 * abandoned at a short deadline would only be paid for again. (Before, each attempt was a gRPC
 * call with a 3 s deadline from the start, which measured in steps of 3 s.)
 */
/** What each failed attempt of the last apiAnswers() saw, for the run's log. */
const probes: string[] = [];

function apiAnswers(port: number, vm: QemuVM): Promise<number> {
  probes.length = 0;
  const at = () => ((Date.now() - vm.startedAt) / 1000).toFixed(2);
  const check = (): Error | undefined => {
    if (vm.exited) return new Error(`QEMU exited before the API answered\n${vm.tail()}`);
    if (vm.oom) return new Error(`OOM kill before the API answered: ${vm.oom}`);
    if (Date.now() - vm.startedAt > 300_000) return new Error(`API not answering after 300 s\n${vm.tail()}`);
    return undefined;
  };
  const handshake = new Promise<void>((resolve, reject) => {
    let done = false;
    // Once one has finished, the others are dropped: they would only compete with the read.
    const open = new Set<{ drop(): void }>();
    const finish = () => {
      done = true;
      clearInterval(timer);
      for (const o of [...open]) o.drop();
    };
    const attempt = () => {
      if (done) return;
      const err = check();
      if (err) {
        finish();
        return reject(err);
      }
      const began = at();
      const socket = tls.connect({ host: '127.0.0.1', port, rejectUnauthorized: false, ALPNProtocols: ['h2'] });
      const end = (ok: boolean, why: string) => {
        if (!open.delete(handle)) return;
        socket.destroy();
        clearTimeout(giveUp);
        if (!ok) return probes.push(`${began}..${at()} s: TLS handshake: ${why}`);
        probes.push(`${began}..${at()} s: TLS handshake finished${answered}`);
        if (!done) {
          finish();
          resolve();
        }
      };
      // The first key the client logs is made from the server's hello: apid took up this attempt.
      let answered = '';
      socket.once('keylog', () => (answered = `, apid answered its hello at ${at()} s`));
      const handle = { drop: () => end(false, 'dropped: another handshake finished' + answered) };
      open.add(handle);
      const giveUp = setTimeout(() => end(false, 'no answer in 1.5 s' + answered), 1500);
      socket.once('secureConnect', () => end(true, ''));
      socket.once('error', (e) => end(false, e.message));
    };
    const timer = setInterval(attempt, 250);
    attempt();
  });
  const read = async (): Promise<number> => {
    for (;;) {
      const err = check();
      if (err) throw err;
      const client = connect({ endpoints: [`127.0.0.1:${port}`], insecure: true });
      const began = at();
      try {
        await new StateAPI(client).get('meta', 'ResourceDefinitions.meta.cosi.dev', 'resourcedefinitions.meta.cosi.dev', { deadline: Date.now() + 30_000 });
        probes.push(`${began}..${at()} s: read answered`);
        return Date.now() - vm.startedAt;
      } catch (e) {
        probes.push(`${began}..${at()} s: ${(e as Error).message.split('\n')[0]}`);
        await new Promise((r) => setTimeout(r, 250));
      } finally {
        client.close();
      }
    }
  };
  return handshake.then(() => {
    probes.push(`${at()} s: TLS handshake done`);
    return read();
  });
}

interface BronzeRun {
  api: number;
  running: number;
  pss: string;
  total: number;
  /** machined's cpustats line: each process's CPU time when all came up. */
  cpu: string;
}

async function bronzeOnce(imageDir?: string): Promise<BronzeRun> {
  const port = await freePort();
  const vm = new QemuVM({ arch: ARCH, apiPort: port, noReboot: true, memoryMiB: MEMORY, imageDir, append: `bronze.debug.memstats=${IDLE_SECONDS}${APPEND ? ` ${APPEND}` : ''}` }).start();
  try {
    const api = await apiAnswers(port, vm);
    const up = await vm.waitFor(/all \d+ services Running/, 300_000);
    const running = Date.now() - vm.startedAt;
    const cpuLine = await vm.waitFor(/cpustats: at Running (.*)$/, 30_000, up).catch(() => undefined);
    const cpu = cpuLine === undefined ? '?' : /cpustats: at Running (.*)$/.exec(vm.lines[cpuLine]!)![1]!;
    const mem = await vm.waitFor(/memstats: pss (.*)$/, (IDLE_SECONDS + 60) * 1000, up);
    const pss = /memstats: pss (.*)$/.exec(vm.lines[mem]!)![1]!;
    const total = Number(/total=([\d.]+)MiB/.exec(pss)?.[1] ?? NaN);
    // The console of the run, for reading where its time went (machined logs each phase and
    // every daemon its start-up times) and its memory (machined logs each process's PSS by
    // mapping just after the line above).
    await new Promise((r) => setTimeout(r, 1000));
    fs.mkdirSync('_out/bench', { recursive: true });
    fs.writeFileSync(`_out/bench/bronze-console-${ARCH}-${port}.log`, vm.lines.join('\n') + '\n');
    fs.writeFileSync(`_out/bench/bronze-probes-${ARCH}-${port}.log`, probes.join('\n') + '\n');
    await vm.monitorCommand('system_powerdown');
    await vm.waitExit(120_000);
    return { api, running, pss, total, cpu };
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
  const against = new Map<string, BronzeRun[]>(AGAINST.map((dir) => [dir, []]));
  const line = (r: BronzeRun) => `API answering ${secs(r.api)}, all services Running ${secs(r.running)}`;
  for (let i = 0; i < RUNS; i++) {
    const f = await floorOnce(initrd);
    floors.push(f);
    const r = await bronzeOnce();
    runs.push(r);
    console.log(`  run ${i + 1}: floor ${secs(f)}; Bronze: ${line(r)}`);
    console.log(`         CPU time at Running: ${r.cpu}`);
    console.log(`         PSS at idle (${IDLE_SECONDS} s): ${r.pss}`);
    for (const [dir, list] of against) {
      const a = await bronzeOnce(dir);
      list.push(a);
      console.log(`         ${dir}: ${line(a)}; PSS ${a.total.toFixed(1)} MiB; CPU time at Running: ${a.cpu}`);
    }
  }
  const floor = median(floors);
  const api = median(runs.map((r) => r.api));
  const running = median(runs.map((r) => r.running));
  const pss = median(runs.map((r) => r.total));
  console.log(`median floor (trivial init, power off)   ${secs(floor)}`);
  console.log(`median maintenance API answering         ${secs(api)}  = ${(api / floor).toFixed(1)}x the floor (target <= 3x)`);
  console.log(`median all services Running            ${secs(running)}  = ${(running / floor).toFixed(1)}x the floor (target <= 4x)`);
  console.log(`median idle PSS, all six processes       ${pss.toFixed(1)} MiB (target <= 200)`);
  for (const [dir, list] of against) {
    const aApi = median(list.map((r) => r.api));
    const aRunning = median(list.map((r) => r.running));
    const aPss = median(list.map((r) => r.total));
    console.log(`against ${dir} (same runs): API answering ${secs(aApi)}, Running ${secs(aRunning)}, PSS ${aPss.toFixed(1)} MiB`);
    console.log(`  this build / that one: API ${(api / aApi).toFixed(2)}, Running ${(running / aRunning).toFixed(2)}, PSS ${(pss / aPss).toFixed(2)}`);
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
