import { describe, expect, it } from 'vitest';
import { NodeNameError, nodeAddress, nodeHost } from './node-name.ts';

describe('node metadata values', () => {
  it('takes hostnames and IP addresses, IPv6 with or without brackets', () => {
    expect(nodeHost('10.5.0.2')).toBe('10.5.0.2');
    expect(nodeHost('node-1')).toBe('node-1');
    expect(nodeHost('cp1.cluster.example.')).toBe('cp1.cluster.example.');
    expect(nodeHost('fd00::2')).toBe('fd00::2');
    expect(nodeHost('[fd00::2]')).toBe('fd00::2');
    expect(nodeHost('::1')).toBe('::1');
    expect(nodeHost('fe80::1%eth0')).toBe('fe80::1%eth0');
    expect(nodeHost('::ffff:10.0.0.1')).toBe('::ffff:10.0.0.1');
    // A name that is also a grpc-js scheme is still only a name (router.ts dials it with dns:).
    expect(nodeHost('unix')).toBe('unix');
  });

  it('refuses a value with a port, naming it', () => {
    for (const v of ['10.5.0.2:50000', 'node-1:22', 'localhost:2379', '[fd00::2]:50000', '[::1]:6443', 'host:', '127.0.0.1:0']) {
      expect(() => nodeHost(v), v).toThrow(new NodeNameError(`node metadata names a node, not an address with a port: ${v}`));
    }
  });

  it('refuses what is no hostname or IP address', () => {
    for (const v of ['a b', 'http://x', 'unix:/run/machined.sock', 'unix-abstract:x', '[node1]', '[fd00::2', 'a..b', '-a', 'a/b', 'x'.repeat(64), '1.2.3.4:5:6']) {
      expect(() => nodeHost(v), v).toThrow(new NodeNameError(`node metadata names a node (a hostname or an IP address), not ${JSON.stringify(v)}`));
    }
    expect(() => nodeHost('')).toThrow('node metadata names a node, but the value is empty');
  });

  it('dials a node on the given port, IPv6 in brackets', () => {
    expect(nodeAddress('10.5.0.2', 50000)).toBe('10.5.0.2:50000');
    expect(nodeAddress('fd00::2', 50000)).toBe('[fd00::2]:50000');
    expect(nodeAddress('node-1', 50000)).toBe('node-1:50000');
  });
});
