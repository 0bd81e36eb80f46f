// The parts of the node's binary that preinit reads ahead while machined starts
// (image-builder/preinit/preinit.c, "prefetch"): every loadable segment of the single executable
// (Node's code and read-only data, the SEA blob with the role bundles and their code caches),
// but for ICU's data, which is a third of the binary and which a node barely touches (0.9 of
// its 33 MiB were resident in a host run of all six roles). Written to the rootfs as
// /usr/share/bronze/init.prefetch, one "<file offset> <length>" line per range, in file order.
//
// Why: machined is the first process to run the binary, and until then none of it is in the
// page cache; each page it faults in has its squashfs block (1 MiB, zstd) decompressed first.
// Under QEMU/TCG that made machined's Node start take 0.86-0.95 s where a daemon's, started
// later from the page cache, takes 0.25-0.35 s, while the second CPU idled (machined starts
// apid and networkd only once its own Node has started).
//
// usage: node image-builder/prefetch-ranges.ts <single executable> <the runtime it was made of (with symbols)>
import { execFileSync } from 'node:child_process';

export interface Range {
  offset: number;
  length: number;
}

interface Segment {
  offset: number;
  vaddr: number;
  filesz: number;
}

/** The PT_LOAD segments of `readelf -lW` output. */
export function loadSegments(readelfL: string): Segment[] {
  const out: Segment[] = [];
  for (const line of readelfL.split('\n')) {
    const m = /^\s*LOAD\s+(0x[0-9a-f]+)\s+(0x[0-9a-f]+)\s+0x[0-9a-f]+\s+(0x[0-9a-f]+)\s/i.exec(line);
    if (m) out.push({ offset: Number(m[1]), vaddr: Number(m[2]), filesz: Number(m[3]) });
  }
  return out;
}

/** ICU's data symbol (icudt<version>_dat) in `readelf -sW` output: its address and size. */
export function icuData(readelfS: string): { vaddr: number; size: number } | undefined {
  for (const line of readelfS.split('\n')) {
    const f = line.trim().split(/\s+/);
    // Num: Value Size Type Bind Vis Ndx Name
    if (f.length >= 8 && /^icudt\d+[lb]?_dat$/.test(f[7]!)) return { vaddr: parseInt(f[1]!, 16), size: Number(f[2]) };
  }
  return undefined;
}

/** The segments' file ranges less `skip` (an address range), merged, in file order. */
export function prefetchRanges(segments: Segment[], skip?: { vaddr: number; size: number }): Range[] {
  const ranges: Array<[number, number]> = [];
  for (const s of segments) {
    if (s.filesz === 0) continue;
    let parts: Array<[number, number]> = [[s.offset, s.offset + s.filesz]];
    if (skip && skip.vaddr < s.vaddr + s.filesz && skip.vaddr + skip.size > s.vaddr) {
      const from = s.offset + Math.max(0, skip.vaddr - s.vaddr);
      const to = s.offset + Math.min(s.filesz, skip.vaddr + skip.size - s.vaddr);
      const candidates: Array<[number, number]> = [
        [s.offset, from],
        [to, s.offset + s.filesz],
      ];
      parts = candidates.filter(([a, b]) => b > a);
    }
    ranges.push(...parts);
  }
  ranges.sort((a, b) => a[0] - b[0]);
  const merged: Array<[number, number]> = [];
  for (const r of ranges) {
    const last = merged.at(-1);
    if (last && r[0] <= last[1]) last[1] = Math.max(last[1], r[1]);
    else merged.push([...r]);
  }
  return merged.map(([a, b]) => ({ offset: a, length: b - a }));
}

function main(): void {
  const [binary, runtime] = process.argv.slice(2);
  if (!binary || !runtime) {
    process.stderr.write('usage: prefetch-ranges.ts <single executable> <runtime with symbols>\n');
    process.exit(2);
  }
  const readelf = (...args: string[]) => execFileSync('readelf', args, { encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 });
  const segments = loadSegments(readelf('-lW', binary));
  if (segments.length === 0) throw new Error(`${binary}: no loadable segments`);
  const icu = icuData(readelf('-sW', runtime));
  if (!icu) process.stderr.write(`prefetch-ranges: no ICU data symbol in ${runtime}: the whole binary is read ahead\n`);
  for (const r of prefetchRanges(segments, icu)) process.stdout.write(`${r.offset} ${r.length}\n`);
}

if (process.argv[1]?.endsWith('prefetch-ranges.ts')) main();
