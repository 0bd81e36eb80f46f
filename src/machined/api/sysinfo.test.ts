import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  parseCmdline,
  parseCpuinfo,
  parseDiskstats,
  parseLoadavg,
  parseMeminfo,
  parseMounts,
  parseNetDev,
  parseProcStat,
  parseProcStatus,
  parseStat,
  processInfo,
  readProcesses,
  statusBytes,
  sysinfoHandlers,
  unescapeMountField,
} from './sysinfo.ts';
import { callUnary } from './testing.ts';

const MEMINFO = `MemTotal:       24684096 kB
MemFree:        21634040 kB
MemAvailable:   23845120 kB
Active(anon):       1544 kB
Inactive(file):  1393352 kB
NFS_Unstable:          0 kB
Committed_AS:     512000 kB
HugePages_Total:       2
Hugepagesize:       2048 kB
DirectMap2M:     4194304 kB
`;

const STAT = `cpu  196338 451 20909 95386 1518 0 157 344 0 0
cpu0 97991 266 10433 48291 390 0 31 157 0 0
cpu1 98347 184 10475 47094 1127 0 126 186 0 0
intr 2299327 0 5 7
ctxt 4956974
btime 1795295203
processes 82664
procs_running 3
procs_blocked 1
softirq 740098 1 98423 10 34395 120531 0 2 167063 0 319674
`;

const CPUINFO = `processor	: 0
vendor_id	: AuthenticAMD
cpu family	: 26
model		: 2
model name	: AMD EPYC
cpu MHz		: 2600.000
cache size	: 1024 KB
siblings	: 2
cpu cores	: 2
apicid		: 0
cpuid level	: 16
flags		: fpu vme de
bugs		: sysret_ss_attrs spectre_v1
bogomips	: 5200.00
clflush size	: 64
cache_alignment	: 64
address sizes	: 52 bits physical, 57 bits virtual
power management:

processor	: 1
vendor_id	: AuthenticAMD
model name	: AMD EPYC
flags		: fpu
bugs		:
`;

const DISKSTATS = `   7       0 loop0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17
 254       0 vda 100 0 2000 50 10 0 80 5 0 60 55
`;

const NETDEV = `Inter-|   Receive                                                |  Transmit
 face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls carrier compressed
    lo:   79279     199    0    0    0     0          0         0    79279     199    0    0    0     0       0          0
  eth0: 1053495478   33522    1    2    0     0          0         3  2360232   19854    0    4    0     0       0          0
`;

describe('sysinfo parsers', () => {
  it('meminfo: keys lowercased without punctuation, values as printed', () => {
    expect(parseMeminfo(MEMINFO)).toEqual({
      memtotal: 24684096,
      memfree: 21634040,
      memavailable: 23845120,
      activeanon: 1544,
      inactivefile: 1393352,
      nfsunstable: 0,
      committedas: 512000,
      hugepagestotal: 2,
      hugepagesize: 2048,
      directmap2m: 4194304,
    });
  });

  it('loadavg', () => {
    expect(parseLoadavg('1.05 0.50 1.27 3/126 17741\n')).toEqual({ load1: 1.05, load5: 0.5, load15: 1.27 });
  });

  it('stat: CPU seconds from ticks, irqs, context switches, processes, softirqs', () => {
    const s = parseStat(STAT);
    expect(s.boot_time).toBe(1795295203);
    expect(s.cpu_total).toMatchObject({ user: 1963.38, nice: 4.51, system: 209.09, idle: 953.86, iowait: 15.18, soft_irq: 1.57, steal: 3.44 });
    expect(s.cpu).toHaveLength(2);
    expect(s.cpu[1]!.user).toBe(983.47);
    expect(s.irq_total).toBe(2299327);
    expect(s.irq).toEqual([0, 5, 7]);
    expect(s).toMatchObject({ context_switches: 4956974, process_created: 82664, process_running: 3, process_blocked: 1, soft_irq_total: 740098 });
    expect(s.soft_irq).toEqual({ hi: 1, timer: 98423, net_tx: 10, net_rx: 34395, block: 120531, block_io_poll: 0, tasklet: 2, sched: 167063, hrtimer: 0, rcu: 319674 });
  });

  it('cpuinfo: one entry per processor, typed fields, flag lists', () => {
    const cpus = parseCpuinfo(CPUINFO);
    expect(cpus).toHaveLength(2);
    expect(cpus[0]).toMatchObject({
      processor: 0,
      vendor_id: 'AuthenticAMD',
      cpu_family: '26',
      model: '2',
      model_name: 'AMD EPYC',
      cpu_mhz: 2600,
      cache_size: '1024 KB',
      siblings: 2,
      cpu_cores: 2,
      apic_id: '0',
      cpu_id_level: 16,
      flags: ['fpu', 'vme', 'de'],
      bugs: ['sysret_ss_attrs', 'spectre_v1'],
      bogo_mips: 5200,
      cl_flush_size: 64,
      cache_alignment: 64,
      address_sizes: '52 bits physical, 57 bits virtual',
      power_management: '',
    });
    expect(cpus[1]).toMatchObject({ processor: 1, flags: ['fpu'], bugs: [] });
  });

  it('diskstats: devices with all 15 counters (missing ones 0) and the total', () => {
    const d = parseDiskstats(DISKSTATS);
    expect(d.devices.map((x) => x.name)).toEqual(['loop0', 'vda']);
    expect(d.devices[0]).toMatchObject({ read_completed: 1, read_merged: 2, io_time_weighted_ms: 11, discard_time_ms: 15 });
    expect(d.devices[1]).toMatchObject({ read_completed: 100, read_sectors: 2000, io_time_weighted_ms: 55, discard_completed: 0 });
    expect(d.total).toMatchObject({ name: 'total', read_completed: 101, read_sectors: 2003 });
  });

  it('net/dev: interfaces and total, header lines skipped', () => {
    const n = parseNetDev(NETDEV);
    expect(n.devices.map((x) => x.name)).toEqual(['lo', 'eth0']);
    expect(n.devices[1]).toMatchObject({ rx_bytes: 1053495478, rx_packets: 33522, rx_errors: 1, rx_dropped: 2, rx_multicast: 3, tx_bytes: 2360232, tx_dropped: 4 });
    expect(n.total).toMatchObject({ name: 'total', rx_bytes: 1053495478 + 79279, tx_packets: 19854 + 199 });
  });

  it('mounts: octal escapes decoded', () => {
    expect(unescapeMountField('/mnt/a\\040b\\011c\\134d')).toBe('/mnt/a b\tc\\d');
    expect(parseMounts('proc /proc proc rw 0 0\n/dev/sda1 /mnt/my\\040disk ext4 rw 0 0\n')).toEqual([
      { filesystem: 'proc', mountedOn: '/proc' },
      { filesystem: '/dev/sda1', mountedOn: '/mnt/my disk' },
    ]);
  });

  it('proc stat: a command name with blanks and parentheses', () => {
    const line = '42 (my (odd) cmd) S 1 42 42 0 -1 4194560 100 0 0 0 250 50 0 0 20 0 3 0 1000 123456789 512 18446744073709551615';
    expect(parseProcStat(line)).toEqual({ pid: 42, comm: 'my (odd) cmd', state: 'S', ppid: 1, utime: 250, stime: 50, threads: 3, vsize: 123456789, rss: 512 });
    expect(() => parseProcStat('garbage')).toThrow(/malformed/);
  });

  it('process info from stat, status, cmdline and exe', () => {
    const stat = parseProcStat('7 (node) R 1 7 7 0 -1 0 0 0 0 0 150 50 0 0 20 0 11 0 1 1000000 99');
    const status = parseProcStatus('Name:\tnode\nThreads:\t11\nVmRSS:\t  2048 kB\n');
    expect(statusBytes(status.VmRSS)).toBe(2 * 1024 * 1024);
    expect(statusBytes(undefined)).toBe(0);
    expect(parseCmdline('node\0app.js\0--flag\0')).toBe('node app.js --flag');
    expect(processInfo(stat, status, 'node app.js', '/usr/bin/node')).toEqual({
      pid: 7,
      ppid: 1,
      state: 'R',
      threads: 11,
      cpu_time: 2,
      virtual_memory: 1000000,
      resident_memory: 2 * 1024 * 1024,
      command: 'node',
      executable: '/usr/bin/node',
      args: 'node app.js',
    });
  });
});

describe('sysinfo handlers', () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'bronze-proc-'));
  afterAll(() => fs.rmSync(root, { recursive: true, force: true }));
  const put = (rel: string, text: string) => {
    fs.mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
    fs.writeFileSync(path.join(root, rel), text);
  };
  put('meminfo', MEMINFO);
  put('loadavg', '0.5 0.25 0.125 1/2 3\n');
  put('stat', STAT);
  put('cpuinfo', CPUINFO);
  put('diskstats', DISKSTATS);
  put('net/dev', NETDEV);
  put('mounts', 'proc /proc proc rw 0 0\ntmpfs /nowhere tmpfs rw 0 0\n');
  put('sys/kernel/hostname', 'node-1\n');
  put('12/stat', '12 (svc) S 1 12 12 0 -1 0 0 0 0 0 100 100 0 0 20 0 2 0 1 4096 1');
  put('12/status', 'Threads:\t2\nVmRSS:\t4 kB\n');
  put('12/cmdline', 'svc\0--x\0');
  put('self/stat', 'not a pid directory');
  const h = sysinfoHandlers({ procRoot: root, statfs: (p) => (p === '/proc' ? { size: 1000, available: 400 } : (() => { throw new Error('ENOENT'); })()) });

  it('answer in the envelope, without metadata', async () => {
    expect(await callUnary(h.Hostname, {})).toEqual({ messages: [{ hostname: 'node-1' }] });
    expect(await callUnary(h.LoadAvg, {})).toEqual({ messages: [{ load1: 0.5, load5: 0.25, load15: 0.125 }] });
    expect((await callUnary(h.Memory, {})).messages[0].meminfo.memtotal).toBe(24684096);
    expect((await callUnary(h.SystemStat, {})).messages[0].boot_time).toBe(1795295203);
    expect((await callUnary(h.CPUInfo, {})).messages[0].cpu_info).toHaveLength(2);
    expect((await callUnary(h.DiskStats, {})).messages[0].devices).toHaveLength(2);
    expect((await callUnary(h.NetworkDeviceStats, {})).messages[0].total.rx_packets).toBe(33721);
  });

  it('Mounts: sizes from statfs, 0 where statfs fails', async () => {
    expect((await callUnary(h.Mounts, {})).messages[0].stats).toEqual([
      { filesystem: 'proc', size: 1000, available: 400, mounted_on: '/proc' },
      { filesystem: 'tmpfs', size: 0, available: 0, mounted_on: '/nowhere' },
    ]);
  });

  it('Processes: numeric directories only', async () => {
    const procs = (await callUnary(h.Processes, {})).messages[0].processes;
    expect(procs).toEqual([
      { pid: 12, ppid: 1, state: 'S', threads: 2, cpu_time: 2, virtual_memory: 4096, resident_memory: 4096, command: 'svc', executable: '', args: 'svc --x' },
    ]);
  });

  it('a missing file is an error naming it', async () => {
    const empty = sysinfoHandlers({ procRoot: path.join(root, 'none') });
    await expect(callUnary(empty.Memory, {})).rejects.toMatchObject({ code: 5, message: expect.stringContaining('meminfo') });
  });

  it('the real /proc: this process is listed with plausible values', () => {
    const me = readProcesses('/proc').find((p) => p.pid === process.pid);
    expect(me).toBeDefined();
    expect(me!.ppid).toBe(process.ppid);
    expect(me!.resident_memory).toBeGreaterThan(1024 * 1024);
    expect(me!.virtual_memory).toBeGreaterThan(me!.resident_memory);
    expect(me!.executable).toBe(fs.realpathSync(process.execPath));
  });
});
