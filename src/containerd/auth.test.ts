import { describe, expect, it } from 'vitest';
import { basicAuthorization, basicPair, parseWwwAuthenticate, tokenOf, tokenUrl } from './auth.ts';

describe('WWW-Authenticate', () => {
  it("parses Docker Hub's Bearer challenge", () => {
    const c = parseWwwAuthenticate('Bearer realm="https://auth.docker.io/token",service="registry.docker.io",scope="repository:library/busybox:pull"');
    expect(c).toEqual([{ scheme: 'bearer', params: { realm: 'https://auth.docker.io/token', service: 'registry.docker.io', scope: 'repository:library/busybox:pull' } }]);
  });
  it('parses Basic, several challenges, tokens and escapes', () => {
    expect(parseWwwAuthenticate('Basic realm="Registry Realm"')).toEqual([{ scheme: 'basic', params: { realm: 'Registry Realm' } }]);
    expect(parseWwwAuthenticate('Basic realm="a\\"b", Bearer realm=https://x/t, error=invalid_token')).toEqual([
      { scheme: 'basic', params: { realm: 'a"b' } },
      { scheme: 'bearer', params: { realm: 'https://x/t', error: 'invalid_token' } },
    ]);
    expect(parseWwwAuthenticate('')).toEqual([]);
  });
  it('builds the token URL with the registry scope or ours', () => {
    const [c] = parseWwwAuthenticate('Bearer realm="https://ghcr.io/token",service="ghcr.io"');
    expect(tokenUrl(c!, 'repository:a/b:pull').toString()).toBe('https://ghcr.io/token?service=ghcr.io&scope=repository%3Aa%2Fb%3Apull');
    expect(tokenOf({ token: 't1' })).toBe('t1');
    expect(tokenOf({ access_token: 't2' })).toBe('t2');
    expect(() => tokenOf({})).toThrow(/no token/);
  });
  it('reads credentials as user/password or a Docker auth value', () => {
    expect(basicAuthorization({ username: 'u', password: 'p' })).toBe(`Basic ${Buffer.from('u:p').toString('base64')}`);
    expect(basicPair({ auth: Buffer.from('me:s:e').toString('base64') })).toEqual({ username: 'me', password: 's:e' });
    expect(basicAuthorization({})).toBeUndefined();
  });
});
