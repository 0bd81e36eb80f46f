// CPUFreqStats: per CPU, the cpufreq driver's current, minimum and maximum frequency (kHz) and
// governor, from /sys/devices/system/cpu/cpuN/cpufreq, as Talos reports them. A CPU whose
// cpufreq lacks any of the three frequencies is an empty entry (as Talos sends it); a kernel
// or VM without cpufreq has no entries at all.
import fs from 'node:fs';
import path from 'node:path';
import type * as grpc from '@grpc/grpc-js';
import { unary } from './common.ts';

export interface CpuFreqStat {
  current_frequency?: number;
  minimum_frequency?: number;
  maximum_frequency?: number;
  governor?: string;
}

function readTrim(file: string): string | undefined {
  try {
    return fs.readFileSync(file, 'utf8').trim();
  } catch {
    return undefined;
  }
}

/** The stats of every CPU with a cpufreq directory under `cpuDir`, in CPU order. */
export function readCpuFreq(cpuDir = '/sys/devices/system/cpu'): CpuFreqStat[] {
  let names: string[];
  try {
    names = fs.readdirSync(cpuDir).filter((n) => /^cpu\d+$/.test(n));
  } catch {
    return [];
  }
  names.sort((a, b) => Number(a.slice(3)) - Number(b.slice(3)));
  const out: CpuFreqStat[] = [];
  for (const n of names) {
    const dir = path.join(cpuDir, n, 'cpufreq');
    if (!fs.existsSync(dir)) continue;
    const cur = readTrim(path.join(dir, 'cpuinfo_cur_freq')) ?? readTrim(path.join(dir, 'scaling_cur_freq'));
    const min = readTrim(path.join(dir, 'cpuinfo_min_freq'));
    const max = readTrim(path.join(dir, 'cpuinfo_max_freq'));
    if (cur === undefined || min === undefined || max === undefined) {
      out.push({});
      continue;
    }
    out.push({ current_frequency: Number(cur), minimum_frequency: Number(min), maximum_frequency: Number(max), governor: readTrim(path.join(dir, 'scaling_governor')) ?? '' });
  }
  return out;
}

export function cpuFreqHandlers(opts: { cpuDir?: string } = {}): Record<string, grpc.handleUnaryCall<any, any>> {
  return {
    CPUFreqStats: unary(() => ({ messages: [{ cpu_freq_stats: readCpuFreq(opts.cpuDir) }] })),
  };
}
