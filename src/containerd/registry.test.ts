import { describe, expect, it } from 'vitest';
import { endpointsFor } from './registry.ts';

const urls = (eps: ReturnType<typeof endpointsFor>) => eps.map((e) => `${e.base.href}${e.mirror ? ' (mirror)' : ''}`);

describe('registry endpoints', () => {
  it('goes to the registry itself, docker.io through registry-1.docker.io', () => {
    expect(urls(endpointsFor('ghcr.io'))).toEqual(['https://ghcr.io/']);
    expect(urls(endpointsFor('docker.io'))).toEqual(['https://registry-1.docker.io/']);
  });
  it('tries mirrors first, then the registry unless skipFallback', () => {
    const cfg = { 'docker.io': { endpoints: ['http://10.0.2.2:5000', 'https://mirror.example/v2-proxy'] } };
    expect(urls(endpointsFor('docker.io', cfg))).toEqual(['http://10.0.2.2:5000/ (mirror)', 'https://mirror.example/v2-proxy (mirror)', 'https://registry-1.docker.io/']);
    expect(urls(endpointsFor('docker.io', { 'docker.io': { ...cfg['docker.io'], skipFallback: true } }))).toEqual(['http://10.0.2.2:5000/ (mirror)', 'https://mirror.example/v2-proxy (mirror)']);
    expect(urls(endpointsFor('quay.io', { '*': { endpoints: ['https://all.example'] } }))).toEqual(['https://all.example/ (mirror)', 'https://quay.io/']);
    // quay.io's entry only says how to log in: `*`'s mirrors still apply, and the login goes to quay.io.
    const eps = endpointsFor('quay.io', { '*': { endpoints: ['https://all.example'] }, 'quay.io': { endpoints: [], auth: { username: 'q' } } });
    expect(urls(eps)).toEqual(['https://all.example/ (mirror)', 'https://quay.io/']);
    expect(eps.map((e) => e.auth)).toEqual([undefined, { username: 'q' }]);
  });
  it('an endpoint on the registry host itself (plain http) is the registry, not a mirror', () => {
    expect(urls(endpointsFor('10.0.2.2:5000', { '10.0.2.2:5000': { endpoints: ['http://10.0.2.2:5000'] } }))).toEqual(['http://10.0.2.2:5000/']);
  });
  it("takes auth and TLS from the endpoint host's own entry, else the registry's for itself", () => {
    const cfg = {
      'docker.io': { endpoints: ['https://mirror.example'], auth: { username: 'hub', password: 'h' } },
      'mirror.example': { endpoints: [], auth: { username: 'm', password: 'p' }, tls: { insecureSkipVerify: true } },
    };
    const [mirror, hub] = endpointsFor('docker.io', cfg);
    expect(mirror!.auth).toEqual({ username: 'm', password: 'p' });
    expect(mirror!.tls).toEqual({ insecureSkipVerify: true });
    expect(hub!.auth).toEqual({ username: 'hub', password: 'h' });
    expect(endpointsFor('docker.io', { 'registry-1.docker.io': { endpoints: [], auth: { username: 'api' } } })[0]!.auth).toEqual({ username: 'api' });
  });
});
