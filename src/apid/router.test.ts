import * as grpc from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import { RouteError, SelfIdentity, peerTarget, routeOf } from './router.ts';

function md(entries: Array<[string, string]>): grpc.Metadata {
  const m = new grpc.Metadata();
  for (const [k, v] of entries) m.add(k, v);
  return m;
}

describe('routeOf', () => {
  it('routes by node names', () => {
    expect(routeOf(md([]))).toEqual({ kind: 'local' });
    expect(routeOf(md([['node', '10.5.0.2']]))).toEqual({ kind: 'one', target: '10.5.0.2' });
    expect(routeOf(md([['node', '[fd00::2]']]))).toEqual({ kind: 'one', target: '[fd00::2]' });
    expect(routeOf(md([['nodes', 'cp1, 10.5.0.3'], ['nodes', 'fd00::4'], ['nodes', 'cp1']]))).toEqual({ kind: 'many', targets: ['cp1', '10.5.0.3', 'fd00::4'] });
  });

  it('refuses a node with a port, in `node` or anywhere in `nodes`, naming it', () => {
    expect(() => routeOf(md([['node', '10.5.0.2:22']]))).toThrow(new RouteError('node metadata names a node, not an address with a port: 10.5.0.2:22'));
    expect(() => routeOf(md([['node', '[::1]:2379']]))).toThrow(new RouteError('node metadata names a node, not an address with a port: [::1]:2379'));
    expect(() => routeOf(md([['nodes', '10.5.0.2, 10.5.0.3:50001']]))).toThrow(new RouteError('node metadata names a node, not an address with a port: 10.5.0.3:50001'));
    expect(() => routeOf(md([['nodes', 'cp1'], ['nodes', 'localhost:6443']]))).toThrow(RouteError);
    expect(() => routeOf(md([['node', 'unix:/run/machined/machined.sock']]))).toThrow(RouteError);
  });

  it('keeps its other refusals', () => {
    expect(() => routeOf(md([['node', 'a'], ['nodes', 'b']]))).toThrow('both "node" and "nodes" metadata given; use one');
    expect(() => routeOf(md([['node', 'a, b']]))).toThrow('"node" names 2 nodes; use "nodes" for several');
  });
});

describe('peerTarget', () => {
  it('dials the API port, IPv6 in brackets, always as a DNS name or IP (never a socket)', () => {
    expect(peerTarget('10.5.0.2', 50000)).toBe('dns:10.5.0.2:50000');
    expect(peerTarget('[fd00::2]', 50000)).toBe('dns:[fd00::2]:50000');
    expect(peerTarget('fd00::2', 50000)).toBe('dns:[fd00::2]:50000');
    expect(peerTarget('unix', 50000)).toBe('dns:unix:50000');
  });
});

describe('SelfIdentity', () => {
  it('knows this node by name, with or without brackets, and a name with a port is not it', () => {
    const self = new SelfIdentity(() => ['10.9.9.9']);
    expect(self.isSelf('127.0.0.1')).toBe(true);
    expect(self.isSelf('[::1]')).toBe(true);
    expect(self.isSelf('::1')).toBe(true);
    expect(self.isSelf('10.9.9.9')).toBe(true);
    expect(self.isSelf('127.0.0.1:50000')).toBe(false);
    expect(self.isSelf('10.9.9.8')).toBe(false);
  });
});
