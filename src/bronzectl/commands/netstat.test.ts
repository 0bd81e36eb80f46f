import { describe, expect, it } from 'vitest';
import { netstatRequest, netstatRow } from './netstat.ts';

describe('netstat flags → request, as talosctl', () => {
  it('defaults to connected TCP and UDP sockets of both families in the host namespace', () => {
    expect(netstatRequest({})).toEqual({
      filter: 'CONNECTED',
      feature: { pid: false },
      l4proto: { tcp: true, tcp6: true, udp: true, udp6: true, udplite: false, udplite6: false, raw: false, raw6: false },
      netns: { hostnetwork: true, allnetns: false },
    });
  });

  it('-l, -a, -t, -v, -4, -6, -p', () => {
    expect(netstatRequest({ listening: true }).filter).toBe('LISTENING');
    expect(netstatRequest({ all: true, listening: true }).filter).toBe('ALL');
    expect(netstatRequest({ tcp: true, ipv4: true }).l4proto).toEqual({ tcp: true, tcp6: false, udp: false, udp6: false, udplite: false, udplite6: false, raw: false, raw6: false });
    expect(Object.values(netstatRequest({ verbose: true, ipv6: true }).l4proto ?? {}).filter(Boolean)).toHaveLength(4);
    expect(netstatRequest({ programs: true }).feature).toEqual({ pid: true });
  });

  it('prints a record in talosctl\'s columns', () => {
    const r = { l4proto: 'tcp', rxqueue: '0', txqueue: '2', localip: '10.0.2.15', localport: 50000, remoteip: '0.0.0.0', remoteport: 0, state: 'LISTEN', uid: 0, inode: '123', process: { pid: 7, name: 'apid' }, tr: 'OFF', timerwhen: '150', retrnsmt: '0', timeout: '0' } as never;
    expect(netstatRow(r, {})).toEqual(['tcp', '0', '2', '10.0.2.15:50000', '0.0.0.0:*', 'LISTEN']);
    expect(netstatRow(r, { extend: true, programs: true, timers: true })).toEqual(['tcp', '0', '2', '10.0.2.15:50000', '0.0.0.0:*', 'LISTEN', '0', '123', '7/apid', 'off (1.50/0/0)']);
    expect(netstatRow({ ...(r as object), state: 'CLOSE' } as never, {})[5]).toBe('');
  });
});
