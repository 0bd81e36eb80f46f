// How a Bronze node is booted under QEMU (TCG; KVM is not usable on the build machines): the
// machine per arch, the firmware, the boot source and the command line. Shared by the build's
// tooling (image-builder/qemu.ts: `make run`, the end-to-end tests, the benchmarks) and by
// `bronzectl cluster create` (src/provision/), which boots a cluster's nodes with it.
//
// amd64 runs on q35 (SeaBIOS, or OVMF with firmware 'uefi'); arm64 on `virt` with `-cpu max`: a
// kernel boot has no firmware (QEMU loads the kernel and gives it a device tree), an ISO or disk
// boots through AAVMF (Debian's UEFI for aarch64, qemu-efi-aarch64), the only firmware arm64 has.
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

/**
 * What the VM boots from. `kernel` (the default): QEMU loads _out/<arch>/{vmlinuz,initramfs.xz}
 * itself with its command line (_out/<arch>/cmdline, its root hash, bronze.roothash=, taken from
 * _out/<arch>/roothash). The others go through firmware and a boot loader:
 * `iso` a CD-ROM, `disk` a virtio disk (`snapshot`: writes go to a temporary overlay, the
 * image is left as it was), `pxe` the network card's iPXE ROM with QEMU's DHCP/TFTP handing it
 * `bootfile` from `tftpDir`.
 */
export type QemuBoot =
  | { kind: 'kernel' }
  | { kind: 'iso'; path: string }
  | { kind: 'disk'; path: string; snapshot?: boolean }
  | { kind: 'pxe'; tftpDir: string; bootfile: string };

/** OVMF (Debian's ovmf package): the firmware code, read-only, and the variable store template. */
export const OVMF = { code: '/usr/share/OVMF/OVMF_CODE_4M.fd', vars: '/usr/share/OVMF/OVMF_VARS_4M.fd' };
/** AAVMF (Debian's qemu-efi-aarch64): the same for arm64. */
export const AAVMF = { code: '/usr/share/AAVMF/AAVMF_CODE.fd', vars: '/usr/share/AAVMF/AAVMF_VARS.fd' };

export const QEMU_ARCHES = ['amd64', 'arm64'] as const;
export type QemuArch = (typeof QEMU_ARCHES)[number];

/** What differs between the architectures' VMs, as data. */
interface ArchMachine {
  bin: string;
  machine: string;
  /** `-cpu max`; arm64 with the implementation-defined pointer-authentication algorithm, which
   *  TCG computes far faster than the architected QARMA (the guest sees pointer authentication
   *  either way). */
  cpu: string;
  uefi: { code: string; vars: string; pkg: string };
  /** Firmware when none is asked for: amd64 SeaBIOS; arm64 has only UEFI (a kernel boot needs none). */
  defaultFirmware: 'bios' | 'uefi';
  /** How a CD-ROM is attached: q35 has IDE; virt has none, so a SCSI CD on virtio-scsi. */
  cdrom: (drive: string) => string[];
}

export const MACHINES: Record<QemuArch, ArchMachine> = {
  amd64: {
    bin: 'qemu-system-x86_64',
    machine: 'q35,accel=tcg',
    cpu: 'max',
    uefi: { ...OVMF, pkg: 'ovmf' },
    defaultFirmware: 'bios',
    cdrom: (drive) => ['-device', `ide-cd,drive=${drive},bus=ide.0,bootindex=0`],
  },
  arm64: {
    bin: 'qemu-system-aarch64',
    machine: 'virt,accel=tcg',
    cpu: 'max,pauth-impdef=on',
    uefi: { ...AAVMF, pkg: 'qemu-efi-aarch64' },
    defaultFirmware: 'uefi',
    cdrom: (drive) => ['-device', 'virtio-scsi-pci,id=scsi0', '-device', `scsi-cd,drive=${drive},bus=scsi0.0,bootindex=0`],
  },
};

export function isQemuArch(a: string): a is QemuArch {
  return (QEMU_ARCHES as readonly string[]).includes(a);
}
/** OVMF built with Secure Boot (needs SMM); its variable store template is the same empty one: setup mode, no keys. */
export const OVMF_SECBOOT = { code: '/usr/share/OVMF/OVMF_CODE_4M.secboot.fd', vars: '/usr/share/OVMF/OVMF_VARS_4M.fd' };

export interface QemuOptions {
  arch?: QemuArch;
  outDir?: string;
  /** A kernel boot's kernel (default <imageDir>/vmlinuz). */
  kernel?: string;
  /** A kernel boot's image: the directory with vmlinuz, initramfs.xz, cmdline and roothash (default <outDir>/<arch>). */
  imageDir?: string;
  /** Host port forwarded to the node's :50000 (loopback only). */
  apiPort?: number;
  /** More TCP ports forwarded from the host's loopback to the node (a container's port). */
  forwards?: Array<{ host: number; guest: number }>;
  /** Default 512: the memory Bronze promises to run in (issue: the whole node in 512 MiB). */
  memoryMiB?: number;
  cpus?: number;
  /** A kernel boot's initramfs instead of the image's (the benchmark's floor boots a trivial one). */
  initrd?: string;
  /** Extra kernel arguments after the image's default command line. */
  append?: string;
  /** Exit QEMU instead of rebooting the guest. */
  noReboot?: boolean;
  monitorSocket?: string;
  /** Default: { kind: 'kernel' }. */
  boot?: QemuBoot;
  /**
   * amd64: default 'bios' (SeaBIOS); 'uefi' uses OVMF with a writable copy of its variable store;
   * 'uefi-secureboot' OVMF with Secure Boot (SMM on, the flash only SMM may write), from the
   * empty store unless `ovmfVars` names one: setup mode, so a boot loader may enroll keys.
   * arm64: 'uefi' (AAVMF) for ISO and disk boots; a kernel boot has no firmware unless 'uefi' is asked for.
   */
  firmware?: 'bios' | 'uefi' | 'uefi-secureboot';
  /** The UEFI variable store to use (written by the firmware); default: a fresh copy in a temporary directory. */
  ovmfVars?: string;
  /** Extra `-drive` specifications, e.g. `file=extra.raw,format=raw,if=virtio`. */
  drives?: string[];
  /** Any other QEMU arguments, appended as they are (e.g. `['-device', 'pcie-root-port,id=rp1,chassis=1,slot=1']`). */
  extraArgs?: string[];
  /** The SMBIOS system UUID the firmware reports (QEMU gives none without it). */
  uuid?: string;
  /**
   * Where the serial console goes: default QEMU's stdout. A file never backs up, so the guest's
   * UART never waits on the reader: with a pipe that fills (a busy reader), the kernel's 8250
   * console gives up waiting for the transmitter and characters are lost.
   */
  serialFile?: string;
}

/** Every VM's memory unless a caller asks for another: `make run` and the end-to-end tests. */
export const DEFAULT_MEMORY_MIB = 512;

/**
 * The kernel's lines when it kills a process because the node ran out of memory. A kill inside a
 * container's own memory limit is not one: its lines say "Memory cgroup out of memory" and
 * CONSTRAINT_MEMCG (the "invoked oom-killer" line before them says neither, so it is not looked at).
 */
export const OOM_LINE = /(?<!cgroup )Out of memory: Killed process|oom-kill:constraint=CONSTRAINT_(?!MEMCG)/;

/** The QEMU monitor socket of the node whose API is forwarded from `port` (one per node). */
export function defaultMonitorSocket(outDir: string, arch: string, port = 50000): string {
  return path.join(outDir, arch, `qemu-monitor-${port}.sock`);
}

/** A value inside a QEMU option list: a comma is written twice. */
export const qemuValue = (v: string) => v.replace(/,/g, ',,');

export function qemuCommand(o: QemuOptions = {}): { bin: string; args: string[]; monitor: string; tempDir?: string } {
  const arch = o.arch ?? 'amd64';
  if (!isQemuArch(arch)) throw new Error(`unknown arch '${String(arch)}' (known: ${QEMU_ARCHES.join(', ')})`);
  const m = MACHINES[arch];
  const out = o.outDir ?? '_out';
  const dir = o.imageDir ?? path.join(out, arch);
  const boot = o.boot ?? { kind: 'kernel' };
  const port = o.apiPort ?? 50000;
  const monitor = o.monitorSocket ?? defaultMonitorSocket(out, arch, port);
  const hostfwd = [`hostfwd=tcp:127.0.0.1:${port}-:50000`, ...(o.forwards ?? []).map((f) => `hostfwd=tcp:127.0.0.1:${f.host}-:${f.guest}`)].join(',');
  const firmware = o.firmware ?? (boot.kind === 'kernel' && arch === 'arm64' ? undefined : m.defaultFirmware);
  if (arch === 'arm64' && firmware === 'bios') throw new Error('arm64 has no BIOS: boot it with UEFI (AAVMF), or a kernel boot without firmware');
  if (arch === 'arm64' && boot.kind === 'pxe') throw new Error("PXE boots are amd64's here (Debian's iPXE ROMs are x86): arm64 boots a kernel, an ISO or a disk");
  const secure = firmware === 'uefi-secureboot';
  if (secure && arch !== 'amd64') throw new Error('Secure Boot is built and tested for amd64 (OVMF) only');
  const args = [
    '-machine', secure ? `${m.machine},smm=on` : m.machine,
    '-cpu', m.cpu,
    '-smp', String(o.cpus ?? 2),
    '-m', String(o.memoryMiB ?? DEFAULT_MEMORY_MIB),
  ];
  let tempDir: string | undefined;
  if (firmware === 'uefi' || secure) {
    const fw = secure ? { ...OVMF_SECBOOT, pkg: 'ovmf' } : m.uefi;
    for (const f of [fw.code, fw.vars]) if (!fs.existsSync(f)) throw new Error(`${f} is missing: apt-get install ${fw.pkg} (scripts/deps.sh)`);
    let vars = o.ovmfVars;
    if (!vars) {
      tempDir = fs.mkdtempSync(path.join(os.tmpdir(), 'bronze-ovmf-'));
      vars = path.join(tempDir, path.basename(fw.vars));
      fs.copyFileSync(fw.vars, vars);
    }
    if (secure) args.push('-global', 'driver=cfi.pflash01,property=secure,value=on');
    args.push('-drive', `if=pflash,format=raw,unit=0,readonly=on,file=${fw.code}`, '-drive', `if=pflash,format=raw,unit=1,file=${qemuValue(vars)}`);
  }
  if (boot.kind === 'kernel') {
    const kernel = o.kernel ?? path.join(dir, 'vmlinuz');
    const initrd = o.initrd ?? path.join(dir, 'initramfs.xz');
    for (const f of [kernel, initrd, path.join(dir, 'cmdline'), path.join(dir, 'roothash')]) {
      if (!fs.existsSync(f)) throw new Error(`${f} is missing: run \`make image\` first`);
    }
    // _out/<arch>/cmdline holds the root hash already; the roothash file wins, as in
    // image-builder/cmdline.sh, so an image directory of an older build (cmdline without it) boots too.
    const kernelArgs = fs.readFileSync(path.join(dir, 'cmdline'), 'utf8').split(/\s+/).filter((a) => a && !a.startsWith('bronze.roothash='));
    const cmdline = [...kernelArgs, `bronze.roothash=${fs.readFileSync(path.join(dir, 'roothash'), 'utf8').trim()}`].join(' ');
    args.push(
      '-kernel', kernel,
      '-initrd', initrd,
      '-append', [cmdline, o.append ?? ''].join(' ').trim(),
    );
  } else {
    // The boot loader has the command line; extra arguments cannot be passed from here.
    if (o.append) throw new Error(`append is only for kernel boots (this is a ${boot.kind} boot: put arguments in its boot loader's configuration)`);
    const image = boot.kind === 'pxe' ? boot.tftpDir : boot.path;
    if (!fs.existsSync(image)) throw new Error(`${image} is missing: run \`make image\` first`);
  }
  args.push('-display', 'none', '-serial', o.serialFile ? `file:${o.serialFile}` : 'stdio', '-monitor', `unix:${monitor},server,nowait`);
  if (boot.kind === 'iso') {
    args.push('-drive', `if=none,id=cd0,media=cdrom,readonly=on,format=raw,file=${qemuValue(boot.path)}`, ...m.cdrom('cd0'));
  } else if (boot.kind === 'disk') {
    args.push('-drive', `if=none,id=disk0,format=raw,file=${qemuValue(boot.path)}${boot.snapshot ? ',snapshot=on' : ''}`, '-device', 'virtio-blk-pci,drive=disk0,bootindex=0');
  }
  if (boot.kind === 'pxe') {
    args.push('-netdev', `user,id=net0,${hostfwd},tftp=${qemuValue(path.resolve(boot.tftpDir))},bootfile=${qemuValue(boot.bootfile)}`, '-device', 'virtio-net-pci,netdev=net0,bootindex=0');
  } else {
    args.push('-nic', `user,model=virtio-net-pci,${hostfwd}`);
  }
  for (const d of o.drives ?? []) args.push('-drive', d);
  args.push('-device', 'virtio-rng-pci');
  if (o.uuid) args.push('-uuid', o.uuid);
  args.push(...(o.extraArgs ?? []));
  if (o.noReboot) args.push('-no-reboot');
  return { bin: m.bin, args, monitor, ...(tempDir ? { tempDir } : {}) };
}

/** Sends one command to a QEMU human monitor socket and returns what it printed. */
export async function monitorCommand(socket: string, command: string, timeoutMs = 5000): Promise<string> {
  return new Promise((resolve, reject) => {
    const conn = net.createConnection(socket);
    let buf = '';
    const timer = setTimeout(() => {
      conn.destroy();
      reject(new Error(`QEMU monitor ${socket}: no answer to '${command}' in ${timeoutMs} ms`));
    }, timeoutMs);
    conn.on('data', (d) => {
      buf += d.toString();
      // The banner ends with a prompt; send the command once, then wait for the next prompt.
      if (!conn.writableEnded && buf.includes('(qemu)') && !buf.includes(`${command}\r\n`)) {
        conn.write(`${command}\n`);
        buf = '';
        conn.end();
      }
    });
    conn.on('close', () => {
      clearTimeout(timer);
      resolve(buf);
    });
    conn.on('error', (err) => {
      clearTimeout(timer);
      reject(new Error(`QEMU monitor ${socket}: ${err.message}`));
    });
  });
}
