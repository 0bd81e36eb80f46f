// Configurations shaped like what `talosctl gen config` writes for Talos v1.10 to v1.15, for a
// control plane and a worker, written for Bronze's tests (not copied from Talos): the same keys,
// documents and kinds of keys (SEC1 EC keys for the Kubernetes, aggregator and etcd CAs, a PKCS#1
// RSA service account key, Talos's "ED25519 PRIVATE KEY" for the OS CA), in Talos's 4-space YAML.
//
// What changes by version (Talos's version contract):
//   v1.12+  HostnameConfig (auto: stable) instead of machine.features.stableHostname;
//           machine.install.grubUseUKICmdline
//   v1.14+  the multi-document form: cluster identity in DiscoveryIdentityConfig, discovery in
//           DiscoveryServiceConfig, the control-plane endpoint and cluster name in
//           KubeClusterConfig, Kubernetes in Kube* documents, host DNS in ResolverConfig, and
//           VolumeConfig (EPHEMERAL, mount.secure), FilesystemTrimConfig, SecurityProfileConfig
//   v1.15   UnattendedInstallConfig instead of machine.install, DiskSMARTConfig, no rbac /
//           apidCheckExtKeyUsage feature flags
//
// Each part records what Bronze is expected to say about it: nothing (implemented), or a warning
// (ignored: Kubernetes and the like; kept for later; deprecated).
import YAML from 'yaml';
import type { CertAndKey } from '../../../src/pki/ca.ts';
import { toBase64Pem } from '../../../src/pki/pem.ts';

export const TALOS_VERSIONS = ['v1.10', 'v1.11', 'v1.12', 'v1.13', 'v1.14', 'v1.15'] as const;
export type TalosVersion = (typeof TALOS_VERSIONS)[number];

export interface TalosSecrets {
  os: CertAndKey;
  k8s: CertAndKey;
  aggregator: CertAndKey;
  etcd: CertAndKey;
  /** PKCS#1 RSA PEM. */
  serviceAccountKey: string;
}

export interface TalosShapedConfig {
  name: string;
  version: TalosVersion;
  type: 'controlplane' | 'worker';
  yaml: string;
  /** The warnings Bronze must give, as `path: kind` (ignored, kept). */
  warnings: string[];
}

const minor = (v: TalosVersion) => Number(v.split('.')[1]);
const b64 = toBase64Pem;
const K8S_VERSION = '1.34.1';
const ENDPOINT = 'https://192.168.122.10:6443';

interface Builder {
  v1: Record<string, any>;
  docs: Array<Record<string, unknown>>;
  warnings: string[];
}

function ignored(b: Builder, path: string): void {
  b.warnings.push(`${path}: ignored`);
}

function doc(b: Builder, kind: string, body: Record<string, unknown>, warning?: 'ignored' | 'kept'): void {
  b.docs.push({ apiVersion: 'v1alpha1', kind, ...body });
  if (warning) b.warnings.push(`${kind}${typeof body.name === 'string' ? `(${body.name})` : ''}: ${warning}`);
}

export function talosShapedConfig(version: TalosVersion, type: 'controlplane' | 'worker', s: TalosSecrets): TalosShapedConfig {
  const cp = type === 'controlplane';
  const m = minor(version);
  const multidoc = m >= 14;
  const b: Builder = { v1: {}, docs: [], warnings: [] };
  const tag = `${version}.0`;

  const machine: Record<string, any> = {
    type,
    token: 'ifn3xh.cvo39rklmy5m2lqr',
    ca: { crt: b64(s.os.crt), key: cp ? b64(s.os.key) : '' },
    certSANs: [],
  };
  if (!multidoc) {
    machine.kubelet = { image: `ghcr.io/siderolabs/kubelet:v${K8S_VERSION}`, defaultRuntimeSeccompProfileEnabled: true, disableManifestsDirectory: true };
    ignored(b, 'machine.kubelet');
  }
  machine.network = {};
  if (m < 15) {
    machine.install = { disk: '/dev/sda', image: `ghcr.io/siderolabs/installer:${tag}`, wipe: false };
    if (m >= 12) {
      machine.install.grubUseUKICmdline = true;
      ignored(b, 'machine.install.grubUseUKICmdline');
    }
  }
  if (m <= 11) {
    machine.registries = {}; // applied since issue 45 (the image puller's mirrors): no warning
  }
  const features: Record<string, unknown> = {};
  if (m < 15) Object.assign(features, { rbac: true });
  if (m < 12) features.stableHostname = true;
  if (m < 15) features.apidCheckExtKeyUsage = true;
  features.diskQuotaSupport = true;
  ignored(b, 'machine.features.diskQuotaSupport');
  features.kubePrism = { enabled: true, port: 7445 };
  ignored(b, 'machine.features.kubePrism');
  if (!multidoc) {
    features.hostDNS = { enabled: true, forwardKubeDNSToHost: true };
    ignored(b, 'machine.features.hostDNS');
  }
  machine.features = features;
  if (cp && !multidoc) {
    machine.nodeLabels = { 'node.kubernetes.io/exclude-from-external-load-balancers': '' };
    ignored(b, 'machine.nodeLabels');
  }

  const cluster: Record<string, any> = {};
  if (!multidoc) {
    cluster.id = 'Z6sNbpQ2oEhkVkUPtAbpk1mhFuxS2HIEsAvsV8DQW1E=';
    cluster.secret = 'bJ0IwnUDBGHoO4D0cNmC7hbBgwLYfO8DKyQX3lzuKnc=';
    cluster.controlPlane = { endpoint: ENDPOINT };
    cluster.clusterName = 'talos-shaped';
    cluster.network = { dnsDomain: 'cluster.local', podSubnets: ['10.244.0.0/16'], serviceSubnets: ['10.96.0.0/12'] };
    ignored(b, 'cluster.network');
  }
  cluster.token = 'a9hohe.1vth7h0xqgvwgdpx';
  if (!multidoc) {
    if (cp) {
      cluster.secretboxEncryptionSecret = 'z01mye6j16bspJYtTB/5SFX8j7Ph4JXxM2Xuu4vsBPM=';
      ignored(b, 'cluster.secretboxEncryptionSecret');
    }
    cluster.ca = { crt: b64(s.k8s.crt), key: cp ? b64(s.k8s.key) : '' };
    if (cp) {
      cluster.aggregatorCA = { crt: b64(s.aggregator.crt), key: b64(s.aggregator.key) };
      cluster.serviceAccount = { key: b64(s.serviceAccountKey) };
      cluster.apiServer = {
        image: `registry.k8s.io/kube-apiserver:v${K8S_VERSION}`,
        certSANs: ['192.168.122.10'],
        disablePodSecurityPolicy: true,
        admissionControl: [
          {
            name: 'PodSecurity',
            configuration: {
              apiVersion: 'pod-security.admission.config.k8s.io/v1alpha1',
              defaults: { audit: 'restricted', 'audit-version': 'latest', enforce: 'baseline', 'enforce-version': 'latest', warn: 'restricted', 'warn-version': 'latest' },
              exemptions: { namespaces: ['kube-system'], runtimeClasses: [], usernames: [] },
              kind: 'PodSecurityConfiguration',
            },
          },
        ],
        auditPolicy: { apiVersion: 'audit.k8s.io/v1', kind: 'Policy', rules: [{ level: 'Metadata' }] },
      };
      cluster.controllerManager = { image: `registry.k8s.io/kube-controller-manager:v${K8S_VERSION}` };
      cluster.proxy = { image: `registry.k8s.io/kube-proxy:v${K8S_VERSION}` };
      cluster.scheduler = { image: `registry.k8s.io/kube-scheduler:v${K8S_VERSION}` };
      for (const f of ['aggregatorCA', 'serviceAccount', 'apiServer', 'controllerManager', 'proxy', 'scheduler']) ignored(b, `cluster.${f}`);
    }
    cluster.discovery = { enabled: true, registries: { kubernetes: { disabled: true }, service: {} } };
  }
  if (cp) {
    cluster.etcd = { ca: { crt: b64(s.etcd.crt), key: b64(s.etcd.key) } };
    cluster.extraManifests = [];
    cluster.inlineManifests = [];
    ignored(b, 'cluster.extraManifests');
    ignored(b, 'cluster.inlineManifests');
  }
  b.v1 = { version: 'v1alpha1', debug: false, persist: true, machine, cluster };

  // ---- typed documents ----
  if (multidoc) {
    doc(b, 'DiscoveryServiceConfig', { name: 'default', endpoint: 'https://discovery.talos.dev/' }, 'kept');
    doc(b, 'DiscoveryIdentityConfig', { clusterID: 'Z6sNbpQ2oEhkVkUPtAbpk1mhFuxS2HIEsAvsV8DQW1E=', clusterSecret: 'bJ0IwnUDBGHoO4D0cNmC7hbBgwLYfO8DKyQX3lzuKnc=' }, 'kept');
  }
  if (m >= 15) {
    doc(b, 'UnattendedInstallConfig', {
      installer: { image: `ghcr.io/siderolabs/installer:${tag}` },
      provisioning: { diskSelector: { match: 'disk.dev_path == "/dev/sda"' }, wipe: false },
    });
  }
  if (multidoc) {
    doc(b, 'ResolverConfig', { hostDNS: { enabled: true, forwardKubeDNSToHost: true } });
    ignored(b, 'ResolverConfig.hostDNS');
    doc(b, 'VolumeConfig', { name: 'EPHEMERAL', mount: { secure: true } });
    doc(b, 'FilesystemTrimConfig', { interval: '168h0m0s' });
  }
  if (m >= 15) doc(b, 'DiskSMARTConfig', { interval: '24h0m0s' }, 'ignored');
  if (multidoc) doc(b, 'SecurityProfileConfig', { workloadIsolation: true }, 'ignored');
  if (m >= 12) doc(b, 'HostnameConfig', { auto: 'stable' });
  if (multidoc) {
    doc(b, 'KubeClusterConfig', { clusterName: 'talos-shaped', endpoint: ENDPOINT });
    doc(b, 'KubeNetworkConfig', { dnsDomain: 'cluster.local', podSubnets: ['10.244.0.0/16'], serviceSubnets: ['10.96.0.0/12'] }, 'ignored');
    doc(b, 'KubeletConfig', { image: `ghcr.io/siderolabs/kubelet:v${K8S_VERSION}`, defaultRuntimeSeccompProfileEnabled: true }, 'ignored');
    doc(
      b,
      'KubeNodeConfig',
      cp ? { labels: { 'node-role.kubernetes.io/control-plane': '', 'node.kubernetes.io/exclude-from-external-load-balancers': '' }, taints: { 'node-role.kubernetes.io/control-plane': ':NoSchedule' } } : {},
      'ignored',
    );
    doc(b, 'KubeAPIServerCAConfig', { ca: { crt: b64(s.k8s.crt), key: cp ? b64(s.k8s.key) : '' } }, 'ignored');
    if (cp) {
      doc(b, 'KubeAggregatorCAConfig', { ca: { crt: b64(s.aggregator.crt), key: b64(s.aggregator.key) } }, 'ignored');
      doc(b, 'KubeServiceAccountConfig', { key: b64(s.serviceAccountKey) }, 'ignored');
      doc(b, 'KubeAPIServerConfig', { image: `registry.k8s.io/kube-apiserver:v${K8S_VERSION}`, certExtraSANs: ['192.168.122.10'] }, 'ignored');
      doc(b, 'KubeAdmissionControlConfig', { name: 'PodSecurity', configuration: { apiVersion: 'pod-security.admission.config.k8s.io/v1alpha1', kind: 'PodSecurityConfiguration' } }, 'ignored');
      doc(b, 'KubeAuditPolicyConfig', { config: { apiVersion: 'audit.k8s.io/v1', kind: 'Policy', rules: [{ level: 'Metadata' }] } }, 'ignored');
      doc(b, 'KubeEtcdEncryptionConfig', { config: { resources: [{ providers: [{ secretbox: { keys: [{ name: 'key1', secret: 'z01mye6j16bspJYtTB/5SFX8j7Ph4JXxM2Xuu4vsBPM=' }] } }], resources: ['secrets'] }] } }, 'ignored');
      doc(b, 'KubeControllerManagerConfig', { image: `registry.k8s.io/kube-controller-manager:v${K8S_VERSION}` }, 'ignored');
      doc(b, 'KubeSchedulerConfig', { image: `registry.k8s.io/kube-scheduler:v${K8S_VERSION}` }, 'ignored');
      doc(b, 'KubeFlannelCNIConfig', { backend: 'vxlan', backendPort: 4789 }, 'ignored');
    }
    doc(b, 'KubeProxyConfig', { image: `registry.k8s.io/kube-proxy:v${K8S_VERSION}`, mode: 'nftables' }, 'ignored');
  }

  const dump = (d: unknown) => YAML.stringify(d, { indent: 4, lineWidth: 0 });
  const yaml = [b.v1, ...b.docs].map(dump).join('---\n');
  return { name: `talosctl gen config ${version} ${type}`, version, type, yaml, warnings: b.warnings };
}

export function talosShapedConfigs(s: TalosSecrets): TalosShapedConfig[] {
  return TALOS_VERSIONS.flatMap((v) => (['controlplane', 'worker'] as const).map((t) => talosShapedConfig(v, t, s)));
}
