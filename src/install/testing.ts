// Test helpers for src/install: the host's sgdisk and grub-editenv, run on temporary images, and
// their output parsed. Tests skip themselves when a tool is missing (hasTool).
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export function hasTool(name: string): boolean {
  const r = spawnSync(name, ['--version'], { stdio: 'ignore' });
  return r.error === undefined;
}

/** Runs a tool; throws with its output when it fails. */
export function run(cmd: string, args: string[]): string {
  const r = spawnSync(cmd, args, { encoding: 'utf8' });
  if (r.error) throw r.error;
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')}: exit ${r.status}\n${r.stdout}${r.stderr}`);
  return r.stdout;
}

export function tmpDir(prefix: string): { dir: string; remove(): void } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `bronze-${prefix}-`));
  return { dir, remove: () => fs.rmSync(dir, { recursive: true, force: true }) };
}

/** A sparse file of `bytes` bytes (what `truncate -s` makes). */
export function sparseFile(file: string, bytes: number): void {
  fs.writeFileSync(file, '');
  fs.truncateSync(file, bytes);
}

/**
 * The arguments image-builder/layout.sh (disk.sh's and bootloader.sh's layout) gives sgdisk
 * (between `sgdisk` and the image), read from the script itself so the comparison follows it.
 */
export function diskShSgdiskArgs(): string[] {
  const script = fs.readFileSync(new URL('../../image-builder/layout.sh', import.meta.url), 'utf8');
  const m = /^\s*sgdisk (--clear[\s\S]*?)"\$1"/m.exec(script);
  if (!m) throw new Error('image-builder/layout.sh: no `sgdisk --clear ... "$1"` command found');
  return m[1]!.replace(/\\\n/g, ' ').split(/\s+/).filter((a) => a !== '');
}

export interface SgdiskPartition {
  number: number;
  first: number;
  last: number;
  code: string;
  name: string;
}

export interface SgdiskPrint {
  sectors: number;
  firstUsable: number;
  lastUsable: number;
  diskGuid: string;
  partitions: SgdiskPartition[];
}

/** `sgdisk -p`, parsed. */
export function sgdiskPrint(file: string): SgdiskPrint {
  const out = run('sgdisk', ['-p', file]);
  const num = (re: RegExp): number => {
    const m = re.exec(out);
    if (!m) throw new Error(`sgdisk -p: ${re} not found in:\n${out}`);
    return Number(m[1]);
  };
  const guid = /Disk identifier \(GUID\): ([0-9A-F-]+)/.exec(out)?.[1] ?? '';
  const partitions: SgdiskPartition[] = [];
  const table = out.slice(out.indexOf('Number  Start'));
  for (const line of table.split('\n').slice(1)) {
    // "   1            2048          206847   100.0 MiB   EF00  EFI"
    const m = /^\s*(\d+)\s+(\d+)\s+(\d+)\s+\S+ \S+\s+([0-9A-F]{4})\s*(.*)$/.exec(line);
    if (m) partitions.push({ number: Number(m[1]), first: Number(m[2]), last: Number(m[3]), code: m[4]!, name: m[5]!.trimEnd() });
  }
  return {
    sectors: num(/: (\d+) sectors,/),
    firstUsable: num(/First usable sector is (\d+)/),
    lastUsable: num(/last usable sector is (\d+)/),
    diskGuid: guid.toLowerCase(),
    partitions,
  };
}

export interface SgdiskInfo {
  typeGuid: string;
  uniqueGuid: string;
  first: number;
  last: number;
  sizeSectors: number;
  name: string;
}

/** `sgdisk --info=N`, parsed. */
export function sgdiskInfo(file: string, n: number): SgdiskInfo {
  const out = run('sgdisk', [`--info=${n}`, file]);
  const field = (label: string): string => {
    const m = new RegExp(`^${label}: (.*)$`, 'm').exec(out);
    if (!m) throw new Error(`sgdisk --info=${n}: no "${label}" in:\n${out}`);
    return m[1]!;
  };
  return {
    typeGuid: field('Partition GUID code').split(' ')[0]!.toLowerCase(),
    uniqueGuid: field('Partition unique GUID').toLowerCase(),
    first: Number(field('First sector').split(' ')[0]),
    last: Number(field('Last sector').split(' ')[0]),
    sizeSectors: Number(field('Partition size').split(' ')[0]),
    name: /^'(.*)'$/.exec(field('Partition name'))?.[1] ?? '',
  };
}
