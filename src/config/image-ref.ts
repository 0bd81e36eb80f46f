// OCI image references as a ContainerConfig's `image` takes them. Talos parses them with
// go-containerregistry (name.ParseReference, weak validation): a reference is accepted or
// refused by the same rules here, with the same reasons. The normal form differs on one point,
// on purpose: go-containerregistry writes Docker Hub as `index.docker.io`, while containerd (which
// pulls and stores the image on the node, and names it in `bronzectl image list`) writes
// `docker.io`; Talos's own comment on NormalizedImage notes that mismatch. Bronze names images as
// containerd does, so that the configured reference and the stored image's name are one string:
// `busybox` → `docker.io/library/busybox:latest`, `10.0.2.2:5000/x:1` as it is. A literal
// `localhost/x` is localhost's registry (as containerd reads it), not Docker Hub's.

const REPOSITORY_CHARS = /^[a-z0-9_\-./]+$/;
const TAG_CHARS = /^[A-Za-z0-9_\-.]+$/;
const DIGEST = /^sha256:[0-9a-f]{64}$/;

export interface ImageReference {
  /** `docker.io`, `10.0.2.2:5000`, `ghcr.io`. */
  registry: string;
  /** `library/busybox`. */
  repository: string;
  /** Absent when the reference is pinned by digest. */
  tag?: string;
  digest?: string;
}

const q = (v: unknown) => JSON.stringify(v);

/**
 * A reference that does not parse, with Talos's message. The API answers a call that named one
 * with INVALID_ARGUMENT (src/machined/api/status.ts, by this error's name).
 */
export class InvalidReferenceError extends Error {
  constructor(ref: string, reason: string) {
    super(`invalid image reference ${q(ref)}: ${reason}`);
    this.name = 'InvalidReferenceError';
  }
}

/** The reference's parts, or the reason it is not one (go-containerregistry's rules). */
export function parseImageReference(ref: string): ImageReference | string {
  if (ref === '') return 'a repository name must be specified';
  let base = ref;
  let digest: string | undefined;
  const at = ref.indexOf('@');
  if (at >= 0) {
    const parts = ref.split('@');
    if (parts.length !== 2) return `${q(ref)} has more than one "@"`;
    base = parts[0]!;
    digest = parts[1]!;
    if (!DIGEST.test(digest)) return `digest ${q(digest)} must be sha256: followed by 64 lowercase hex digits`;
  }
  let tag: string | undefined;
  const colon = base.split(':');
  if (colon.length > 1 && !colon.at(-1)!.includes('/')) {
    tag = colon.at(-1)!;
    base = colon.slice(0, -1).join(':');
    if (tag === '') return `${q(ref)} must specify a tag name after the colon`;
    if (tag.length > 128 || !TAG_CHARS.test(tag)) return `tag ${q(tag)} can only contain the characters A-Z, a-z, 0-9, "_", "-" and "." (at most 128)`;
  }
  if (base === '') return 'a repository name must be specified';
  let registry = '';
  let repository = base;
  const slash = base.indexOf('/');
  if (slash >= 0) {
    const first = base.slice(0, slash);
    if (first.includes('.') || first.includes(':') || first === 'localhost') {
      registry = first;
      repository = base.slice(slash + 1);
    }
  }
  if (repository.length < 2 || repository.length > 255 || !REPOSITORY_CHARS.test(repository)) {
    return `repository ${q(repository)} must be 2 to 255 characters of a-z, 0-9, "_", "-", "." and "/"`;
  }
  if (registry !== '' && !registryAuthorityOk(registry)) return `registries must be valid RFC 3986 URI authorities: ${registry}`;
  if (registry === '' || registry === 'index.docker.io') registry = 'docker.io';
  if (registry === 'docker.io' && !repository.includes('/')) repository = `library/${repository}`;
  return { registry, repository, ...(digest ? { digest } : { tag: tag ?? 'latest' }) };
}

/** `host[:port]` that a URL's authority takes as it is (go-containerregistry's checkRegistry). */
function registryAuthorityOk(registry: string): boolean {
  try {
    return new URL(`oci://${registry}`).host === registry;
  } catch {
    return false;
  }
}

/** The reference's parts; throws InvalidReferenceError when it is not one. */
export function requireImageReference(ref: string): ImageReference {
  const r = parseImageReference(ref);
  if (typeof r === 'string') throw new InvalidReferenceError(ref, r);
  return r;
}

/** The normal form: `docker.io/library/busybox:latest`; a digest-pinned reference drops its tag (as both parsers do). */
export function formatImageReference(r: ImageReference): string {
  return `${r.registry}/${r.repository}${r.digest ? `@${r.digest}` : `:${r.tag ?? 'latest'}`}`;
}

/** `ref` in the normal form, or undefined when it is not a reference. */
export function normalizeImageReference(ref: string): string | undefined {
  const r = parseImageReference(ref);
  return typeof r === 'string' ? undefined : formatImageReference(r);
}

/** `ref` in the normal form; throws InvalidReferenceError when it is not a reference. */
export function requireNormalizedImageReference(ref: string): string {
  return formatImageReference(requireImageReference(ref));
}

/** Talos's message for an unparseable reference. */
export function imageReferenceError(ref: string): string | undefined {
  const r = parseImageReference(ref);
  return typeof r === 'string' ? new InvalidReferenceError(ref, r).message : undefined;
}
