// The memory a node needs, checked at boot. Below it Bronze still starts, but slowly and
// unreliably (services time out, health checks fail), so machined says so on the console, once,
// with the amount needed, and reports it in MachineStatus (condition 'memory').
//
// The minimum is measured (README, "Memory"): the smallest VM that reaches Running within twice
// the time a 512 MiB VM takes. It is compared with MemTotal, which is the VM's memory less what
// the kernel keeps for itself (its code, page tables): MIN_MEMTOTAL_KIB is MemTotal in such a VM.
import fs from 'node:fs';

/**
 * The VM size (MiB of -m) below which machined warns (README, Memory; `make bench-memory`): 288
 * MiB reached Running in 44 s against 53 s at 512 MiB; 272 MiB in 90 s, just inside twice the
 * 512 MiB time; 256 MiB not within 4 minutes. One step of margin above the last that passed.
 */
export const MIN_MEMORY_MIB = 288;
/** MemTotal (KiB) the kernel reports in a VM of MIN_MEMORY_MIB (248 MiB), less rounding. */
export const MIN_MEMTOTAL_KIB = 245 * 1024;

export interface MemoryCheck {
  /** MemTotal in KiB (undefined when /proc/meminfo cannot be read). */
  totalKiB?: number;
  ok: boolean;
  /** The console line and the condition's reason when not ok. */
  message?: string;
}

/** MemTotal from /proc/meminfo's text, KiB. */
export function memTotalKiB(meminfo: string): number | undefined {
  const m = /^MemTotal:\s+(\d+)\s*kB/m.exec(meminfo);
  return m ? Number(m[1]) : undefined;
}

export function checkMemory(meminfo: string | undefined, minKiB = MIN_MEMTOTAL_KIB, minMiB = MIN_MEMORY_MIB): MemoryCheck {
  const totalKiB = meminfo === undefined ? undefined : memTotalKiB(meminfo);
  if (totalKiB === undefined) return { ok: true };
  if (totalKiB >= minKiB) return { totalKiB, ok: true };
  return {
    totalKiB,
    ok: false,
    message:
      `this machine has ${Math.round(totalKiB / 1024)} MiB of memory (MemTotal), less than the ${Math.round(minKiB / 1024)} MiB Bronze needs: ` +
      `give it at least ${minMiB} MiB of RAM (a VM's -m ${minMiB}); below that it starts slowly, and services and API calls time out`,
  };
}

export function readMeminfo(procRoot = '/proc'): string | undefined {
  try {
    return fs.readFileSync(`${procRoot}/meminfo`, 'utf8');
  } catch {
    return undefined;
  }
}
