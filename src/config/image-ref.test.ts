// Image references: accepted and refused by go-containerregistry's rules (Talos's parser), named
// in containerd's normal form (docker.io, not index.docker.io: see image-ref.ts).
import { describe, expect, it } from 'vitest';
import { InvalidReferenceError, imageReferenceError, normalizeImageReference, parseImageReference, requireImageReference, requireNormalizedImageReference } from './image-ref.ts';

const digest = `sha256:${'ab'.repeat(32)}`;

describe('image references', () => {
  it('are normalized as containerd names them', () => {
    const cases: Record<string, string> = {
      busybox: 'docker.io/library/busybox:latest',
      'nginx:1.27': 'docker.io/library/nginx:1.27',
      'docker.io/library/nginx:1.27': 'docker.io/library/nginx:1.27',
      'index.docker.io/library/nginx': 'docker.io/library/nginx:latest',
      'siderolabs/talosctl': 'docker.io/siderolabs/talosctl:latest',
      'host:5000/xy:1': 'host:5000/xy:1',
      '10.0.2.2:5000/busybox:1': '10.0.2.2:5000/busybox:1',
      'ghcr.io/siderolabs/director:v1.0.0': 'ghcr.io/siderolabs/director:v1.0.0',
      'localhost/app': 'localhost/app:latest',
      [`nginx@${digest}`]: `docker.io/library/nginx@${digest}`,
      [`nginx:1.27@${digest}`]: `docker.io/library/nginx@${digest}`,
      '[::1]:5000/app:v2': '[::1]:5000/app:v2',
      'busybox:1.36': 'docker.io/library/busybox:1.36',
      'library/busybox': 'docker.io/library/busybox:latest',
      'siderolabs/talosctl:v1.9': 'docker.io/siderolabs/talosctl:v1.9',
      'docker.io/alpine': 'docker.io/library/alpine:latest',
      'localhost:5000/a/b/c': 'localhost:5000/a/b/c:latest',
      [`registry.k8s.io/pause@sha256:${'a'.repeat(64)}`]: `registry.k8s.io/pause@sha256:${'a'.repeat(64)}`,
      'my_org/my-app__x': 'docker.io/my_org/my-app__x:latest',
    };
    for (const [ref, want] of Object.entries(cases)) expect(normalizeImageReference(ref), ref).toBe(want);
  });

  it('are refused with the reason', () => {
    for (const [ref, why] of [
      ['not a ref', 'repository'],
      ['', 'a repository name must be specified'],
      ['NGINX', 'repository "NGINX"'],
      ['nginx:', 'must specify a tag name after the colon'],
      ['nginx:bad/tag', 'registries must be valid RFC 3986 URI authorities'],
      // go-containerregistry wants 2 characters at least: Talos refuses host:5000/x:1 too.
      ['host:5000/x:1', 'repository "x" must be 2 to 255'],
      ['nginx@sha256:abc', 'digest "sha256:abc"'],
      ['nginx@md5:0000', 'digest'],
      ['x', 'repository "x"'],
      ['host:port/xy', 'registries must be valid RFC 3986 URI authorities'],
      [`nginx:${'t'.repeat(129)}`, 'at most 128'],
    ]) {
      expect(imageReferenceError(ref!), ref).toContain(why);
    }
    expect(imageReferenceError('nginx')).toBeUndefined();
    expect(imageReferenceError('Busybox')).toContain('repository "Busybox"');
  });

  it('split into registry, repository, tag and digest', () => {
    expect(parseImageReference('127.0.0.1:5000/x/y:2')).toEqual({ registry: '127.0.0.1:5000', repository: 'x/y', tag: '2' });
    expect(parseImageReference(`busybox@sha256:${'c'.repeat(64)}`)).toEqual({ registry: 'docker.io', repository: 'library/busybox', digest: `sha256:${'c'.repeat(64)}` });
  });

  it('are refused by the containerd code with an InvalidReferenceError (INVALID_ARGUMENT)', () => {
    expect(requireNormalizedImageReference('busybox')).toBe('docker.io/library/busybox:latest');
    const err = (() => {
      try {
        requireImageReference('NGINX');
      } catch (e) {
        return e;
      }
    })();
    expect(err).toBeInstanceOf(InvalidReferenceError);
    expect(err).toMatchObject({ name: 'InvalidReferenceError', message: imageReferenceError('NGINX') });
  });
});
