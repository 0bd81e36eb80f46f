// Benchmark: what the dm-verity root costs at boot, on the same image, in one run.
//
//   verified    the image's own initramfs: preinit sets up the verity target and reads the
//               whole device once (every block hashed), then mounts it
//   unverified  the same kernel, command line and rootfs.sqsh, with a preinit built with
//               BRONZE_BENCH_UNVERIFIED that mounts the loop device directly (a build only this
//               benchmark makes; the image never carries it)
//
// Both boot in a 512 MiB VM with the same QEMU flags, interleaved, to all services Running;
// also printed: QEMU start to preinit's exec of /sbin/init, preinit's own verified-read time,
// and the bytes the hash tree adds to rootfs.sqsh. Asserts nothing.
//   make bench-verity   (BENCH_RUNS=5 for more runs)
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { QemuVM } from '../image-builder/qemu.ts';
import { freePort } from '../test/lib/ports.ts';

const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const OUT = '_out/amd64';
const WORK = '_out/bench/verity';

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const secs = (ms: number) => `${(ms / 1000).toFixed(2)} s`;

/** The image's initramfs with its /init replaced by the unverified benchmark build of preinit. */
function unverifiedInitramfs(): string {
  const root = path.join(WORK, 'root');
  fs.rmSync(WORK, { recursive: true, force: true });
  fs.mkdirSync(path.join(root, 'dev'), { recursive: true });
  fs.mkdirSync(path.join(root, 'newroot'));
  execFileSync('gcc', ['-DBRONZE_BENCH_UNVERIFIED', '-static', '-Os', '-Wall', '-Wextra', '-Werror', '-o', path.join(root, 'init'), 'image-builder/preinit/preinit.c']);
  execFileSync('strip', [path.join(root, 'init')]);
  fs.copyFileSync(path.join(OUT, 'rootfs.sqsh'), path.join(root, 'rootfs.sqsh'));
  const out = path.resolve(WORK, 'initramfs.zst');
  // The same framing as image-builder/initramfs.sh: a newc cpio, fast zstd.
  execFileSync('bash', ['-c', `cd ${root} && find . -mindepth 1 | LC_ALL=C sort | cpio --quiet -o -H newc --owner=0:0 | zstd -q -3 -T1 --no-check > ${out}`]);
  return out;
}

interface Boot {
  exec: number;
  running: number;
  readMs?: number;
}

async function bootOnce(initrd?: string): Promise<Boot> {
  const vm = new QemuVM({ apiPort: await freePort(), noReboot: true, ...(initrd ? { initrd } : {}) }).start();
  try {
    const exec = await vm.waitFor(/bronze preinit: exec \/sbin\/init/, 300_000);
    const execAt = Date.now() - vm.startedAt;
    await vm.waitFor(/all \d+ services Running/, 300_000, exec);
    const running = Date.now() - vm.startedAt;
    const read = vm.lines.map((l) => /verified \(dm-verity, .* read in (\d+) ms\)/.exec(l)).find(Boolean);
    if (initrd && !vm.lines.some((l) => /BENCHMARK BUILD: mounting/.test(l))) throw new Error('the unverified boot did not run the benchmark build of preinit');
    await vm.monitorCommand('system_powerdown');
    await vm.waitExit(120_000);
    return { exec: execAt, running, ...(read ? { readMs: Number(read[1]) } : {}) };
  } finally {
    vm.kill();
  }
}

async function main(): Promise<void> {
  for (const f of ['vmlinuz', 'initramfs.xz', 'rootfs.sqsh', 'roothash']) if (!fs.existsSync(path.join(OUT, f))) throw new Error(`${OUT}/${f} is missing: run \`make image\``);
  // The tree's size: rootfs.sqsh is the squashfs padded to 4 KiB, then the verity superblock and tree.
  const sqsh = fs.statSync(path.join(OUT, 'rootfs.sqsh')).size;
  // The squashfs superblock's bytes_used (little-endian u64 at byte 40), as image-builder/verity.sh reads it.
  const sb = Buffer.alloc(48);
  const fd = fs.openSync(path.join(OUT, 'rootfs.sqsh'), 'r');
  fs.readSync(fd, sb, 0, 48, 0);
  fs.closeSync(fd);
  const squashfsBytes = Number(sb.readBigUInt64LE(40));
  const unverified = unverifiedInitramfs();
  console.log(`dm-verity at boot (amd64, q35, TCG, 2 vCPUs, 512 MiB), ${RUNS} runs of each, interleaved`);
  const on: Boot[] = [];
  const off: Boot[] = [];
  for (let i = 0; i < RUNS; i++) {
    const a = await bootOnce();
    const b = await bootOnce(unverified);
    on.push(a);
    off.push(b);
    console.log(`  run ${i + 1}: verified: exec /sbin/init ${secs(a.exec)}, Running ${secs(a.running)} (preinit's verified read ${a.readMs} ms); unverified: exec ${secs(b.exec)}, Running ${secs(b.running)}`);
  }
  const [eOn, eOff, rOn, rOff] = [median(on.map((b) => b.exec)), median(off.map((b) => b.exec)), median(on.map((b) => b.running)), median(off.map((b) => b.running))];
  console.log(`median QEMU start to exec /sbin/init   verified ${secs(eOn)}  unverified ${secs(eOff)}  = ${(eOn / eOff).toFixed(2)}x (+${secs(eOn - eOff)})`);
  console.log(`median QEMU start to all 5 Running     verified ${secs(rOn)}  unverified ${secs(rOff)}  = ${(rOn / rOff).toFixed(2)}x (+${secs(rOn - rOff)})`);
  console.log(`median preinit verified read           ${median(on.map((b) => b.readMs ?? NaN))} ms`);
  const tree = sqsh - squashfsBytes;
  console.log(`hash tree, superblock and padding      ${(tree / 1024).toFixed(0)} KiB on a ${(squashfsBytes / 1024 / 1024).toFixed(1)} MiB squashfs (+${((100 * tree) / squashfsBytes).toFixed(2)} %)`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
