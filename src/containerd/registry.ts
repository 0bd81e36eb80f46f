// A client of the OCI distribution API (a registry's /v2/ endpoints) for pulls: resolve a
// reference to its manifest's digest, fetch manifests and blobs (from an offset, to resume),
// with Docker's token auth or Basic auth, per-host TLS (CA, client certificate,
// insecureSkipVerify), plain-http endpoints, and mirrors tried in order as containerd's
// hosts.toml resolver does.
//
// Written on node:http/https rather than fetch: Node's fetch takes no per-request CA or client
// certificate without undici's Agent, which Node does not expose and the tree does not carry.
import http from 'node:http';
import https from 'node:https';
import { type Readable, Transform } from 'node:stream';
import { type ImageReference, formatImageReference } from '../config/image-ref.ts';
import { type Challenge, basicAuthorization, parseWwwAuthenticate, tokenOf, tokenUrl } from './auth.ts';
import { digester } from './content.ts';
import { MANIFEST_ACCEPT, type Descriptor } from './media-types.ts';
import type { RegistryConfig, RegistryHostConfig } from './types.ts';

/** Docker Hub's name in a reference. */
const DEFAULT_DOMAIN = 'docker.io';
/** Where docker.io's API actually is. */
const DOCKER_HUB_API = 'registry-1.docker.io';
/** A request with no answer for this long is dropped. */
const CONNECT_TIMEOUT_MS = 15_000;

export type RegistryErrorKind = 'not-found' | 'auth' | 'unreachable' | 'digest' | 'protocol';

/** A registry failure, by kind, with a message that names the image and the registry. */
export class RegistryError extends Error {
  constructor(
    readonly kind: RegistryErrorKind,
    message: string,
    readonly status?: number,
  ) {
    super(message);
    this.name = 'RegistryError';
  }
}

/** One place to fetch a repository from: a mirror or the registry itself. */
export interface RegistryEndpoint {
  /** `https://host:port` (a path prefix kept; `/v2/` is added). */
  base: URL;
  /** Whether this is a mirror (containerd then adds `?ns=<registry>`). */
  mirror: boolean;
  auth?: RegistryHostConfig['auth'];
  tls?: RegistryHostConfig['tls'];
}

/**
 * The endpoints to try for a registry host, in order: its configured mirrors, then the
 * registry itself unless skipFallback. A registry with no entry falls back to `*`'s mirrors.
 * Auth and TLS of an endpoint come from the config entry of the endpoint's own host (as Talos's
 * `machine.registries.config` keys them), else from the registry's entry for the registry itself.
 */
export function endpointsFor(domain: string, config: RegistryConfig = {}): RegistryEndpoint[] {
  // A registry's own entry may hold only its auth or TLS (endpoints []): `*`'s mirrors still apply then.
  const own = config[domain];
  const entry = own?.endpoints?.length || own?.skipFallback ? own : (config['*'] ?? own);
  const out: RegistryEndpoint[] = [];
  for (const e of entry?.endpoints ?? []) {
    const base = new URL(/^[a-z]+:\/\//i.test(e) ? e : `https://${e}`);
    const epOwn = config[base.host];
    out.push({ base, mirror: base.host !== domain, auth: epOwn?.auth ?? (base.host === domain ? own?.auth : undefined), tls: epOwn?.tls ?? (base.host === domain ? own?.tls : undefined) });
  }
  if (!entry?.skipFallback && !out.some((e) => e.base.host === domain && !e.mirror)) {
    const host = domain === DEFAULT_DOMAIN ? DOCKER_HUB_API : domain;
    // Docker Hub's settings may be keyed by its API host (as containerd's hosts.toml would) or by docker.io.
    const up = config[host] ?? own;
    out.push({ base: new URL(`https://${host}`), mirror: false, auth: up?.auth, tls: up?.tls });
  }
  return out;
}

export interface RegistryClientOptions {
  config?: RegistryConfig;
  /** A response that sends nothing for this long is dropped (and the fetch retried). */
  stallTimeoutMs?: number;
}

interface Response {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Readable;
}

const MAX_MANIFEST = 8 * 1024 * 1024;

async function readAll(body: Readable, limit: number): Promise<Buffer> {
  const parts: Buffer[] = [];
  let n = 0;
  for await (const chunk of body) {
    n += (chunk as Buffer).length;
    if (n > limit) {
      body.destroy();
      throw new RegistryError('protocol', `response larger than ${limit} bytes`);
    }
    parts.push(chunk as Buffer);
  }
  return Buffer.concat(parts);
}

/** A pull client for one repository. */
export class RegistryClient {
  readonly endpoints: RegistryEndpoint[];
  private readonly agents = new Map<RegistryEndpoint, https.Agent | http.Agent>();
  /** Authorization per endpoint, once earned. */
  private readonly authorization = new Map<RegistryEndpoint, string>();
  private readonly stallMs: number;
  /** The endpoint that resolved the reference: blobs are fetched there first. */
  private preferred: RegistryEndpoint | undefined;

  constructor(
    readonly ref: ImageReference,
    opts: RegistryClientOptions = {},
  ) {
    this.endpoints = endpointsFor(ref.registry, opts.config);
    this.stallMs = opts.stallTimeoutMs ?? 30_000;
  }

  /** The reference in its normal form, for messages. */
  private get name(): string {
    return formatImageReference(this.ref);
  }

  close(): void {
    for (const a of this.agents.values()) a.destroy();
    this.agents.clear();
  }

  private agent(ep: RegistryEndpoint): http.Agent {
    let a = this.agents.get(ep);
    if (!a) {
      a =
        ep.base.protocol === 'http:'
          ? new http.Agent({ keepAlive: true })
          : new https.Agent({
              keepAlive: true,
              ...(ep.tls?.ca ? { ca: ep.tls.ca } : {}),
              ...(ep.tls?.clientCert ? { cert: ep.tls.clientCert, key: ep.tls.clientKey } : {}),
              rejectUnauthorized: !ep.tls?.insecureSkipVerify,
            });
      this.agents.set(ep, a);
    }
    return a;
  }

  /**
   * One HTTP request, with `body` if given; redirects followed (Authorization only to the
   * endpoint's own origin), those of a request with a body not.
   */
  private request(ep: RegistryEndpoint, method: string, url: URL, headers: Record<string, string>, body?: string, redirects = 5): Promise<Response> {
    return new Promise<Response>((resolve, reject) => {
      const sameOrigin = url.origin === ep.base.origin;
      const lib = url.protocol === 'http:' ? http : https;
      // A redirect to blob storage elsewhere (S3, a CDN) must not carry the registry's credentials.
      const { authorization: _drop, ...anonymous } = headers;
      const req = lib.request(url, { method, headers: sameOrigin ? headers : anonymous, agent: sameOrigin ? this.agent(ep) : undefined, timeout: CONNECT_TIMEOUT_MS });
      let response: http.IncomingMessage | undefined;
      // One socket timer serves both: no answer within CONNECT_TIMEOUT_MS before the response;
      // after it, a body that sends nothing for stallMs is dropped, which its reader sees as an
      // error (and a blob fetch resumes from where it was).
      req.on('timeout', () => {
        if (response) response.destroy(new Error(`registry stalled: nothing received for ${this.stallMs} ms`));
        else req.destroy(new Error(`no answer within ${CONNECT_TIMEOUT_MS} ms`));
      });
      req.on('error', reject);
      req.on('response', (res) => {
        const loc = res.headers.location;
        if (res.statusCode && [301, 302, 303, 307, 308].includes(res.statusCode) && loc && redirects > 0 && body === undefined) {
          res.resume();
          this.request(ep, method === 'HEAD' ? 'HEAD' : 'GET', new URL(loc, url), headers, undefined, redirects - 1).then(resolve, reject);
          return;
        }
        response = res;
        req.setTimeout(this.stallMs);
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: res });
      });
      req.end(body);
    });
  }

  private url(ep: RegistryEndpoint, kind: 'manifests' | 'blobs', reference: string): URL {
    const prefix = ep.base.pathname.replace(/\/+$/, '');
    const u = new URL(`${ep.base.origin}${prefix}/v2/${this.ref.repository}/${kind}/${reference}`);
    if (ep.mirror) u.searchParams.set('ns', this.ref.registry);
    return u;
  }

  /** Earns an Authorization for the challenges of a 401, or throws an auth error. */
  private async authorize(ep: RegistryEndpoint, challenges: Challenge[]): Promise<string> {
    const scope = `repository:${this.ref.repository}:pull`;
    const bearer = challenges.find((c) => c.scheme === 'bearer');
    if (bearer) {
      const url = tokenUrl(bearer, scope);
      const headers: Record<string, string> = {};
      const basic = basicAuthorization(ep.auth);
      if (basic) headers.authorization = basic;
      let res: Response;
      if (ep.auth?.identityToken) {
        // OAuth2 refresh-token grant (Docker's identity tokens).
        const form = new URLSearchParams({ grant_type: 'refresh_token', refresh_token: ep.auth.identityToken, service: bearer.params.service ?? '', scope: url.searchParams.get('scope') ?? scope, client_id: 'bronze' });
        res = await this.request(ep, 'POST', url, { 'content-type': 'application/x-www-form-urlencoded' }, form.toString());
      } else {
        res = await this.request(ep, 'GET', url, headers);
      }
      const body = await readAll(res.body, 1024 * 1024);
      if (res.status === 401 || res.status === 403) throw new RegistryError('auth', `registry ${ep.base.host} refused authorization for ${this.name} (HTTP ${res.status} from its token service)`, res.status);
      if (res.status !== 200) throw new RegistryError('protocol', `registry ${ep.base.host}: token service answered HTTP ${res.status}`, res.status);
      let json: unknown;
      try {
        json = JSON.parse(body.toString('utf8'));
      } catch {
        throw new RegistryError('protocol', `registry ${ep.base.host}: token service sent no JSON`);
      }
      return `Bearer ${tokenOf(json)}`;
    }
    if (challenges.some((c) => c.scheme === 'basic')) {
      const basic = basicAuthorization(ep.auth);
      if (!basic) throw new RegistryError('auth', `registry ${ep.base.host} requires credentials for ${this.name} (none configured)`, 401);
      return basic;
    }
    throw new RegistryError('auth', `registry ${ep.base.host} refused ${this.name} (HTTP 401 without a challenge Bronze knows)`, 401);
  }

  /** A GET with auth: answers a 401 once with what its challenge asks, then reports 401/403 as auth errors. */
  private async get(ep: RegistryEndpoint, url: URL, headers: Record<string, string>): Promise<Response> {
    const send = (): Promise<Response> => {
      const auth = this.authorization.get(ep);
      return this.request(ep, 'GET', url, auth ? { ...headers, authorization: auth } : headers).catch((err: Error) => {
        throw new RegistryError('unreachable', `registry ${ep.base.host} unreachable: ${err.message}`);
      });
    };
    let res = await send();
    if (res.status === 401) {
      res.body.resume();
      const challenges = parseWwwAuthenticate(String(res.headers['www-authenticate'] ?? ''));
      this.authorization.set(ep, await this.authorize(ep, challenges));
      res = await send();
    }
    if (res.status === 401 || res.status === 403) {
      res.body.resume();
      throw new RegistryError('auth', `registry ${ep.base.host} refused authorization for ${this.name} (HTTP ${res.status})`, res.status);
    }
    return res;
  }

  /**
   * Tries each endpoint in turn (mirrors first), as containerd's resolver: the first that
   * answers wins; if none does, the first error other than "not found", else "not found".
   */
  private async eachEndpoint<T>(first: RegistryEndpoint | undefined, f: (ep: RegistryEndpoint) => Promise<T>): Promise<T> {
    const order = first ? [first, ...this.endpoints.filter((e) => e !== first)] : this.endpoints;
    let firstErr: unknown;
    let notFound: unknown;
    for (const ep of order) {
      try {
        return await f(ep);
      } catch (err) {
        if (err instanceof RegistryError && err.kind === 'not-found') notFound ??= err;
        else firstErr ??= err;
      }
    }
    throw firstErr ?? notFound ?? new RegistryError('unreachable', `no registry endpoint for ${this.ref.registry}`);
  }

  /** A manifest's bytes from one endpoint, its digest checked against `digest` when given. */
  private async manifestFrom(ep: RegistryEndpoint, reference: string, digest?: string): Promise<{ descriptor: Descriptor; body: Buffer }> {
    const res = await this.get(ep, this.url(ep, 'manifests', reference), { accept: MANIFEST_ACCEPT });
    if (res.status === 404) {
      res.body.resume();
      throw new RegistryError('not-found', `image ${this.name} not found in registry ${ep.base.host}`, 404);
    }
    if (res.status !== 200) {
      res.body.resume();
      throw new RegistryError('protocol', `registry ${ep.base.host} answered HTTP ${res.status} for the manifest of ${this.name}`, res.status);
    }
    let body: Buffer;
    try {
      body = await readAll(res.body, MAX_MANIFEST);
    } catch (err) {
      if (err instanceof RegistryError) throw err;
      throw new RegistryError('unreachable', `registry ${ep.base.host}: manifest of ${this.name} cut off: ${(err as Error).message}`);
    }
    const claimed = digest ?? (typeof res.headers['docker-content-digest'] === 'string' ? res.headers['docker-content-digest'] : undefined);
    const d = digester(claimed ?? 'sha256:');
    d.hash.update(body);
    const actual = d.digest();
    if (claimed && actual !== claimed) throw new RegistryError('digest', `digest mismatch for the manifest of ${this.name} from ${ep.base.host}: expected ${claimed}, got ${actual}`);
    let mediaType = String(res.headers['content-type'] ?? '').split(';')[0]!.trim();
    try {
      const parsed = JSON.parse(body.toString('utf8')) as { mediaType?: string; schemaVersion?: number; manifests?: unknown; config?: unknown };
      if (parsed.schemaVersion === 1) throw new RegistryError('protocol', `${this.name}: Docker schema 1 manifests are not supported`);
      // The body's own mediaType is authoritative; registries' Content-Type varies.
      if (parsed.mediaType) mediaType = parsed.mediaType;
      else if (!/json/.test(mediaType) || mediaType === 'application/json') mediaType = parsed.manifests ? 'application/vnd.oci.image.index.v1+json' : 'application/vnd.oci.image.manifest.v1+json';
    } catch (err) {
      if (err instanceof RegistryError) throw err;
      throw new RegistryError('protocol', `registry ${ep.base.host} sent a manifest for ${this.name} that is not JSON`);
    }
    return { descriptor: { mediaType, digest: actual, size: body.length }, body };
  }

  /** Resolves the reference (its digest if it has one, else its tag) to its top manifest or index. */
  async resolve(): Promise<{ descriptor: Descriptor; body: Buffer }> {
    const reference = this.ref.digest ?? this.ref.tag ?? 'latest';
    let won: RegistryEndpoint | undefined;
    const r = await this.eachEndpoint(undefined, async (ep) => {
      const got = await this.manifestFrom(ep, reference, this.ref.digest);
      won = ep;
      return got;
    });
    this.preferred = won;
    return r;
  }

  /** A manifest by digest (a platform's manifest of an index). */
  async manifest(digest: string): Promise<{ descriptor: Descriptor; body: Buffer }> {
    return this.eachEndpoint(this.preferred, (ep) => this.manifestFrom(ep, digest, digest));
  }

  /**
   * A blob's bytes from `offset` on. A registry that ignores Range (200) has the bytes before
   * `offset` skipped here. The stream errors if the registry stalls or drops the connection.
   */
  async blob(desc: Descriptor, offset = 0): Promise<Readable> {
    return this.eachEndpoint(this.preferred, async (ep) => {
      const res = await this.get(ep, this.url(ep, 'blobs', desc.digest), offset > 0 ? { range: `bytes=${offset}-` } : {});
      if (res.status === 404) {
        res.body.resume();
        throw new RegistryError('not-found', `blob ${desc.digest} of ${this.name} not found in registry ${ep.base.host}`, 404);
      }
      if (res.status === 206) return res.body;
      if (res.status === 200) return offset > 0 ? skip(res.body, offset) : res.body;
      res.body.resume();
      throw new RegistryError('protocol', `registry ${ep.base.host} answered HTTP ${res.status} for blob ${desc.digest} of ${this.name}`, res.status);
    });
  }
}

/** `body` without its first `n` bytes. */
function skip(body: Readable, n: number): Readable {
  let left = n;
  const out = body.pipe(
    new Transform({
      transform(chunk: Buffer, _enc: BufferEncoding, cb: (err?: Error | null, data?: Buffer) => void) {
        if (left >= chunk.length) {
          left -= chunk.length;
          cb();
        } else {
          const rest = chunk.subarray(left);
          left = 0;
          cb(null, rest);
        }
      },
    }),
  );
  body.on('error', (err) => out.destroy(err));
  return out;
}
