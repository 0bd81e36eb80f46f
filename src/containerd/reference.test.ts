import { describe, expect, it } from 'vitest';
import { normalizeReference, parseReference } from './reference.ts';

describe('image references', () => {
  it.each([
    ['busybox', 'docker.io/library/busybox:latest'],
    ['busybox:1.36', 'docker.io/library/busybox:1.36'],
    ['library/busybox', 'docker.io/library/busybox:latest'],
    ['siderolabs/talosctl:v1.9', 'docker.io/siderolabs/talosctl:v1.9'],
    ['index.docker.io/library/alpine', 'docker.io/library/alpine:latest'],
    ['docker.io/alpine', 'docker.io/library/alpine:latest'],
    ['ghcr.io/siderolabs/installer:v1.9.0', 'ghcr.io/siderolabs/installer:v1.9.0'],
    ['10.0.2.2:5000/busybox:1', '10.0.2.2:5000/busybox:1'],
    ['localhost/app', 'localhost/app:latest'],
    ['localhost:5000/a/b/c', 'localhost:5000/a/b/c:latest'],
    [`registry.k8s.io/pause@sha256:${'a'.repeat(64)}`, `registry.k8s.io/pause@sha256:${'a'.repeat(64)}`],
    [`busybox:1@sha256:${'b'.repeat(64)}`, `docker.io/library/busybox:1@sha256:${'b'.repeat(64)}`],
    ['my_org/my-app__x', 'docker.io/my_org/my-app__x:latest'],
  ])('%s → %s', (input, want) => {
    expect(normalizeReference(input)).toBe(want);
  });

  it('splits registry, path, tag and digest', () => {
    expect(parseReference('127.0.0.1:5000/x/y:2')).toEqual({ domain: '127.0.0.1:5000', path: 'x/y', tag: '2' });
    expect(parseReference(`a@sha256:${'c'.repeat(64)}`)).toEqual({ domain: 'docker.io', path: 'library/a', digest: `sha256:${'c'.repeat(64)}` });
  });

  it.each([
    ['', /empty/],
    ['Busybox', /lowercase/],
    ['busybox:', /bad tag/],
    ['busybox@sha256:abc', /bad digest/],
    ['a//b', /bad repository name/],
    ['-a', /bad repository name/],
    ['host:notaport/x', /bad registry host/],
  ])('refuses %j', (input, err) => {
    expect(() => parseReference(input)).toThrow(err);
  });
});
