import { describe, expect, it } from 'vitest';
import type { Descriptor } from './media-types.ts';
import { chooseManifest, nodePlatform } from './platform.ts';

const d = (arch: string, variant?: string, os = 'linux'): Descriptor => ({
  mediaType: 'application/vnd.oci.image.manifest.v1+json',
  digest: `sha256:${arch}${variant ?? ''}${os}`,
  size: 1,
  platform: { os, architecture: arch, ...(variant ? { variant } : {}) },
});

describe('platform choice', () => {
  it('names the node platform', () => {
    expect(nodePlatform('x64')).toEqual({ os: 'linux', architecture: 'amd64' });
    expect(nodePlatform('arm64')).toEqual({ os: 'linux', architecture: 'arm64', variant: 'v8' });
  });
  it('picks linux/amd64 among others', () => {
    const list = [d('arm', 'v7'), d('arm64', 'v8'), d('amd64', undefined, 'windows'), d('amd64')];
    expect(chooseManifest(list, nodePlatform('x64')).digest).toBe('sha256:amd64linux');
  });
  it('takes arm64 with or without the v8 variant, the spelled one first', () => {
    expect(chooseManifest([d('amd64'), d('arm64')], nodePlatform('arm64')).digest).toBe('sha256:arm64linux');
    expect(chooseManifest([d('arm64'), d('arm64', 'v8')], nodePlatform('arm64')).digest).toBe('sha256:arm64v8linux');
    expect(() => chooseManifest([d('arm64', 'v9')], nodePlatform('arm64'))).toThrow(/no image for linux\/arm64\/v8/);
  });
  it('skips entries without a platform (attestations) and says what the index has', () => {
    const att: Descriptor = { mediaType: 'application/vnd.oci.image.manifest.v1+json', digest: 'sha256:att', size: 1, annotations: { 'vnd.docker.reference.type': 'attestation-manifest' } };
    expect(() => chooseManifest([att, d('s390x')], nodePlatform('x64'))).toThrow('no image for linux/amd64 (the index has linux/s390x)');
  });
});
