import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { readLinkSysInfo } from './linkinfo.ts';

let root: string | undefined;
afterEach(() => root && fs.rmSync(root, { recursive: true, force: true }));

describe('readLinkSysInfo', () => {
  it('reads the driver, speed and duplex sysfs gives; leaves out what it does not', () => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'linkinfo-'));
    const net = path.join(root, 'class/net');
    const drv = path.join(root, 'bus/virtio/drivers/virtio_net');
    fs.mkdirSync(drv, { recursive: true });
    fs.mkdirSync(path.join(net, 'eth0/device'), { recursive: true });
    fs.symlinkSync(drv, path.join(net, 'eth0/device/driver'));
    fs.writeFileSync(path.join(net, 'eth0/speed'), '-1\n');
    fs.writeFileSync(path.join(net, 'eth0/duplex'), 'unknown\n');
    fs.mkdirSync(path.join(net, 'eth1/device'), { recursive: true });
    fs.writeFileSync(path.join(net, 'eth1/speed'), '10000\n');
    fs.writeFileSync(path.join(net, 'eth1/duplex'), 'full\n');
    fs.mkdirSync(path.join(net, 'lo'), { recursive: true });
    expect(readLinkSysInfo('eth0', root)).toEqual({ driver: 'virtio_net', duplex: 'Unknown' });
    expect(readLinkSysInfo('eth1', root)).toEqual({ speedMbit: 10000, duplex: 'Full' });
    expect(readLinkSysInfo('lo', root)).toEqual({});
    expect(readLinkSysInfo('absent', root)).toEqual({});
  });
});
