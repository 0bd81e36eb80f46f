import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { LinkTable, encodeLinkName, linkNames } from './links.ts';

const quiet = { warn: () => {} };

describe('linkNames', () => {
  it('names every kind of link, encoding labels as udev does', () => {
    expect(
      linkNames({
        devname: 'vda1',
        byId: ['virtio-SER-part1'],
        byPath: 'pci-0000:00:04.0-part1',
        fsLabel: 'my data/1',
        fsUuid: '1234-ABCD',
        partLabel: 'EFI System',
        partUuid: 'aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee',
      }),
    ).toEqual([
      'disk/by-id/virtio-SER-part1',
      'disk/by-path/pci-0000:00:04.0-part1',
      'disk/by-label/my\\x20data\\x2f1',
      'disk/by-uuid/1234-ABCD',
      'disk/by-partlabel/EFI\\x20System',
      'disk/by-partuuid/aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee',
    ]);
  });

  it('skips names that cannot be links', () => {
    expect(linkNames({ devname: 'x', byId: ['', '.', '..'], byPath: '', fsLabel: '', fsUuid: '', partLabel: '', partUuid: '' })).toEqual([]);
  });

  it('encodeLinkName keeps UTF-8 and escapes the rest', () => {
    expect(encodeLinkName('Grüße ✓')).toBe('Grüße\\x20✓');
    expect(encodeLinkName('a\\b')).toBe('a\\x5cb');
    expect(encodeLinkName('..')).toBe('..');
  });
});

describe('LinkTable', () => {
  let dev: string;
  let table: LinkTable;
  beforeEach(() => {
    dev = fs.mkdtempSync(path.join(os.tmpdir(), 'udevd-links-'));
    table = new LinkTable(dev, quiet);
  });
  afterEach(() => fs.rmSync(dev, { recursive: true, force: true }));

  const target = (l: string) => fs.readlinkSync(path.join(dev, l));
  const exists = (l: string) => {
    try {
      fs.lstatSync(path.join(dev, l));
      return true;
    } catch {
      return false;
    }
  };

  it('creates relative links and removes them with the device', () => {
    table.set('sda1', 'sda1', ['disk/by-uuid/u1', 'disk/by-label/L']);
    expect(target('disk/by-uuid/u1')).toBe('../../sda1');
    expect(table.linksOf('sda1')).toEqual(['disk/by-label/L', 'disk/by-uuid/u1']);
    table.set('sda1', 'sda1', ['disk/by-uuid/u2']);
    expect(exists('disk/by-uuid/u1')).toBe(false);
    expect(exists('disk/by-label/L')).toBe(false);
    expect(target('disk/by-uuid/u2')).toBe('../../sda1');
    table.remove('sda1');
    expect(exists('disk/by-uuid/u2')).toBe(false);
  });

  it('a shared name stays with its first claimant, then passes on', () => {
    table.set('sda1', 'sda1', ['disk/by-label/DATA']);
    table.set('sdb1', 'sdb1', ['disk/by-label/DATA']);
    expect(target('disk/by-label/DATA')).toBe('../../sda1');
    expect(table.linksOf('sdb1')).toEqual([]);
    table.takeAffected();
    table.remove('sda1');
    expect(target('disk/by-label/DATA')).toBe('../../sdb1');
    expect(table.takeAffected()).toEqual(['sdb1']);
    table.remove('sdb1');
    expect(exists('disk/by-label/DATA')).toBe(false);
  });

  it('prune removes unclaimed symlinks only', () => {
    fs.mkdirSync(path.join(dev, 'disk', 'by-uuid'), { recursive: true });
    fs.symlinkSync('../../gone', path.join(dev, 'disk', 'by-uuid', 'stale'));
    fs.writeFileSync(path.join(dev, 'disk', 'by-uuid', 'a-file'), '');
    table.set('sda1', 'sda1', ['disk/by-uuid/u1']);
    expect(table.prune()).toBe(1);
    expect(exists('disk/by-uuid/stale')).toBe(false);
    expect(exists('disk/by-uuid/a-file')).toBe(true);
    expect(exists('disk/by-uuid/u1')).toBe(true);
  });

  it('replaces a wrong link in place', () => {
    fs.mkdirSync(path.join(dev, 'disk', 'by-uuid'), { recursive: true });
    fs.symlinkSync('../../other', path.join(dev, 'disk', 'by-uuid', 'u1'));
    table.set('sda1', 'sda1', ['disk/by-uuid/u1']);
    expect(target('disk/by-uuid/u1')).toBe('../../sda1');
  });
});
