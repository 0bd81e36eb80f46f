import { describe, expect, it } from 'vitest';
import { broadcastOf, bytesToIp, goIpString, ipToBytes, ipVersion, isLinkLocal, isLoopback, netmaskToPrefix, networkOf, parseCidr, prefixToNetmask } from './ip.ts';

describe('IP helpers', () => {
  it('formats IPv6 as RFC 5952 (and as ip(8) prints it)', () => {
    const cases: Array<[string, string]> = [
      ['2001:0db8:0000:0000:0000:0000:0000:0001', '2001:db8::1'],
      ['::', '::'],
      ['::1', '::1'],
      ['fe80::', 'fe80::'],
      ['2001:db8:0:1:0:0:0:1', '2001:db8:0:1::1'],
      ['2001:0:0:1:0:0:0:1', '2001:0:0:1::1'],
      ['2001:db8:1:1:1:1:1:1', '2001:db8:1:1:1:1:1:1'],
      ['2001:db8::1:0:0:1', '2001:db8::1:0:0:1'],
      ['::ffff:10.0.0.1', '::ffff:a00:1'],
    ];
    for (const [input, want] of cases) expect(bytesToIp(ipToBytes(input))).toBe(want);
  });

  it('converts IPv4 and refuses junk', () => {
    expect([...ipToBytes('10.1.2.3')]).toEqual([10, 1, 2, 3]);
    expect(bytesToIp(Buffer.from([192, 168, 0, 1]))).toBe('192.168.0.1');
    expect(() => ipToBytes('300.1.1.1')).toThrow();
    expect(() => bytesToIp(Buffer.alloc(5))).toThrow();
  });

  it('handles prefixes and masks', () => {
    expect(parseCidr('10.0.0.5/24')).toEqual({ address: '10.0.0.5', prefixLength: 24, family: 'inet4' });
    expect(parseCidr('2001:DB8::1')).toEqual({ address: '2001:db8::1', prefixLength: 128, family: 'inet6' });
    expect(() => parseCidr('10.0.0.1/33')).toThrow();
    expect(netmaskToPrefix('255.255.255.0')).toBe(24);
    expect(netmaskToPrefix('255.255.255.255')).toBe(32);
    expect(netmaskToPrefix('0.0.0.0')).toBe(0);
    expect(() => netmaskToPrefix('255.0.255.0')).toThrow(/contiguous/);
    expect(prefixToNetmask(20)).toBe('255.255.240.0');
    expect(prefixToNetmask(0)).toBe('0.0.0.0');
    expect(networkOf({ address: '10.1.2.3', prefixLength: 20 })).toBe('10.1.0.0');
    expect(networkOf({ address: '2001:db8::ff', prefixLength: 64 })).toBe('2001:db8::');
    expect(broadcastOf({ address: '10.1.2.3', prefixLength: 24 })).toBe('10.1.2.255');
    expect(isLinkLocal('169.254.1.1')).toBe(true);
    expect(isLinkLocal('fe80::1')).toBe(true);
    expect(isLoopback('::1')).toBe(true);
    expect(isLoopback('127.0.0.2')).toBe(true);
    expect(isLoopback('10.0.0.1')).toBe(false);
  });
});

describe('ipVersion', () => {
  it('says what net.isIP says', async () => {
    const { isIP } = await import('node:net');
    const cases = ['::', '::1', '1::', 'fe80::1', 'fe80::1%eth0', 'fe80::1%', '2001:db8::1', '::ffff:1.2.3.4', '::ffff:01.2.3.4', '1:2:3:4:5:6:7:8', '1:2:3:4:5:6:7:8:9',
      '1:2:3:4:5:6:7::', '12345::', 'g::1', '::1.2.3', '1.2.3.4', '01.2.3.4', '256.1.1.1', ':::', '1::2::3', 'FE80::ABCD', '::ffff:256.1.1.1', '0:0:0:0:0:0:1.2.3.4',
      '[::1]', '::1]/x[', 'a:b', ' ::1', '::1 ', '::1/64', '::1?x', '00000::1', '0000::1', 'localhost', '', 'bronze-6aa1a7', '10.0.2.15', 'example.com:80'];
    for (const c of cases) expect(ipVersion(c), JSON.stringify(c)).toBe(isIP(c));
  });
});

describe('goIpString', () => {
  it('prints as Go does: an IPv4-mapped address as IPv4, the rest as bytesToIp', () => {
    expect(goIpString(ipToBytes('::ffff:127.0.0.1'))).toBe('127.0.0.1');
    expect(goIpString(ipToBytes('2001:db8::1'))).toBe('2001:db8::1');
    expect(goIpString(Buffer.from([10, 0, 2, 15]))).toBe('10.0.2.15');
  });
});
