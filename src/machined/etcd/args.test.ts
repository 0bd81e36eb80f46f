import { describe, expect, it } from 'vitest';
import { ETCD_DEFAULT_ARGS, etcdArgs, peerURLs, type EtcdArgsInput } from './args.ts';

const base: EtcdArgsInput = {
  name: 'cp1',
  dataDir: '/var/lib/etcd',
  pkiDir: '/system/secrets/etcd',
  advertised: ['10.5.0.5'],
  listenPeer: ['0.0.0.0'],
  listenClient: ['0.0.0.0'],
  metricsHost: '127.0.0.1',
  cluster: { state: 'new', initial: 'cp1=https://10.5.0.5:2380' },
  extraArgs: {},
};

/** The arguments as a map (each flag once). */
function parse(args: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const a of args) {
    const m = /^--([a-z0-9-]+)=(.*)$/.exec(a);
    expect(m, a).not.toBeNull();
    expect(out[m![1]!], `--${m![1]} twice`).toBeUndefined();
    out[m![1]!] = m![2]!;
  }
  return out;
}

describe('etcd arguments', () => {
  it('compacts periodically, keeping 5 minutes of history (what kube-apiserver does on Talos)', () => {
    const a = parse(etcdArgs(base));
    expect(a['auto-compaction-mode']).toBe('periodic');
    expect(a['auto-compaction-retention']).toBe('5m');
    expect(a['quota-backend-bytes']).toBeUndefined(); // etcd's default, 2 GiB, as on Talos
  });

  it('extraArgs may change the compaction, not what Bronze sets itself', () => {
    const a = parse(etcdArgs({ ...base, extraArgs: { 'auto-compaction-retention': '1h', 'election-timeout': '5000', 'listen-peer-urls': 'http://0.0.0.0:2380', name: 'x' } }));
    expect(a['auto-compaction-mode']).toBe(ETCD_DEFAULT_ARGS['auto-compaction-mode']);
    expect(a['auto-compaction-retention']).toBe('1h');
    expect(a['election-timeout']).toBe('5000');
    expect(a['listen-peer-urls']).toBe('https://0.0.0.0:2380');
    expect(a.name).toBe('cp1');
  });

  it('listens and advertises where the address plan says, over TLS with client certificates', () => {
    const a = parse(
      etcdArgs({ ...base, advertised: ['192.168.1.1', '2001:db8::1'], listenPeer: ['192.168.1.1'], listenClient: ['127.0.0.1', '192.168.1.1'], cluster: { state: 'existing' } }),
    );
    expect(a).toMatchObject({
      'listen-peer-urls': 'https://192.168.1.1:2380',
      'listen-client-urls': 'https://127.0.0.1:2379,https://192.168.1.1:2379',
      'listen-metrics-urls': 'http://127.0.0.1:2381',
      'advertise-client-urls': 'https://192.168.1.1:2379,https://[2001:db8::1]:2379',
      'initial-advertise-peer-urls': 'https://192.168.1.1:2380,https://[2001:db8::1]:2380',
      'initial-cluster-state': 'existing',
      'client-cert-auth': 'true',
      'peer-client-cert-auth': 'true',
      'trusted-ca-file': '/system/secrets/etcd/ca.crt',
      'cert-file': '/system/secrets/etcd/peer.crt',
      'key-file': '/system/secrets/etcd/peer.key',
    });
    expect(a['initial-cluster']).toBeUndefined();
    expect(peerURLs(['10.5.0.5', 'fd00::5'])).toEqual(['https://10.5.0.5:2380', 'https://[fd00::5]:2380']);
  });

  it('refuses to start with nothing to advertise or listen on', () => {
    expect(() => etcdArgs({ ...base, advertised: [] })).toThrow(/no address to advertise/);
    expect(() => etcdArgs({ ...base, listenPeer: [] })).toThrow(/no address to listen on/);
  });
});
