import { describe, expect, it } from 'vitest';
import type { ContainerRunSpec } from '../../containerd/types.ts';
import { checkBindSources } from './containerd-workloads.ts';

const spec = (source: string): ContainerRunSpec => ({
  name: 'web',
  image: 'x',
  environment: [],
  mounts: [{ type: 'bind', source, destination: '/data', options: ['ro'] }],
  profile: 'restricted',
  capabilities: { add: [], drop: [] },
  network: 'none',
  limits: {},
});

describe('hostPath sources, resolved on the node before a start', () => {
  const links: Record<string, string> = { '/var/data': '/var/data', '/var/sneaky': '/system/state', '/var/inner': '/var/lib/etcd/member' };
  const realpath = (p: string) => {
    if (!(p in links)) throw Object.assign(new Error('nope'), { code: 'ENOENT' });
    return links[p]!;
  };
  it('lets a plain directory under /var through', () => {
    expect(() => checkBindSources(spec('/var/data'), realpath)).not.toThrow();
  });
  it('refuses a link that leads out of what is allowed, naming where it leads', () => {
    expect(() => checkBindSources(spec('/var/sneaky'), realpath)).toThrow(/hostPath \/var\/sneaky leads to \/system\/state, which is not allowed/);
    expect(() => checkBindSources(spec('/var/inner'), realpath)).toThrow(/leads to \/var\/lib\/etcd\/member/);
  });
  it('says when the source does not exist', () => {
    expect(() => checkBindSources(spec('/var/missing'), realpath)).toThrow(/hostPath \/var\/missing: does not exist on the node/);
  });
});
