import { describe, expect, it } from 'vitest';
import { formatUevent, parseUevent } from './uevent.ts';
import { parseUeventFile } from '../disk/uevent-file.ts';

const msg = (s: string) => Buffer.from(s, 'utf8');

describe('parseUevent', () => {
  it('parses a kernel add event', () => {
    const res = parseUevent(
      msg('add@/devices/virtual/block/loop7\0ACTION=add\0DEVPATH=/devices/virtual/block/loop7\0SUBSYSTEM=block\0MAJOR=7\0MINOR=7\0DEVNAME=loop7\0DEVTYPE=disk\0DISKSEQ=8\0SEQNUM=815\0'),
    );
    expect(res).toEqual({
      kind: 'event',
      event: {
        action: 'add',
        devpath: '/devices/virtual/block/loop7',
        subsystem: 'block',
        seqnum: 815n,
        env: {
          ACTION: 'add',
          DEVPATH: '/devices/virtual/block/loop7',
          SUBSYSTEM: 'block',
          MAJOR: '7',
          MINOR: '7',
          DEVNAME: 'loop7',
          DEVTYPE: 'disk',
          DISKSEQ: '8',
          SEQNUM: '815',
        },
      },
    });
  });

  it('round-trips formatUevent and keeps values with = and spaces', () => {
    const res = parseUevent(formatUevent('change', '/devices/x/block/sda', { SUBSYSTEM: 'block', PARTNAME: 'EFI System=1' }));
    expect(res.kind).toBe('event');
    if (res.kind === 'event') expect(res.event.env.PARTNAME).toBe('EFI System=1');
  });

  it('ignores libudev messages', () => {
    const b = Buffer.concat([msg('libudev\0'), Buffer.from([0xfe, 0xed, 0xca, 0xfe, 1, 2, 3])]);
    expect(parseUevent(b)).toEqual({ kind: 'libudev' });
  });

  it.each([
    ['empty', ''],
    ['no header terminator', 'add@/devices/x'],
    ['no @', 'add/devices/x\0ACTION=add\0'],
    ['unknown action', 'explode@/devices/x\0ACTION=explode\0DEVPATH=/devices/x\0SUBSYSTEM=block\0'],
    ['relative devpath', 'add@devices/x\0ACTION=add\0DEVPATH=devices/x\0SUBSYSTEM=block\0'],
    ['dot-dot devpath', 'add@/devices/../x\0ACTION=add\0DEVPATH=/devices/../x\0SUBSYSTEM=block\0'],
    ['field without =', 'add@/devices/x\0ACTION=add\0DEVPATH=/devices/x\0SUBSYSTEM=block\0oops\0'],
    ['truncated field', 'add@/devices/x\0ACTION=add\0DEVPATH=/devices/x\0SUBSYSTEM=bl'],
    ['mismatched ACTION', 'add@/devices/x\0ACTION=remove\0DEVPATH=/devices/x\0SUBSYSTEM=block\0'],
    ['mismatched DEVPATH', 'add@/devices/x\0ACTION=add\0DEVPATH=/devices/y\0SUBSYSTEM=block\0'],
    ['missing SUBSYSTEM', 'add@/devices/x\0ACTION=add\0DEVPATH=/devices/x\0'],
    ['bad SEQNUM', 'add@/devices/x\0ACTION=add\0DEVPATH=/devices/x\0SUBSYSTEM=block\0SEQNUM=12a\0'],
    ['bad key', 'add@/devices/x\0ACTION=add\0DEVPATH=/devices/x\0SUBSYSTEM=block\0A-B=1\0'],
  ])('rejects a malformed message: %s', (_name, text) => {
    expect(parseUevent(msg(text)).kind).toBe('malformed');
  });

  it('rejects an oversized message', () => {
    expect(parseUevent(Buffer.alloc(20000, 0x41)).kind).toBe('malformed');
  });
});

describe('parseUeventFile', () => {
  it('reads KEY=VALUE lines', () => {
    expect(parseUeventFile('MAJOR=259\nMINOR=1\nDEVNAME=nvme0n1p1\nDEVTYPE=partition\nPARTN=1\nPARTNAME=EFI System\n')).toEqual({
      MAJOR: '259',
      MINOR: '1',
      DEVNAME: 'nvme0n1p1',
      DEVTYPE: 'partition',
      PARTN: '1',
      PARTNAME: 'EFI System',
    });
  });
});
