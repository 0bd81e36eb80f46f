// Records which functions each role runs while the node boots (src/lib/boot-functions.ts says
// why): boots the built image under QEMU in maintenance mode with a scratch disk that begins with
// the recording magic and `bronze.debug.bootfunctions=<s>` on its command line, waits until every
// role has written its keys to that disk, and writes them to image-builder/boot-functions/<role>.txt,
// which the next build's code caches use. Run it (`make boot-functions`) after changes that move
// much of the boot's code; a stale list only leaves the changed functions to be compiled at boot.
// usage: tsx image-builder/boot-functions.ts [arch]
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DISK_MAGIC, SLOT_BYTES, readSlot } from '../src/lib/boot-functions.ts';
import { ROLE_MODULES } from '../src/roles.ts';
import { QemuVM, isQemuArch } from './qemu.ts';
import { freePort } from '../test/lib/ports.ts';

const arch = process.argv[2] ?? 'amd64';
if (!isQemuArch(arch)) throw new Error(`${arch}: not amd64 or arm64`);
/** Seconds after each role loads: past all five Running, so the boot's functions have run. */
const AFTER_S = 30;
const OUT_DIR = path.join(import.meta.dirname, 'boot-functions');
const roles = Object.keys(ROLE_MODULES);

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'bronze-boot-functions-'));
const disk = path.join(tmp, 'record.raw');
fs.writeFileSync(disk, DISK_MAGIC);
fs.truncateSync(disk, (roles.length + 1) * SLOT_BYTES);
const vm = new QemuVM({ arch, apiPort: await freePort(), noReboot: true, drives: [`file=${disk},format=raw,if=virtio`], append: `bronze.debug.bootfunctions=${AFTER_S}` }).start();
try {
  const deadline = Date.now() + 240_000;
  let got: Record<string, string[] | undefined> = {};
  for (;;) {
    const bytes = fs.readFileSync(disk);
    got = Object.fromEntries(roles.map((r) => [r, readSlot(bytes, r)]));
    if (roles.every((r) => got[r])) break;
    if (Date.now() > deadline) {
      const console = path.join(tmp, 'console.log');
      fs.writeFileSync(console, vm.lines.join('\n') + '\n');
      throw new Error(`no boot functions from ${roles.filter((r) => !got[r]).join(', ')} within 240 s (console: ${console})`);
    }
    await new Promise((r) => setTimeout(r, 2000));
  }
  fs.mkdirSync(OUT_DIR, { recursive: true });
  for (const r of roles) {
    const keys = got[r]!;
    const head = `# ${r}: the functions it ran in the first ${AFTER_S} s of a maintenance-mode boot (${arch}), by key; made by image-builder/boot-functions.ts\n`;
    fs.writeFileSync(path.join(OUT_DIR, `${r}.txt`), head + keys.map((k) => `${k}\n`).join(''));
    console.log(`boot-functions: ${r}: ${keys.length} functions`);
  }
} finally {
  vm.kill();
  fs.rmSync(tmp, { recursive: true, force: true });
}
