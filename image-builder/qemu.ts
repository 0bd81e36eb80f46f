// QEMU for Bronze's build and tests: a node's VM with its console collected (QemuVM), and the
// `make run`/`make stop` command line (which pass PORT, DISK, APPEND, ... as the flags below).
// Used by the end-to-end tests and the benchmarks. How a node is booted (machine, firmware,
// command line) is src/provision/qemu.ts, shared with `bronzectl cluster create`.
//
//   tsx image-builder/qemu.ts run  [--arch amd64|arm64] [--port 50000] [--append "..."] [--uefi]
//                                  [--disk FILE [--disk-size 6G] [--no-media] [--snapshot]] [--iso FILE]
//   tsx image-builder/qemu.ts stop [--arch amd64|arm64] [--port 50000]   (power button: orderly shutdown)
//
// amd64 runs on q35 (SeaBIOS, or OVMF with --uefi); arm64 on `virt` with `-cpu max`: a kernel
// boot has no firmware (QEMU loads the kernel and gives it a device tree), an ISO or disk boots
// through AAVMF (Debian's UEFI for aarch64, qemu-efi-aarch64), the only firmware arm64 has.
//
// Without --disk: the kernel and initramfs straight from _out (maintenance mode, memory only).
// With --disk FILE: the ISO with FILE as the node's virtio disk (/dev/vda), made blank and
// sparse when it does not exist; writes to FILE persist (--snapshot keeps them in a temporary
// overlay instead; the image's own disk.raw always runs that way). Once Bronze is installed on
// it, the ISO's menu boots the disk's current slot; --no-media boots the disk alone. Each node
// has its own QEMU monitor socket, keyed by its API port, so `stop --port N` stops that one.
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { MACHINES, OOM_LINE, QEMU_ARCHES, defaultMonitorSocket, isQemuArch, monitorCommand, qemuCommand, qemuValue, type QemuBoot, type QemuOptions } from '../src/provision/qemu.ts';

export * from '../src/provision/qemu.ts';

/** A QEMU process whose serial console is collected line by line. */
export class QemuVM {
  readonly lines: string[] = [];
  /** The first console line saying the kernel killed a process for want of memory. */
  oom: string | undefined;
  private proc: ChildProcess | undefined;
  private waiters: Array<() => void> = [];
  exitCode: number | null | undefined;
  readonly startedAt = Date.now();
  readonly monitor: string;
  private readonly bin: string;
  /** QEMU's arguments (or the command's, when a command runs QEMU). */
  readonly args: string[];
  private readonly tempDir: string | undefined;
  private readonly noReboot: boolean;
  /** Where the current QEMU process's lines start (a restart appends to the same lines). */
  private runStart = 0;
  private restarted = false;
  /** The serial console's file and this process's place in it (QEMU truncates it at each start). */
  private readonly consoleDir: string | undefined;
  private readonly serialFile: string | undefined;
  private serialFd: number | undefined;
  private serialOffset = 0;
  private serialTimer: NodeJS.Timeout | undefined;

  /** A command that runs QEMU itself (`make run`), in its own process group; else QEMU from `opts`. */
  private readonly command: { bin: string; args: string[]; cwd?: string; env?: NodeJS.ProcessEnv } | undefined;

  constructor(
    opts: QemuOptions & { command?: { bin: string; args: string[]; cwd?: string; env?: NodeJS.ProcessEnv } },
    private readonly echo?: (line: string) => void,
  ) {
    this.noReboot = !!opts.noReboot;
    this.command = opts.command;
    if (opts.command) {
      this.bin = opts.command.bin;
      this.args = opts.command.args;
      this.monitor = defaultMonitorSocket(opts.outDir ?? '_out', opts.arch ?? 'amd64', opts.apiPort ?? 50000);
      this.tempDir = undefined;
      this.consoleDir = undefined;
      this.serialFile = undefined;
      return;
    }
    // The console goes to a file that this process reads (see QemuOptions.serialFile): a test
    // that blocks its event loop for a while must not cost the guest characters.
    this.consoleDir = fs.mkdtempSync(path.join(os.tmpdir(), 'bronze-console-'));
    this.serialFile = path.join(this.consoleDir, 'console.log');
    const c = qemuCommand({ ...opts, serialFile: this.serialFile });
    this.bin = c.bin;
    this.args = c.args;
    this.monitor = c.monitor;
    this.tempDir = c.tempDir;
  }

  start(): this {
    if (!this.command) fs.rmSync(this.monitor, { force: true });
    const p = this.command
      ? spawn(this.bin, this.args, { stdio: ['ignore', 'pipe', 'pipe'], detached: true, cwd: this.command.cwd, env: this.command.env ?? process.env })
      : spawn(this.bin, this.args, { stdio: ['ignore', 'pipe', 'pipe'] });
    this.proc = p;
    // One line buffer per source, so that a console line and a QEMU message never interleave.
    const lineReader = () => {
      let partial = '';
      return (d: Buffer) => {
        partial += d.toString('utf8').replace(/\r/g, '');
        const parts = partial.split('\n');
        partial = parts.pop() ?? '';
        for (const l of parts) {
          this.lines.push(l);
          if (this.oom === undefined && OOM_LINE.test(l)) this.oom = l;
          this.echo?.(l);
        }
        if (parts.length) this.wake();
      };
    };
    p.stdout!.on('data', lineReader());
    p.stderr!.on('data', lineReader());
    let readSerial: (() => void) | undefined;
    if (this.serialFile) {
      const onSerial = lineReader();
      this.serialFd ??= fs.openSync(this.serialFile, fs.constants.O_RDONLY | fs.constants.O_CREAT);
      this.serialOffset = 0;
      const buf = Buffer.alloc(64 * 1024);
      readSerial = () => {
        for (;;) {
          const n = fs.readSync(this.serialFd!, buf, 0, buf.length, this.serialOffset);
          if (n <= 0) return;
          this.serialOffset += n;
          onSerial(buf.subarray(0, n));
        }
      };
      clearInterval(this.serialTimer);
      this.serialTimer = setInterval(readSerial, 50);
    }
    p.on('exit', (code) => {
      readSerial?.();
      clearInterval(this.serialTimer);
      if (this.emulatorFlake()) {
        this.restarted = true;
        const note = 'qemu.ts: the kernel panicked in early boot on a stale int3 (a QEMU TCG cross-CPU code-patching race, not Bronze): starting QEMU once more';
        this.lines.push(note);
        this.echo?.(note);
        this.runStart = this.lines.length;
        this.start();
        return;
      }
      this.exitCode = code;
      if (this.tempDir) fs.rmSync(this.tempDir, { recursive: true, force: true });
      if (this.serialFd !== undefined) fs.closeSync(this.serialFd);
      this.serialFd = undefined;
      if (this.consoleDir) fs.rmSync(this.consoleDir, { recursive: true, force: true });
      this.wake();
    });
    return this;
  }

  /**
   * Under multi-threaded TCG a vCPU can trap on an int3 the kernel has already patched away
   * (text_poke_bp flipping a static key during early boot): "Oops: int3" at a site whose bytes
   * are a nop, then a panic. It happens rarely, only in emulation, before any Bronze code runs.
   * A VM that exits on reboot (noReboot) and died that way before machined started is started
   * once more; nothing was written to its disks. A second such death is reported as it is.
   */
  private emulatorFlake(): boolean {
    if (!this.noReboot || this.restarted) return false;
    const run = this.lines.slice(this.runStart);
    return run.some((l) => /Oops: int3/.test(l)) && run.some((l) => /Kernel panic/.test(l)) && !run.some((l) => /machined\[1\]/.test(l));
  }

  private wake(): void {
    const w = this.waiters;
    this.waiters = [];
    for (const f of w) f();
  }

  get exited(): boolean {
    return this.exitCode !== undefined;
  }

  /** Waits for a console line matching `re` at index >= `from`; returns its index. */
  async waitFor(re: RegExp, timeoutMs: number, from = 0): Promise<number> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      this.failOnOom();
      const i = this.lines.findIndex((l, idx) => idx >= from && re.test(l));
      if (i >= 0) return i;
      if (this.exited) throw new Error(`QEMU exited (${this.exitCode}) before a line matched ${re}\n${this.tail()}`);
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`no console line matched ${re} within ${timeoutMs} ms\n${this.tail()}`);
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, Math.min(left, 1000));
        this.waiters.push(() => {
          clearTimeout(t);
          resolve();
        });
      });
    }
  }

  async waitExit(timeoutMs: number): Promise<number | null> {
    const deadline = Date.now() + timeoutMs;
    while (!this.exited) {
      this.failOnOom();
      if (Date.now() > deadline) throw new Error(`QEMU still running after ${timeoutMs} ms\n${this.tail()}`);
      await new Promise((r) => setTimeout(r, 200));
    }
    return this.exitCode ?? null;
  }

  /** An OOM kill anywhere fails whoever is waiting on the VM: the node must run in its memory. */
  failOnOom(): void {
    if (this.oom !== undefined) throw new Error(`the kernel killed a process for want of memory (${this.oomMemory()}): ${this.oom}\n${this.tail()}`);
  }

  private oomMemory(): string {
    const i = this.args.indexOf('-m');
    return i >= 0 ? `${this.args[i + 1]} MiB VM` : 'VM';
  }

  monitorCommand(cmd: string): Promise<string> {
    return monitorCommand(this.monitor, cmd);
  }

  tail(n = 40): string {
    return this.lines.slice(-n).join('\n');
  }

  /** Ends QEMU (and the command that ran it); then, like every wait, fails if the kernel killed anything for want of memory. */
  kill(): void {
    if (!this.exited && this.proc?.pid !== undefined) {
      if (this.command) {
        try {
          process.kill(-this.proc.pid, 'SIGKILL');
        } catch {
          /* gone already */
        }
      } else this.proc.kill('SIGKILL');
    }
    this.failOnOom();
  }
}

function parseFlags(argv: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (!a.startsWith('--')) throw new UsageError(`unexpected argument ${JSON.stringify(a)}`);
    out[a.slice(2)] = argv[i + 1] !== undefined && !argv[i + 1]!.startsWith('--') ? argv[++i]! : 'true';
  }
  return out;
}

class UsageError extends Error {}

const RUN_FLAGS = new Set(['arch', 'port', 'append', 'uefi', 'disk', 'disk-size', 'no-media', 'snapshot', 'iso']);
const STOP_FLAGS = new Set(['arch', 'port']);
const USAGE =
  'usage: qemu.ts run [--arch amd64|arm64] [--port N] [--append ARGS] [--uefi] [--disk FILE [--disk-size 6G] [--no-media] [--snapshot]] [--iso FILE]\n' +
  '       qemu.ts stop [--arch amd64|arm64] [--port N]\n' +
  '(make run ARCH=arm64 PORT=N DISK=FILE DISK_SIZE=6G MEDIA=none SNAPSHOT=1 APPEND="..." UEFI=1; make stop ARCH=arm64 PORT=N)\n';

function checkFlags(f: Record<string, string>, known: Set<string>): void {
  const unknown = Object.keys(f).filter((k) => !known.has(k));
  if (unknown.length) throw new UsageError(`unknown flag${unknown.length > 1 ? 's' : ''} ${unknown.map((k) => `--${k}`).join(', ')}`);
}

function portOf(f: Record<string, string>): number {
  const port = Number(f.port ?? 50000);
  if (!Number.isInteger(port) || port < 1 || port > 65535) throw new UsageError(`--port ${f.port}: not a TCP port (1-65535)`);
  return port;
}

/** `6G`, `4096M`, `3221225472` → bytes. */
export function parseSize(text: string): number {
  const m = /^(\d+)([KMGT]?)i?B?$/i.exec(text.trim());
  if (!m) throw new UsageError(`disk size ${JSON.stringify(text)}: give a number of bytes, or with K, M, G or T (e.g. 6G)`);
  const unit = { '': 1, K: 1024, M: 1024 ** 2, G: 1024 ** 3, T: 1024 ** 4 }[m[2]!.toUpperCase() as '' | 'K' | 'M' | 'G' | 'T'];
  return Number(m[1]) * unit;
}

/** A stable SMBIOS UUID (RFC 4122 layout, version 5-like) for a node named by `seed`. */
export function nodeUuid(seed: string): string {
  const h = createHash('sha256').update(`bronze-node ${seed}`).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-5${h.slice(13, 16)}-${((parseInt(h[16]!, 16) & 0x3) | 0x8).toString(16)}${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

/** Resolves when nothing listens on 127.0.0.1:port (else QEMU would fail with a cryptic hostfwd error). */
function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = net.createServer();
    srv.once('error', () => resolve(false));
    srv.listen(port, '127.0.0.1', () => srv.close(() => resolve(true)));
  });
}

/** What `run` boots, from its flags; makes a blank disk when one is named that does not exist. */
export function runBoot(f: Record<string, string>, arch: string, out = '_out', log: (m: string) => void = () => {}): { boot: QemuBoot; drives: string[] } {
  const iso = f.iso ?? path.join(out, arch, 'bronze.iso');
  if (!f.disk) {
    if (f['no-media'] || f.snapshot || f['disk-size']) throw new UsageError('--no-media, --snapshot and --disk-size go with --disk');
    return f.iso ? { boot: { kind: 'iso', path: iso }, drives: [] } : { boot: { kind: 'kernel' }, drives: [] };
  }
  const disk = path.resolve(f.disk);
  if (!fs.existsSync(disk)) {
    const bytes = parseSize(f['disk-size'] ?? '6G');
    fs.mkdirSync(path.dirname(disk), { recursive: true });
    fs.closeSync(fs.openSync(disk, 'wx'));
    fs.truncateSync(disk, bytes);
    log(`made ${f.disk}: a blank ${(bytes / 1024 ** 3).toFixed(1)} GiB disk (sparse)`);
  } else if (f['disk-size']) {
    throw new UsageError(`--disk-size: ${f.disk} exists already (its size is ${fs.statSync(disk).size} bytes)`);
  } else if (!fs.statSync(disk).isFile()) {
    throw new UsageError(`--disk ${f.disk}: not a regular file`);
  }
  // The image's own disk.raw is a signed artifact: it runs with its writes thrown away.
  const artifact = disk === path.resolve(out, arch, 'disk.raw');
  const snapshot = !!f.snapshot || artifact;
  if (artifact && !f.snapshot) log(`${f.disk} is the image's own disk: its writes go to a temporary overlay (copy it to keep them)`);
  const spec = `file=${qemuValue(disk)},format=raw,if=none,id=disk0${snapshot ? ',snapshot=on' : ''}`;
  if (f['no-media']) return { boot: { kind: 'disk', path: disk, snapshot }, drives: [] };
  return { boot: { kind: 'iso', path: iso }, drives: [spec] };
}

async function cli(argv: string[]): Promise<number> {
  const [cmd, ...rest] = argv;
  const f = parseFlags(rest);
  const arch = f.arch ?? 'amd64';
  if (!isQemuArch(arch)) {
    process.stderr.write(`bronze: unknown --arch '${arch}' (known: ${QEMU_ARCHES.join(', ')})\n`);
    return 2;
  }
  if (cmd === 'run') {
    checkFlags(f, RUN_FLAGS);
    const port = portOf(f);
    const say = (m: string) => process.stderr.write(`bronze: ${m}\n`);
    if (!(await portFree(port))) throw new UsageError(`127.0.0.1:${port} is in use (another node? give it another port: make run PORT=${port + 1})`);
    const { boot, drives } = runBoot(f, arch, '_out', say);
    // --uefi asks for UEFI; else the arch's default (amd64 SeaBIOS; arm64 AAVMF, or no firmware
    // at all for a kernel boot).
    const firmware = f.uefi ? 'uefi' : undefined;
    // A -drive with id=disk0 needs its device; the other drives are complete specifications.
    const extraArgs = drives.some((d) => d.includes('id=disk0,') || d.endsWith('id=disk0')) ? ['-device', 'virtio-blk-pci,drive=disk0,bootindex=1'] : [];
    // Firmware gives real machines a system UUID (their identity: the default hostname derives
    // from it); QEMU gives none unless told. One per node: its disk, else its port.
    const uuid = nodeUuid(f.disk ? `disk:${path.resolve(f.disk)}` : `port:${port}`);
    const c = qemuCommand({ arch, apiPort: port, append: f.append, boot, drives, extraArgs, uuid, ...(firmware ? { firmware } : {}) });
    const shown = firmware ?? (boot.kind === 'kernel' && arch === 'arm64' ? 'no firmware' : MACHINES[arch].defaultFirmware);
    const what = f.disk ? `${boot.kind === 'disk' ? 'the disk' : 'the ISO'} with ${f.disk} as /dev/vda` : boot.kind;
    const archFlag = arch === 'amd64' ? '' : ` ARCH=${arch}`;
    say(`booting ${arch} (${what}, ${shown}) under QEMU (TCG); API on 127.0.0.1:${port}; stop with \`make stop${archFlag}${port === 50000 ? '' : ` PORT=${port}`}\``);
    fs.rmSync(c.monitor, { force: true });
    const p = spawn(c.bin, c.args, { stdio: 'inherit' });
    return new Promise((resolve) =>
      p.on('exit', (code) => {
        fs.rmSync(c.monitor, { force: true });
        if (c.tempDir) fs.rmSync(c.tempDir, { recursive: true, force: true });
        resolve(code ?? 1);
      }),
    );
  }
  if (cmd === 'stop') {
    checkFlags(f, STOP_FLAGS);
    const port = portOf(f);
    const sock = defaultMonitorSocket('_out', arch, port);
    const others = () => {
      const dir = path.join('_out', arch);
      const ports = fs.existsSync(dir) ? fs.readdirSync(dir).flatMap((n) => /^qemu-monitor-(\d+)\.sock$/.exec(n)?.[1] ?? []) : [];
      return ports.length ? `; running: ${ports.map((p) => `PORT=${p}`).join(', ')}` : '';
    };
    if (!fs.existsSync(sock)) {
      process.stderr.write(`bronze: no node runs with API port ${port} (${sock} missing)${others()}\n`);
      return 1;
    }
    try {
      await monitorCommand(sock, 'system_powerdown');
    } catch (err) {
      fs.rmSync(sock, { force: true });
      process.stderr.write(`bronze: the node on port ${port} does not answer (${(err as Error).message}); its stale socket is removed${others()}\n`);
      return 1;
    }
    process.stderr.write(`bronze: power button pressed on the node with API port ${port}; it shuts down in order and QEMU exits\n`);
    return 0;
  }
  throw new UsageError(cmd ? `unknown command ${JSON.stringify(cmd)}` : 'no command');
}

// Run as a script (`tsx image-builder/qemu.ts ...`), not imported nor bundled into a benchmark.
if (/[\\/]qemu\.ts$/.test(process.argv[1] ?? '')) {
  cli(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (err: unknown) => {
      process.stderr.write(err instanceof UsageError ? `qemu.ts: ${err.message}\n${USAGE}` : `qemu.ts: ${(err as Error).message}\n`);
      process.exit(2);
    },
  );
}
