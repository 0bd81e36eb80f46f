// Image references, parsed and normalized as Docker, containerd and go-containerregistry do
// (distribution/reference's grammar): `busybox` → `docker.io/library/busybox:latest`,
// `10.0.2.2:5000/app@sha256:…` keeps its registry and digest.
//
// Written by hand: the grammar is a handful of regular expressions and no npm package the tree
// carries implements it.

const DOMAIN_COMPONENT = '(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])';
const DOMAIN = `(?:${DOMAIN_COMPONENT}(?:\\.${DOMAIN_COMPONENT})*|\\[[0-9a-fA-F:]+\\])(?::[0-9]+)?`;
const PATH_COMPONENT = '[a-z0-9]+(?:(?:[._]|__|[-]+)[a-z0-9]+)*';
const DOMAIN_RE = new RegExp(`^${DOMAIN}$`);
const PATH_RE = new RegExp(`^${PATH_COMPONENT}(?:/${PATH_COMPONENT})*$`);
const TAG_RE = /^[\w][\w.-]{0,127}$/;
const DIGEST_RE = /^[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}$/;

export const DEFAULT_DOMAIN = 'docker.io';
/** Where docker.io's API actually is. */
export const DOCKER_HUB_API = 'registry-1.docker.io';

export interface ImageReference {
  /** Registry host (`docker.io`, `10.0.2.2:5000`). */
  domain: string;
  /** Repository path inside the registry (`library/busybox`). */
  path: string;
  tag?: string;
  digest?: string;
}

/** `domain/path`: the repository's full name. */
export function repositoryName(r: ImageReference): string {
  return `${r.domain}/${r.path}`;
}

/** The reference as text, its tag (or `latest`) and digest included. */
export function formatReference(r: ImageReference): string {
  return `${repositoryName(r)}${r.tag ? `:${r.tag}` : ''}${r.digest ? `@${r.digest}` : ''}`;
}

/** Whether the first path element names a registry rather than a Docker Hub user. */
function looksLikeDomain(first: string): boolean {
  return first.includes('.') || first.includes(':') || first === 'localhost' || first !== first.toLowerCase();
}

/**
 * Parses `ref` and fills in what Docker does: docker.io as the registry, `library/` for a
 * Docker Hub official image, `latest` when there is neither tag nor digest.
 */
export function parseReference(ref: string): ImageReference {
  const input = ref.trim();
  if (input === '') throw new Error('invalid image reference: empty');
  let rest = input;
  let digest: string | undefined;
  const at = rest.indexOf('@');
  if (at >= 0) {
    digest = rest.slice(at + 1);
    rest = rest.slice(0, at);
    if (!DIGEST_RE.test(digest)) throw new Error(`invalid image reference ${JSON.stringify(ref)}: bad digest ${JSON.stringify(digest)}`);
  }
  let tag: string | undefined;
  // A tag is after the last ':' that comes after the last '/' (a port's ':' comes before one).
  const colon = rest.lastIndexOf(':');
  if (colon > rest.lastIndexOf('/')) {
    tag = rest.slice(colon + 1);
    rest = rest.slice(0, colon);
    if (!TAG_RE.test(tag)) throw new Error(`invalid image reference ${JSON.stringify(ref)}: bad tag ${JSON.stringify(tag)}`);
  }
  let domain = DEFAULT_DOMAIN;
  let path = rest;
  const slash = rest.indexOf('/');
  if (slash >= 0 && looksLikeDomain(rest.slice(0, slash))) {
    domain = rest.slice(0, slash);
    path = rest.slice(slash + 1);
    if (!DOMAIN_RE.test(domain)) throw new Error(`invalid image reference ${JSON.stringify(ref)}: bad registry host ${JSON.stringify(domain)}`);
  }
  if (domain === 'index.docker.io') domain = DEFAULT_DOMAIN;
  if (domain === DEFAULT_DOMAIN && !path.includes('/')) path = `library/${path}`;
  if (path !== path.toLowerCase()) throw new Error(`invalid image reference ${JSON.stringify(ref)}: repository name must be lowercase`);
  if (!PATH_RE.test(path)) throw new Error(`invalid image reference ${JSON.stringify(ref)}: bad repository name ${JSON.stringify(path)}`);
  if (domain.length + 1 + path.length > 255) throw new Error(`invalid image reference ${JSON.stringify(ref)}: name longer than 255 characters`);
  if (!tag && !digest) tag = 'latest';
  return { domain, path, ...(tag ? { tag } : {}), ...(digest ? { digest } : {}) };
}

/** `ref` normalized: `busybox` → `docker.io/library/busybox:latest`. */
export function normalizeReference(ref: string): string {
  return formatReference(parseReference(ref));
}
