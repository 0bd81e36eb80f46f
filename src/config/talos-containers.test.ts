// Talos's own documents for the workload and registry kinds, as Talos ships them, validated by
// Bronze: each is accepted or refused as Talos's validation accepts or refuses it, and where
// Bronze refuses what Talos accepts, the only errors are Bronze's stated ones (user volumes not
// available yet, overridePath not supported yet). Sources (siderolabs/talos, main of 2026-08):
// the ContainerConfig example of container_config.go (exampleContainerConfigV1Alpha1, printed in
// website/content/v1.15/reference/configuration/container/containerconfig.md), and
// pkg/machinery/config/types/cri/testdata/*.yaml.
import { describe, expect, it } from 'vitest';
import { validateConfig } from './validate.ts';

interface TalosDocument {
  name: string;
  yaml: string;
  /** What Talos's Validate says: accepted, or refused with this message. */
  talos: true | string;
  /** Bronze's own refusals of a document Talos accepts: path → kind. */
  bronze?: Record<string, string>;
}

const DOCUMENTS: TalosDocument[] = [
  {
    name: 'the ContainerConfig example (containerconfig.md)',
    yaml: `apiVersion: v1alpha1
kind: ContainerConfig
name: nginx # Name of the container.
image: docker.io/library/nginx:1.27 # OCI image reference supplying the container's root filesystem.
# Environment variables, in \`KEY=value\` form, merged over the image's own ENV.
environment:
    - NGINX_PORT=8080
# Filesystems to mount into the container.
mounts:
    - # Mount a user volume, referenced by the name of its \`UserVolumeConfig\` document.
      userVolume:
        name: web-content # Name of the \`UserVolumeConfig\` document to mount.
        destination: /usr/share/nginx/html # Absolute path inside the container's mount namespace.
        # Mount options. User volume mounts are read-only by default (\`ro\`).
        options:
            - ro
    - # Mount a tmpfs for scratch space.
      tmpfs:
        destination: /tmp # Absolute path inside the container's mount namespace.
        size: 64MiB # Size of the tmpfs, e.g. \`64MiB\`. Empty means the kernel default.
# Resource limits, applied as cgroup v2 settings.
resources:
    # Hard ceilings the container cannot exceed.
    limits:
        cpu: 1500m # CPU ceiling in millicores, mapped onto cgroup v2 \`cpu.max\`.
        memory: 512MiB # Memory ceiling, mapped onto cgroup v2 \`memory.max\`.
# Conditions which must be satisfied before the container is started.
dependsOn:
    # Network readiness conditions which must be satisfied.
    networks:
        - addresses

    # # Host paths which must exist before the container starts.
    # paths:
    #     - /var/mnt/web-content
`,
    talos: true,
    bronze: { 'ContainerConfig(nginx).mounts[0].userVolume': 'unsupported' },
  },
  {
    name: 'cri/testdata/registrymirrorconfig.yaml',
    yaml: `apiVersion: v1alpha1
kind: RegistryMirrorConfig
name: ghcr.io
endpoints:
    - url: https://my-private-registry.local:5000
    - url: http://my-harbor/v2/registry-k8s.io/
      overridePath: true
skipFallback: true
`,
    talos: true,
    bronze: { 'RegistryMirrorConfig(ghcr.io).endpoints[1].overridePath': 'unsupported' },
  },
  {
    name: 'cri/testdata/registryauthconfig.yaml',
    yaml: `apiVersion: v1alpha1
kind: RegistryAuthConfig
name: my-private-registry.io
username: agent007
password: topsecret
`,
    talos: true,
  },
  {
    // Marshalling data: its PEM is abbreviated ("MIID...IDAQAB"), so Talos's Validate refuses it.
    name: 'cri/testdata/registrytlsconfig.yaml',
    yaml: `apiVersion: v1alpha1
kind: RegistryTLSConfig
name: my-tls-registry.io
clientIdentity:
    cert: |-
        -----BEGIN CERTIFICATE-----
        MIID...IDAQAB
        -----END CERTIFICATE-----
    key: |-
        -----BEGIN PRIVATE KEY-----
        MIIE...AB
        -----END PRIVATE KEY-----
ca: |-
    -----BEGIN CERTIFICATE-----
    MIID...IDAQAB
    -----END CERTIFICATE-----
insecureSkipVerify: true
`,
    talos: 'ca must be a valid PEM-encoded certificate',
  },
];

describe('Talos\'s own workload and registry documents', () => {
  it.each(DOCUMENTS.map((d) => [d.name, d] as const))('%s', (_, d) => {
    const r = validateConfig(d.yaml);
    if (d.talos === true && !d.bronze) {
      expect(r.ok, r.ok ? '' : r.errors.map((e) => `${e.path}: ${e.message}`).join('\n')).toBe(true);
      return;
    }
    expect(r.ok).toBe(false);
    if (r.ok) return;
    if (d.talos !== true) {
      expect(r.errors.map((e) => e.message)).toContain(d.talos);
      return;
    }
    expect(Object.fromEntries(r.errors.map((e) => [e.path, e.kind]))).toEqual(d.bronze);
  });

  it('are accepted once what Bronze does not have yet is taken out', () => {
    const container = DOCUMENTS[0]!.yaml.replace(/ {4}- # Mount a user volume[\s\S]*?- ro\n/, '');
    const r = validateConfig(container);
    expect(r.ok, r.ok ? '' : r.errors.map((e) => `${e.path}: ${e.message}`).join('\n')).toBe(true);
    expect(r.warnings.map((w) => w.kind)).toEqual(['advice']); // Talos's: not digest-pinned
    expect(validateConfig(DOCUMENTS[1]!.yaml.replace('      overridePath: true\n', '')).ok).toBe(true);
  });
});
