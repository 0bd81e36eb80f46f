// Every setting Bronze acts on, as data: the function that resolves it and the parts of the
// configuration it reads (a v1alpha1 path, a document kind, or `Kind.field` when several settings
// share a kind). A consumer reads a setting through its resolver, never the documents themselves
// (test/unit/import-graph.test.ts forbids raw reads outside src/config/), and each part of the
// configuration feeds one setting only (settings.test.ts), so that the precedence between the
// v1alpha1 document and the newer documents is written once. Adding a config kind: its resolver
// here, beside the v1alpha1 fields it overlaps.
export interface Setting {
  /** What it configures. */
  setting: string;
  /** `<file in this directory>#<exported function>`. */
  resolver: string;
  /** What it reads: v1alpha1 paths (`machine.sysctls`), kinds (`SysctlConfig`) or `Kind.field`. */
  sources: readonly string[];
}

export const SETTINGS: readonly Setting[] = [
  { setting: 'kernel parameters', resolver: 'machine.ts#sysctls', sources: ['machine.sysctls', 'SysctlConfig'] },
  { setting: 'services environment', resolver: 'machine.ts#environment', sources: ['machine.env', 'EnvironmentConfig'] },
  { setting: 'files under /var', resolver: 'machine.ts#files', sources: ['machine.files'] },
  { setting: 'hostname', resolver: 'network.ts#hostname', sources: ['machine.network.hostname', 'HostnameConfig'] },
  { setting: 'resolvers', resolver: 'network.ts#resolvers', sources: ['machine.network.nameservers', 'machine.network.searchDomains', 'ResolverConfig'] },
  { setting: '/etc/hosts entries', resolver: 'network.ts#staticHosts', sources: ['machine.network.extraHostEntries', 'StaticHostConfig'] },
  { setting: 'links', resolver: 'network.ts#links', sources: ['machine.network.interfaces', 'LinkConfig', 'DHCPv4Config', 'BondConfig', 'BridgeConfig'] },
  { setting: 'time sync', resolver: 'time.ts#timeSource', sources: ['machine.time', 'TimeSyncConfig'] },
  { setting: 'control-plane endpoint', resolver: 'cluster.ts#controlPlaneEndpoint', sources: ['cluster.controlPlane.endpoint', 'KubeClusterConfig.endpoint'] },
  { setting: 'cluster name', resolver: 'cluster.ts#clusterName', sources: ['cluster.clusterName', 'KubeClusterConfig.clusterName'] },
  { setting: 'machine credentials', resolver: 'cluster.ts#machineCredentials', sources: ['machine.token', 'machine.ca', 'machine.certSANs'] },
  { setting: 'etcd', resolver: 'etcd.ts#etcd', sources: ['cluster.etcd'] },
  { setting: 'install', resolver: 'install.ts#installOfDocuments', sources: ['machine.install', 'UnattendedInstallConfig'] },
  { setting: 'system volume encryption', resolver: 'encryption.ts#systemDiskEncryptionOf', sources: ['machine.systemDiskEncryption', 'VolumeConfig.encryption'] },
  { setting: 'filesystem trim', resolver: 'volumes.ts#filesystemTrim', sources: ['FilesystemTrimConfig'] },
  { setting: 'volume trim', resolver: 'volumes.ts#volumeTrim', sources: ['VolumeConfig.trim'] },
  { setting: 'EPHEMERAL mount options', resolver: 'volumes.ts#ephemeralMount', sources: ['VolumeConfig.mount'] },
  { setting: 'containers', resolver: 'containers.ts#containerDocs', sources: ['ContainerConfig', 'ContainerHealthConfig'] },
  { setting: 'image registries', resolver: 'registries.ts#registries', sources: ['machine.registries', 'RegistryMirrorConfig', 'RegistryAuthConfig', 'RegistryTLSConfig'] },
];

/**
 * Views that read settings' resolvers rather than the configuration (so they add no precedence
 * of their own): `<file>#<function>` → the settings they read.
 */
export const VIEWS: Readonly<Record<string, readonly string[]>> = {
  'time.ts#timeSync': ['time sync'],
  'time.ts#timeServers': ['time sync'],
  'network.ts#network': ['hostname', 'resolvers', '/etc/hosts entries', 'links'],
};
