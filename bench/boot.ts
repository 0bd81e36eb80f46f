// Benchmark: image sizes, time from QEMU start to all services Running, and the PSS of every
// Bronze process at idle (read inside the VM by machined, `bronze.debug.memstats`).
// Run on demand: `make bench` (builds the image first). Prints numbers; asserts nothing.
import fs from 'node:fs';
import { QemuVM } from '../image-builder/qemu.ts';
import { freePort } from '../test/lib/ports.ts';

const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const IDLE_SECONDS = 20;

function size(file: string): string {
  const b = fs.statSync(file).size;
  return `${(b / 1024 / 1024).toFixed(1)} MiB (${b} bytes)`;
}

async function bootOnce(): Promise<{ toPid1: number; toRunning: number; kernelUptime: number; pss?: string }> {
  const vm = new QemuVM({ apiPort: await freePort(), noReboot: true, append: `bronze.debug.memstats=${IDLE_SECONDS}` }).start();
  try {
    const pid1 = await vm.waitFor(/machined\[1\]: machined v\S+ .*starting as PID 1/, 300_000);
    const toPid1 = Date.now() - vm.startedAt;
    const up = await vm.waitFor(/all 5 services Running \(([\d.]+) s since kernel start\)/, 300_000, pid1);
    const toRunning = Date.now() - vm.startedAt;
    const kernelUptime = Number(/\(([\d.]+) s since kernel start\)/.exec(vm.lines[up]!)![1]);
    const mem = await vm.waitFor(/memstats: pss (.*)$/, (IDLE_SECONDS + 60) * 1000, up);
    const pss = /memstats: pss (.*)$/.exec(vm.lines[mem]!)![1];
    await vm.monitorCommand('system_powerdown');
    await vm.waitExit(120_000);
    return { toPid1, toRunning, kernelUptime, pss };
  } finally {
    vm.kill();
  }
}

async function main(): Promise<void> {
  console.log('image sizes');
  for (const f of ['_out/amd64/vmlinuz', '_out/amd64/initramfs.xz', '_out/amd64/rootfs.sqsh', '_out/build/amd64/bronze']) console.log(`  ${f.padEnd(28)} ${size(f)}`);
  console.log(`boot under QEMU/TCG, ${RUNS} runs`);
  const rows = [];
  for (let i = 0; i < RUNS; i++) {
    const r = await bootOnce();
    rows.push(r);
    console.log(`  run ${i + 1}: machined PID 1 at ${(r.toPid1 / 1000).toFixed(1)} s, all services Running at ${(r.toRunning / 1000).toFixed(1)} s after QEMU start (${r.kernelUptime} s kernel uptime)`);
    console.log(`         PSS at idle (${IDLE_SECONDS} s): ${r.pss}`);
  }
  const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  console.log(`median: all services Running ${(med(rows.map((r) => r.toRunning)) / 1000).toFixed(1)} s after QEMU start`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
