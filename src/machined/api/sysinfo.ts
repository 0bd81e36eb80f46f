// Observation RPCs: Hostname, Memory, LoadAvg, SystemStat, CPUInfo, DiskStats,
// NetworkDeviceStats, Mounts, Processes. Each reads the kernel's text files under procRoot
// (default /proc) and turns them into the Talos reply shapes with a pure parser exported here.

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type * as grpc from '@grpc/grpc-js';
import { unary } from './common.ts';

/** USER_HZ: the unit of /proc/stat and /proc/<pid>/stat times, fixed at 100 in the kernel's ABI. */
export const USER_HZ = 100;

// ---------------------------------------------------------------------------------------------
// Parsers (pure).

/** /proc/meminfo → MemInfo fields: the key lowercased without punctuation ('Active(anon)' →
 *  'activeanon', 'Committed_AS' → 'committedas'), values as printed (kB, or counts). Keys the
 *  proto lacks are dropped by the encoder. */
export function parseMeminfo(text: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const line of text.split('\n')) {
    const m = line.match(/^([^:]+):\s+(\d+)/);
    if (m) out[m[1]!.toLowerCase().replace(/[^a-z0-9]/g, '')] = Number(m[2]);
  }
  return out;
}

export function parseLoadavg(text: string): { load1: number; load5: number; load15: number } {
  const [a, b, c] = text.trim().split(/\s+/).map(Number);
  return { load1: a ?? 0, load5: b ?? 0, load15: c ?? 0 };
}

export interface CpuStat {
  user: number;
  nice: number;
  system: number;
  idle: number;
  iowait: number;
  irq: number;
  soft_irq: number;
  steal: number;
  guest: number;
  guest_nice: number;
}

export interface SystemStat {
  boot_time: number;
  cpu_total: CpuStat;
  cpu: CpuStat[];
  irq_total: number;
  irq: number[];
  context_switches: number;
  process_created: number;
  process_running: number;
  process_blocked: number;
  soft_irq_total: number;
  soft_irq: Record<string, number>;
}

const CPU_FIELDS = ['user', 'nice', 'system', 'idle', 'iowait', 'irq', 'soft_irq', 'steal', 'guest', 'guest_nice'] as const;
const SOFTIRQ_FIELDS = ['hi', 'timer', 'net_tx', 'net_rx', 'block', 'block_io_poll', 'tasklet', 'sched', 'hrtimer', 'rcu'] as const;

/** /proc/stat; CPU times in seconds (ticks / USER_HZ), as Talos reports them. */
export function parseStat(text: string): SystemStat {
  const zeroCpu = (): CpuStat => Object.fromEntries(CPU_FIELDS.map((f) => [f, 0])) as unknown as CpuStat;
  const out: SystemStat = {
    boot_time: 0,
    cpu_total: zeroCpu(),
    cpu: [],
    irq_total: 0,
    irq: [],
    context_switches: 0,
    process_created: 0,
    process_running: 0,
    process_blocked: 0,
    soft_irq_total: 0,
    soft_irq: Object.fromEntries(SOFTIRQ_FIELDS.map((f) => [f, 0])),
  };
  for (const line of text.split('\n')) {
    const [key, ...rest] = line.trim().split(/\s+/);
    if (!key) continue;
    const nums = rest.map(Number);
    if (key.startsWith('cpu')) {
      const cpu = zeroCpu();
      CPU_FIELDS.forEach((f, i) => (cpu[f] = (nums[i] ?? 0) / USER_HZ));
      if (key === 'cpu') out.cpu_total = cpu;
      else out.cpu.push(cpu);
    } else if (key === 'intr') {
      out.irq_total = nums[0] ?? 0;
      out.irq = nums.slice(1);
    } else if (key === 'softirq') {
      out.soft_irq_total = nums[0] ?? 0;
      SOFTIRQ_FIELDS.forEach((f, i) => (out.soft_irq[f] = nums[i + 1] ?? 0));
    } else if (key === 'btime') out.boot_time = nums[0] ?? 0;
    else if (key === 'ctxt') out.context_switches = nums[0] ?? 0;
    else if (key === 'processes') out.process_created = nums[0] ?? 0;
    else if (key === 'procs_running') out.process_running = nums[0] ?? 0;
    else if (key === 'procs_blocked') out.process_blocked = nums[0] ?? 0;
  }
  return out;
}

/** /proc/cpuinfo field → CPUInfo field and how to read it. */
const CPUINFO_FIELDS: Record<string, [string, 'str' | 'int' | 'float' | 'list']> = {
  processor: ['processor', 'int'],
  vendor_id: ['vendor_id', 'str'],
  'cpu family': ['cpu_family', 'str'],
  model: ['model', 'str'],
  'model name': ['model_name', 'str'],
  stepping: ['stepping', 'str'],
  microcode: ['microcode', 'str'],
  'cpu mhz': ['cpu_mhz', 'float'],
  'cache size': ['cache_size', 'str'],
  'physical id': ['physical_id', 'str'],
  siblings: ['siblings', 'int'],
  'core id': ['core_id', 'str'],
  'cpu cores': ['cpu_cores', 'int'],
  apicid: ['apic_id', 'str'],
  'initial apicid': ['initial_apic_id', 'str'],
  fpu: ['fpu', 'str'],
  fpu_exception: ['fpu_exception', 'str'],
  'cpuid level': ['cpu_id_level', 'int'],
  wp: ['wp', 'str'],
  flags: ['flags', 'list'],
  features: ['flags', 'list'], // arm64
  bugs: ['bugs', 'list'],
  bogomips: ['bogo_mips', 'float'],
  'clflush size': ['cl_flush_size', 'int'],
  cache_alignment: ['cache_alignment', 'int'],
  'address sizes': ['address_sizes', 'str'],
  'power management': ['power_management', 'str'],
  'cpu implementer': ['vendor_id', 'str'], // arm64
  'cpu part': ['model', 'str'],
  'cpu variant': ['stepping', 'str'],
};

/** /proc/cpuinfo: one entry per processor block (x86 field names; arm64's main ones mapped). */
export function parseCpuinfo(text: string): Array<Record<string, unknown>> {
  const cpus: Array<Record<string, unknown>> = [];
  for (const block of text.split(/\n\s*\n/)) {
    const cpu: Record<string, unknown> = {};
    for (const line of block.split('\n')) {
      const at = line.indexOf(':');
      if (at === -1) continue;
      const key = line.slice(0, at).trim().toLowerCase();
      const value = line.slice(at + 1).trim();
      const field = CPUINFO_FIELDS[key];
      if (!field) continue;
      const [name, kind] = field;
      if (kind === 'str') cpu[name] = value;
      else if (kind === 'list') cpu[name] = value === '' ? [] : value.split(/\s+/);
      else {
        const n = kind === 'int' ? parseInt(value, value.startsWith('0x') ? 16 : 10) : parseFloat(value);
        cpu[name] = Number.isFinite(n) ? n : 0;
      }
    }
    if ('processor' in cpu) cpus.push(cpu);
  }
  return cpus;
}

const DISK_FIELDS = [
  'read_completed',
  'read_merged',
  'read_sectors',
  'read_time_ms',
  'write_completed',
  'write_merged',
  'write_sectors',
  'write_time_ms',
  'io_in_progress',
  'io_time_ms',
  'io_time_weighted_ms',
  'discard_completed',
  'discard_merged',
  'discard_sectors',
  'discard_time_ms',
] as const;

/** /proc/diskstats: every device, and the total (the sum over all of them, as Talos). */
export function parseDiskstats(text: string): { total: Record<string, number | string>; devices: Array<Record<string, number | string>> } {
  const devices: Array<Record<string, number | string>> = [];
  for (const line of text.split('\n')) {
    const f = line.trim().split(/\s+/);
    if (f.length < 14) continue;
    const dev: Record<string, number | string> = { name: f[2]! };
    DISK_FIELDS.forEach((name, i) => (dev[name] = Number(f[3 + i] ?? 0) || 0));
    devices.push(dev);
  }
  return { total: sum(devices, DISK_FIELDS, 'total'), devices };
}

const NETDEV_FIELDS = [
  'rx_bytes',
  'rx_packets',
  'rx_errors',
  'rx_dropped',
  'rx_fifo',
  'rx_frame',
  'rx_compressed',
  'rx_multicast',
  'tx_bytes',
  'tx_packets',
  'tx_errors',
  'tx_dropped',
  'tx_fifo',
  'tx_collisions',
  'tx_carrier',
  'tx_compressed',
] as const;

/** /proc/net/dev: every interface, and the total over all of them. */
export function parseNetDev(text: string): { total: Record<string, number | string>; devices: Array<Record<string, number | string>> } {
  const devices: Array<Record<string, number | string>> = [];
  for (const line of text.split('\n')) {
    const at = line.indexOf(':');
    if (at === -1 || line.includes('|')) continue;
    const nums = line.slice(at + 1).trim().split(/\s+/).map(Number);
    const dev: Record<string, number | string> = { name: line.slice(0, at).trim() };
    NETDEV_FIELDS.forEach((name, i) => (dev[name] = nums[i] || 0));
    devices.push(dev);
  }
  return { total: sum(devices, NETDEV_FIELDS, 'total'), devices };
}

function sum(rows: Array<Record<string, number | string>>, fields: readonly string[], name: string): Record<string, number | string> {
  const total: Record<string, number | string> = { name };
  for (const f of fields) total[f] = rows.reduce((acc, r) => acc + (r[f] as number), 0);
  return total;
}

/** Decodes the octal escapes /proc/mounts uses for blanks and backslashes ('\040' → ' '). */
export function unescapeMountField(field: string): string {
  return field.replace(/\\([0-7]{3})/g, (_, oct: string) => String.fromCharCode(parseInt(oct, 8)));
}

/** /proc/mounts → (filesystem, mount point) pairs in mount order. */
export function parseMounts(text: string): Array<{ filesystem: string; mountedOn: string }> {
  const out: Array<{ filesystem: string; mountedOn: string }> = [];
  for (const line of text.split('\n')) {
    const f = line.trim().split(/\s+/);
    if (f.length < 2 || !f[0]) continue;
    out.push({ filesystem: unescapeMountField(f[0]), mountedOn: unescapeMountField(f[1]!) });
  }
  return out;
}

export interface ProcStat {
  pid: number;
  comm: string;
  state: string;
  ppid: number;
  /** Ticks. */
  utime: number;
  stime: number;
  threads: number;
  /** Bytes. */
  vsize: number;
  /** Pages. */
  rss: number;
}

/** /proc/<pid>/stat. The command name is in parentheses and may itself hold ')' or blanks. */
export function parseProcStat(text: string): ProcStat {
  const open = text.indexOf('(');
  const close = text.lastIndexOf(')');
  if (open === -1 || close < open) throw new Error(`malformed /proc/<pid>/stat: ${JSON.stringify(text.slice(0, 80))}`);
  const rest = text.slice(close + 1).trim().split(/\s+/);
  // rest[0] is field 3 (state); field n is rest[n - 3].
  const field = (n: number) => Number(rest[n - 3] ?? 0);
  return {
    pid: Number(text.slice(0, open).trim()),
    comm: text.slice(open + 1, close),
    state: rest[0] ?? '',
    ppid: field(4),
    utime: field(14),
    stime: field(15),
    threads: field(20),
    vsize: field(23),
    rss: field(24),
  };
}

/** /proc/<pid>/status: the "VmRSS", "Threads", ... lines as raw strings. */
export function parseProcStatus(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of text.split('\n')) {
    const at = line.indexOf(':');
    if (at > 0) out[line.slice(0, at)] = line.slice(at + 1).trim();
  }
  return out;
}

/** A "1234 kB" status value in bytes (0 when absent, e.g. for kernel threads). */
export function statusBytes(value: string | undefined): number {
  const m = value?.match(/^(\d+)\s*kB$/);
  return m ? Number(m[1]) * 1024 : 0;
}

/** /proc/<pid>/cmdline (NUL-separated) as one blank-separated string. */
export function parseCmdline(raw: string): string {
  return raw.split('\0').filter((a, i, all) => a !== '' || i < all.length - 1).join(' ').trim();
}

export interface ProcessInfo {
  pid: number;
  ppid: number;
  state: string;
  threads: number;
  cpu_time: number;
  virtual_memory: number;
  resident_memory: number;
  command: string;
  executable: string;
  args: string;
}

export function processInfo(stat: ProcStat, status: Record<string, string>, cmdline: string, executable: string): ProcessInfo {
  return {
    pid: stat.pid,
    ppid: stat.ppid,
    state: stat.state,
    threads: Number(status.Threads ?? stat.threads) || stat.threads,
    cpu_time: (stat.utime + stat.stime) / USER_HZ,
    virtual_memory: stat.vsize,
    resident_memory: statusBytes(status.VmRSS),
    command: stat.comm,
    executable,
    args: cmdline,
  };
}

// ---------------------------------------------------------------------------------------------
// Readers.

export interface SysinfoOptions {
  /** Default '/proc'. */
  procRoot?: string;
  /** statfs for Mounts; default fs.promises.statfs. Returns size and available bytes. */
  statfs?: (mountPoint: string) => Promise<{ size: number; available: number }> | { size: number; available: number };
}

async function defaultStatfs(p: string): Promise<{ size: number; available: number }> {
  const s = await fs.promises.statfs(p);
  return { size: s.bsize * s.blocks, available: s.bsize * s.bavail };
}

export function readProcesses(procRoot: string): ProcessInfo[] {
  const out: ProcessInfo[] = [];
  const pids = fs
    .readdirSync(procRoot)
    .filter((n) => /^\d+$/.test(n))
    .map(Number)
    .sort((a, b) => a - b);
  for (const pid of pids) {
    const dir = path.join(procRoot, String(pid));
    let stat: ProcStat;
    let status: Record<string, string>;
    try {
      stat = parseProcStat(fs.readFileSync(path.join(dir, 'stat'), 'utf8'));
      status = parseProcStatus(fs.readFileSync(path.join(dir, 'status'), 'utf8'));
    } catch {
      continue; // exited meanwhile
    }
    let cmdline = '';
    let exe = '';
    try {
      cmdline = parseCmdline(fs.readFileSync(path.join(dir, 'cmdline'), 'utf8'));
    } catch {
      /* exited */
    }
    try {
      exe = fs.readlinkSync(path.join(dir, 'exe'));
    } catch {
      /* kernel thread, or not ours to see */
    }
    out.push(processInfo(stat, status, cmdline, exe));
  }
  return out;
}

type Handlers = Record<string, grpc.handleUnaryCall<any, any>>;

/** The observation handlers (replies with one message and no metadata: apid stamps it). */
export function sysinfoHandlers(opts: SysinfoOptions = {}): Handlers {
  const proc = opts.procRoot ?? '/proc';
  const statfs = opts.statfs ?? defaultStatfs;
  const read = (rel: string) => fs.readFileSync(path.join(proc, rel), 'utf8');
  const one = <T>(msg: T) => ({ messages: [msg] });

  return {
    Hostname: unary(() => {
      let hostname: string;
      try {
        hostname = read('sys/kernel/hostname').trim();
      } catch {
        hostname = os.hostname();
      }
      return one({ hostname });
    }),
    Memory: unary(() => one({ meminfo: parseMeminfo(read('meminfo')) })),
    LoadAvg: unary(() => one(parseLoadavg(read('loadavg')))),
    SystemStat: unary(() => one(parseStat(read('stat')))),
    CPUInfo: unary(() => one({ cpu_info: parseCpuinfo(read('cpuinfo')) })),
    DiskStats: unary(() => one(parseDiskstats(read('diskstats')))),
    NetworkDeviceStats: unary(() => one(parseNetDev(read('net/dev')))),
    Mounts: unary(async () =>
      one({
        stats: await Promise.all(
          parseMounts(read('mounts')).map(async ({ filesystem, mountedOn }) => {
            let size = 0;
            let available = 0;
            try {
              ({ size, available } = await statfs(mountedOn));
            } catch {
              /* unreachable mount point (e.g. hidden by another mount): sizes stay 0 */
            }
            return { filesystem, size, available, mounted_on: mountedOn };
          }),
        ),
      }),
    ),
    Processes: unary(() => one({ processes: readProcesses(proc) })),
  };
}
