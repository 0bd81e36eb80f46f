// Registry authentication: the challenges of a 401's WWW-Authenticate header (RFC 7235), and
// the Authorization a registry client answers them with (Docker's token protocol for Bearer,
// RFC 7617 for Basic).
//
// Written by hand: a challenge list is a small grammar and Node has no parser for it.

export interface Challenge {
  /** Lower-cased scheme: `bearer`, `basic`. */
  scheme: string;
  /** Parameters, names lower-cased (`realm`, `service`, `scope`, `error`). */
  params: Record<string, string>;
}

/** Parses a WWW-Authenticate header into its challenges. Malformed tails are ignored. */
export function parseWwwAuthenticate(header: string): Challenge[] {
  const out: Challenge[] = [];
  let i = 0;
  const n = header.length;
  const skipWs = () => {
    while (i < n && (header[i] === ' ' || header[i] === '\t')) i++;
  };
  const token = (): string => {
    const start = i;
    while (i < n && /[!#$%&'*+\-.^_`|~0-9A-Za-z]/.test(header[i]!)) i++;
    return header.slice(start, i);
  };
  while (i < n) {
    skipWs();
    while (i < n && header[i] === ',') {
      i++;
      skipWs();
    }
    const scheme = token();
    if (!scheme) break;
    const challenge: Challenge = { scheme: scheme.toLowerCase(), params: {} };
    out.push(challenge);
    for (;;) {
      skipWs();
      const save = i;
      const name = token();
      skipWs();
      if (!name || header[i] !== '=') {
        // The next challenge's scheme (or a token68, which registries do not send).
        i = save;
        break;
      }
      i++;
      skipWs();
      let value = '';
      if (header[i] === '"') {
        i++;
        while (i < n && header[i] !== '"') {
          if (header[i] === '\\' && i + 1 < n) i++;
          value += header[i++];
        }
        i++;
      } else {
        // Lenient as Docker's parser: an unquoted value runs to the next comma or space
        // (registries send unquoted URLs, which are not RFC 7235 tokens).
        const start = i;
        while (i < n && header[i] !== ',' && header[i] !== ' ' && header[i] !== '\t') i++;
        value = header.slice(start, i);
      }
      challenge.params[name.toLowerCase()] = value;
      skipWs();
      if (header[i] === ',') {
        i++;
        continue;
      }
      break;
    }
  }
  return out;
}

export interface Credentials {
  username?: string;
  password?: string;
  /** base64 of `user:password`, as in a Docker config's `auth`. */
  auth?: string;
  /** An OAuth2 refresh token (`identitytoken` of a Docker config). */
  identityToken?: string;
}

/** `user:password` from the credentials, or undefined when there are none. */
export function basicPair(c: Credentials | undefined): { username: string; password: string } | undefined {
  if (!c) return undefined;
  if (c.username !== undefined || c.password !== undefined) return { username: c.username ?? '', password: c.password ?? '' };
  if (c.auth) {
    const text = Buffer.from(c.auth, 'base64').toString('utf8');
    const colon = text.indexOf(':');
    if (colon < 0) throw new Error('registry auth: the `auth` value is not base64 of user:password');
    return { username: text.slice(0, colon), password: text.slice(colon + 1) };
  }
  return undefined;
}

/** The Basic Authorization header value of the credentials, if any. */
export function basicAuthorization(c: Credentials | undefined): string | undefined {
  const p = basicPair(c);
  return p && `Basic ${Buffer.from(`${p.username}:${p.password}`).toString('base64')}`;
}

/** The URL a bearer token is asked at (Docker's token protocol): realm?service=…&scope=…. */
export function tokenUrl(challenge: Challenge, scope: string): URL {
  const realm = challenge.params.realm;
  if (!realm) throw new Error('registry auth: Bearer challenge without a realm');
  const url = new URL(realm);
  if (challenge.params.service) url.searchParams.set('service', challenge.params.service);
  // The registry's own scope is what it asked for; ours names the repository and pull.
  url.searchParams.set('scope', challenge.params.scope || scope);
  return url;
}

/** The token of a token endpoint's JSON reply (`token`, or OAuth2's `access_token`). */
export function tokenOf(body: unknown): string {
  const b = body as { token?: unknown; access_token?: unknown } | null;
  const t = typeof b?.token === 'string' && b.token ? b.token : typeof b?.access_token === 'string' ? b.access_token : '';
  if (!t) throw new Error('registry auth: the token endpoint returned no token');
  return t;
}
