// OCI and Docker image media types, and what each kind of blob is to a pull.

export const OCI_INDEX = 'application/vnd.oci.image.index.v1+json';
export const OCI_MANIFEST = 'application/vnd.oci.image.manifest.v1+json';
export const OCI_CONFIG = 'application/vnd.oci.image.config.v1+json';
export const OCI_LAYER = 'application/vnd.oci.image.layer.v1.tar';
export const OCI_LAYER_GZIP = 'application/vnd.oci.image.layer.v1.tar+gzip';
export const OCI_LAYER_ZSTD = 'application/vnd.oci.image.layer.v1.tar+zstd';
export const DOCKER_MANIFEST_LIST = 'application/vnd.docker.distribution.manifest.list.v2+json';
export const DOCKER_MANIFEST = 'application/vnd.docker.distribution.manifest.v2+json';
export const DOCKER_CONFIG = 'application/vnd.docker.container.image.v1+json';
export const DOCKER_LAYER = 'application/vnd.docker.image.rootfs.diff.tar';
export const DOCKER_LAYER_GZIP = 'application/vnd.docker.image.rootfs.diff.tar.gzip';

/** The Accept header of a manifest request: every manifest kind Bronze can pull. */
export const MANIFEST_ACCEPT = [OCI_INDEX, OCI_MANIFEST, DOCKER_MANIFEST_LIST, DOCKER_MANIFEST].join(', ');

export const isIndex = (mt: string): boolean => mt === OCI_INDEX || mt === DOCKER_MANIFEST_LIST;
export const isManifest = (mt: string): boolean => mt === OCI_MANIFEST || mt === DOCKER_MANIFEST;
export const isConfig = (mt: string): boolean => mt === OCI_CONFIG || mt === DOCKER_CONFIG;
/** Layers the diff service can apply (Docker's foreign and OCI's non-distributable ones included). */
export const isLayer = (mt: string): boolean => mt.startsWith('application/vnd.oci.image.layer.') || mt.startsWith('application/vnd.docker.image.rootfs.');

/** containerd's ChildGCLabels: the labels by which a parent blob keeps its children from GC. */
export function childGcLabels(children: Descriptor[]): Record<string, string> {
  const labels: Record<string, string> = {};
  const counts = new Map<string, number>();
  for (const ch of children) {
    const key = isConfig(ch.mediaType) ? 'containerd.io/gc.ref.content.config' : isManifest(ch.mediaType) ? 'containerd.io/gc.ref.content.m.' : isLayer(ch.mediaType) ? 'containerd.io/gc.ref.content.l.' : 'containerd.io/gc.ref.content.';
    const idx = counts.get(key) ?? 0;
    counts.set(key, idx + 1);
    labels[idx > 0 || key.endsWith('.') ? `${key}${idx}` : key] = ch.digest;
  }
  return labels;
}

/** An OCI content descriptor (the fields Bronze reads). */
export interface Descriptor {
  mediaType: string;
  digest: string;
  size: number;
  annotations?: Record<string, string>;
  platform?: Platform;
  urls?: string[];
}

export interface Platform {
  os: string;
  architecture: string;
  variant?: string;
  'os.version'?: string;
  'os.features'?: string[];
}

export interface ImageIndex {
  schemaVersion: number;
  mediaType?: string;
  manifests: Descriptor[];
  annotations?: Record<string, string>;
}

export interface ImageManifest {
  schemaVersion: number;
  mediaType?: string;
  config: Descriptor;
  layers: Descriptor[];
  annotations?: Record<string, string>;
}

/** The parts of an image's config the runtime uses (OCI image-spec `config`). */
export interface ImageRunConfig {
  User?: string;
  Env?: string[];
  Entrypoint?: string[];
  Cmd?: string[];
  WorkingDir?: string;
  ExposedPorts?: Record<string, unknown>;
  Volumes?: Record<string, unknown>;
  Labels?: Record<string, string>;
  StopSignal?: string;
}

export interface ImageConfig {
  architecture?: string;
  os?: string;
  variant?: string;
  config?: ImageRunConfig;
  rootfs: { type: string; diff_ids: string[] };
}
