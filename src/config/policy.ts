// What Bronze does with the parts of a Talos configuration it does not implement, as one table.
//
//   ignore  accepted with a warning naming the field: it configures something Bronze does not run
//           (Kubernetes above all), so leaving it out changes nothing on a Bronze node;
//   keep    accepted with a warning saying it is kept for later (stored, not acted on yet);
//   refuse  refused as "not implemented": silently going without it would be dangerous (it
//           promises protection or data placement Bronze cannot honour) or would leave the node
//           configured differently from what the file says.
//
// A field rule names a document ("v1alpha1" or a kind) and a path in it ("[]" for any list item);
// `accept` is a value that matches Bronze's fixed behaviour and is taken silently (`bootloader:
// true`: Bronze always installs GRUB). A kind rule covers whole documents of a kind Bronze does
// not implement. Fields and kinds in neither this table nor the schemas are unknown (a typo).
// Every rule carries a sample value; policy.test.ts checks that each behaves as listed.

export type PolicyAction = 'ignore' | 'keep' | 'refuse';

export interface FieldRule {
  /** `v1alpha1`, or the kind of a typed document Bronze implements. */
  readonly doc: string;
  /** Dotted path in that document; `[]` stands for any list item. */
  readonly path: string;
  readonly action: PolicyAction;
  readonly reason: string;
  /** A value taken without a word (it is what Bronze does anyway). */
  readonly accept?: unknown;
  /** A value Talos accepts there, for the test of this rule. */
  readonly sample: unknown;
}

export interface KindRule {
  readonly kind: string;
  readonly action: PolicyAction;
  readonly reason: string;
}

const K8S = 'Bronze runs no Kubernetes';
const CRI = "Bronze runs no Kubernetes CRI: its containerd runs ContainerConfig workloads only";

/** Why overridePath is refused: here for RegistryMirrorConfig, in kinds-registries.ts checkRegistries for machine.registries. */
export const OVERRIDE_PATH_REASON = "the image puller always adds /v2/ to a mirror's URL; an endpoint used as written (overridePath: true) is not supported yet";

const k8sField = (path: string, sample: unknown = {}): FieldRule => ({ doc: 'v1alpha1', path, action: 'ignore', reason: K8S, sample });
const refuse = (doc: string, path: string, reason: string, sample: unknown = {}): FieldRule => ({ doc, path, action: 'refuse', reason, sample });

export const FIELD_RULES: readonly FieldRule[] = [
  // ---- Kubernetes: ignored ----
  k8sField('machine.controlPlane', { controllerManager: { disabled: false } }),
  k8sField('machine.kubelet', { image: 'ghcr.io/siderolabs/kubelet:v1.33.0', defaultRuntimeSeccompProfileEnabled: true }),
  k8sField('machine.pods', [{ apiVersion: 'v1', kind: 'Pod' }]),
  k8sField('machine.nodeLabels', { 'node.kubernetes.io/exclude-from-external-load-balancers': '' }),
  k8sField('machine.nodeAnnotations', { 'example.com/a': 'b' }),
  k8sField('machine.nodeTaints', { 'example.com/t': 'v:NoSchedule' }),
  k8sField('machine.seccompProfiles', [{ name: 'audit.json', value: { defaultAction: 'SCMP_ACT_LOG' } }]),
  k8sField('machine.features.kubernetesTalosAPIAccess', { enabled: true, allowedRoles: ['os:reader'], allowedKubernetesNamespaces: ['kube-system'] }),
  k8sField('machine.features.kubePrism', { enabled: true, port: 7445 }),
  k8sField('machine.features.diskQuotaSupport', true),
  k8sField('cluster.controlPlane.localAPIServerPort', 6443),
  k8sField('cluster.network', { dnsDomain: 'cluster.local', podSubnets: ['10.244.0.0/16'], serviceSubnets: ['10.96.0.0/12'] }),
  k8sField('cluster.aescbcEncryptionSecret', 'z01mye6j16bspJYtTB/5SFX8j7Ph4JXxM2Xuu4vsBPM='),
  k8sField('cluster.secretboxEncryptionSecret', 'z01mye6j16bspJYtTB/5SFX8j7Ph4JXxM2Xuu4vsBPM='),
  k8sField('cluster.acceptedCAs', [{ crt: 'LS0tLS1CRUdJTg==' }]),
  k8sField('cluster.aggregatorCA', { crt: 'LS0tLS1CRUdJTg==', key: 'LS0tLS1CRUdJTg==' }),
  k8sField('cluster.serviceAccount', { key: 'LS0tLS1CRUdJTg==' }),
  k8sField('cluster.apiServer', { image: 'registry.k8s.io/kube-apiserver:v1.33.0', certSANs: ['10.0.0.1'], disablePodSecurityPolicy: true }),
  k8sField('cluster.controllerManager', { image: 'registry.k8s.io/kube-controller-manager:v1.33.0' }),
  k8sField('cluster.proxy', { image: 'registry.k8s.io/kube-proxy:v1.33.0' }),
  k8sField('cluster.scheduler', { image: 'registry.k8s.io/kube-scheduler:v1.33.0' }),
  k8sField('cluster.coreDNS', { disabled: true }),
  k8sField('cluster.externalCloudProvider', { enabled: true }),
  k8sField('cluster.extraManifests', []),
  k8sField('cluster.extraManifestHeaders', { Token: '1234' }),
  k8sField('cluster.inlineManifests', []),
  k8sField('cluster.adminKubeconfig', { certLifetime: '1h0m0s' }),
  k8sField('cluster.allowSchedulingOnControlPlanes', true),
  k8sField('cluster.allowSchedulingOnMasters', true),
  // ---- no container runtime: ignored ----
  { doc: 'v1alpha1', path: 'machine.baseRuntimeSpecOverrides', action: 'ignore', reason: CRI, sample: { process: { rlimits: [] } } },
  { doc: 'v1alpha1', path: 'machine.features.imageCache', action: 'ignore', reason: CRI, sample: { localEnabled: true } },
  // ---- harmless Talos-only settings: ignored, saying why ----
  {
    doc: 'v1alpha1',
    path: 'machine.features.hostDNS',
    action: 'ignore',
    reason: 'Bronze has no host DNS cache: the node asks its nameservers directly',
    sample: { enabled: true, forwardKubeDNSToHost: true },
  },
  {
    doc: 'ResolverConfig',
    path: 'hostDNS',
    action: 'ignore',
    reason: 'Bronze has no host DNS cache: the node asks its nameservers directly',
    sample: { enabled: true, forwardKubeDNSToHost: true },
  },
  {
    doc: 'v1alpha1',
    path: 'machine.features.nodeAddressSortAlgorithm',
    action: 'ignore',
    reason: 'Bronze does not pick a primary node address for Kubernetes',
    sample: 'v2',
  },
  {
    doc: 'v1alpha1',
    path: 'machine.install.grubUseUKICmdline',
    action: 'ignore',
    reason: 'Bronze boots no UKI: GRUB uses the command line Bronze installs',
    sample: true,
  },
  {
    doc: 'v1alpha1',
    path: 'machine.install.legacyBIOSSupport',
    action: 'ignore',
    reason: 'disks Bronze installs always boot with both BIOS and UEFI',
    sample: true,
  },
  {
    doc: 'v1alpha1',
    path: 'machine.install.bootloader',
    action: 'refuse',
    reason: 'Bronze always installs its GRUB bootloader (bootloader: false cannot be honoured)',
    accept: true,
    sample: false,
  },
  // ---- promises Bronze cannot keep: refused ----
  refuse('v1alpha1', 'machine.disks', 'Bronze mounts no extra disks: its layout is the system disk alone', [{ device: '/dev/sdb', partitions: [{ mountpoint: '/var/mnt/extra' }] }]),
  refuse('v1alpha1', 'machine.network.kubespan', 'KubeSpan (the WireGuard mesh between nodes) would leave traffic unencrypted', { enabled: true }),
  refuse('v1alpha1', 'machine.network.interfaces[].wireguard', 'Bronze creates no WireGuard links; traffic meant for the tunnel would go unencrypted', { privateKey: 'ABCDEF', listenPort: 51111 }),
  refuse('v1alpha1', 'machine.install.diskSelector', 'Bronze installs to machine.install.disk only (give the device path)', { size: '>= 1TB' }),
  refuse('v1alpha1', 'machine.install.extensions', 'Bronze has no system extensions', [{ image: 'ghcr.io/siderolabs/gvisor:20220117.0-v1.0.0' }]),
  refuse('v1alpha1', 'machine.acceptedCAs', 'apid trusts the OS CA of machine.ca alone', [{ crt: 'LS0tLS1CRUdJTg==' }]),
  refuse('v1alpha1', 'machine.udev', 'udevd applies no custom rules', { rules: ['SUBSYSTEM=="drm", GROUP="44"'] }),
  refuse('v1alpha1', 'machine.logging', 'machined sends no logs to remote destinations', { destinations: [{ endpoint: 'udp://127.0.0.1:12345/', format: 'json_lines' }] }),
  refuse('v1alpha1', 'machine.kernel', "Bronze's kernel has no loadable modules", { modules: [{ name: 'brtfs' }] }),
  refuse('v1alpha1', 'machine.network.interfaces[].bond', 'networkd makes bonds from BondConfig documents, not from machine.network', { mode: '802.3ad', interfaces: ['eth0', 'eth1'] }),
  refuse('v1alpha1', 'machine.network.interfaces[].bridge', 'networkd makes bridges from BridgeConfig documents, not from machine.network', { interfaces: ['eth0', 'eth1'] }),
  refuse('v1alpha1', 'machine.network.interfaces[].bridgePort', 'networkd makes bridges from BridgeConfig documents, not from machine.network', { master: 'br0' }),
  refuse('v1alpha1', 'machine.network.interfaces[].vip', 'Bronze announces no shared virtual IP', { ip: '172.16.199.55' }),
  refuse('v1alpha1', 'machine.network.interfaces[].vlans[].vip', 'Bronze announces no shared virtual IP', { ip: '172.16.199.55' }),
  refuse('v1alpha1', 'machine.network.interfaces[].dummy', 'networkd creates no dummy links', true),
  refuse('v1alpha1', 'machine.network.interfaces[].cidr', 'the deprecated "cidr" is not read: list the address in "addresses"', '10.5.0.0/16'),
  refuse('v1alpha1', 'machine.network.interfaces[].vlans[].cidr', 'the deprecated "cidr" is not read: list the address in "addresses"', '10.5.0.0/16'),
  refuse('v1alpha1', 'machine.network.interfaces[].dhcpOptions.duidv6', 'networkd has no DHCPv6 client', '00:01:00:01:23:45:67:89'),
  refuse('v1alpha1', 'cluster.etcd.subnet', 'the deprecated "subnet" is not read: use advertisedSubnets', '10.0.0.0/8'),
  refuse('TimeSyncConfig', 'ptp', 'timed synchronises over NTP only', { devices: ['/dev/ptp0'] }),
  {
    doc: 'TimeSyncConfig',
    path: 'ntp.useNTS',
    action: 'refuse',
    reason: "timed's SNTP client does not authenticate time with NTS; it would take unauthenticated time instead",
    accept: false,
    sample: true,
  },
  refuse('LinkConfig', 'routes[].table', 'networkd writes routes to the main table only', 'main'),
  {
    doc: 'RegistryMirrorConfig',
    path: 'endpoints[].overridePath',
    action: 'refuse',
    reason: OVERRIDE_PATH_REASON,
    accept: false,
    sample: true,
  },
  refuse('ResolverConfig', 'nameservers[].protocol', 'the node resolves over plain DNS only', 'tls'),
  refuse('ResolverConfig', 'nameservers[].tlsServerName', 'the node resolves over plain DNS only', 'dns.example.com'),
  {
    doc: 'VolumeConfig',
    path: 'mount.secure',
    action: 'refuse',
    reason: 'Bronze always mounts EPHEMERAL nosuid and nodev',
    accept: true,
    sample: false,
  },
  refuse('VolumeConfig', 'provisioning', "Bronze's disk layout is fixed: EPHEMERAL fills the rest of the system disk", { maxSize: '50GiB' }),
  {
    doc: 'VolumeConfig',
    path: 'encryption.keys[].lockToState',
    action: 'refuse',
    reason: 'Bronze keeps no salt in STATE to lock a key to; the key would open the volume without it',
    accept: false,
    sample: true,
  },
];

const kind = (name: string, action: PolicyAction, reason: string): KindRule => ({ kind: name, action, reason });

const KUBERNETES_KINDS = [
  'KubeAPIServerCAConfig', 'KubeAPIServerConfig', 'KubeAdmissionControlConfig', 'KubeAggregatorCAConfig', 'KubeAuditPolicyConfig',
  'KubeAuthenticationConfig', 'KubeAuthorizerConfig', 'KubeControllerManagerConfig', 'KubeCoreDNSConfig', 'KubeCredentialProviderConfig',
  'KubeEtcdEncryptionConfig', 'KubeExternalManifestConfig', 'KubeFlannelCNIConfig', 'KubeInlineManifestConfig', 'KubeNetworkConfig',
  'KubeNodeConfig', 'KubePrismConfig', 'KubeProxyConfig', 'KubeSchedulerConfig', 'KubeServiceAccountConfig', 'KubeStaticPodConfig',
  'KubeTalosAPIAccessConfig', 'KubeletConfig',
];

export const KIND_RULES: readonly KindRule[] = [
  ...KUBERNETES_KINDS.map((k) => kind(k, 'ignore', K8S)),
  ...['CRIBaseRuntimeSpecConfig', 'CRICustomizationConfig', 'ImageCacheConfig'].map((k) => kind(k, 'ignore', CRI)),
  kind('SecurityProfileConfig', 'ignore', 'Bronze runs no Kubernetes CRI plane to isolate (ContainerConfig containers run in namespaces and cgroups of their own)'),
  kind('DiskSMARTConfig', 'ignore', 'Bronze does not monitor SMART health'),
  kind('TrustedRootsConfig', 'keep', 'the extra trusted roots are stored; Bronze does not add them to its trust store yet'),
  kind('WatchdogTimerConfig', 'keep', 'machined does not drive a hardware watchdog yet'),
  kind('KmsgLogConfig', 'keep', 'machined does not send kernel logs to remote endpoints yet'),
  kind('EventSinkConfig', 'keep', 'machined does not send events to a sink yet'),
  kind('EthernetConfig', 'keep', 'networkd does not change ethtool settings (rings, features, channels) yet'),
  kind('LinkAliasConfig', 'keep', 'networkd does not evaluate CEL link selectors yet: the alias is stored, not given'),
  // Protection or data placement Bronze cannot honour.
  kind('NetworkRuleConfig', 'refuse', 'Bronze has no firewall; refusing is safer than leaving the ports open'),
  kind('NetworkDefaultActionConfig', 'refuse', 'Bronze has no firewall; refusing is safer than leaving the ports open'),
  kind('NetworkNATRuleConfig', 'refuse', 'Bronze has no firewall or NAT'),
  kind('KubeSpanConfig', 'refuse', 'KubeSpan (the WireGuard mesh between nodes) would leave traffic unencrypted'),
  kind('KubeSpanEndpointsConfig', 'refuse', 'KubeSpan (the WireGuard mesh between nodes) would leave traffic unencrypted'),
  kind('WireguardConfig', 'refuse', 'Bronze creates no WireGuard links; traffic meant for the tunnel would go unencrypted'),
  kind('ImageVerificationConfig', 'refuse', 'Bronze does not verify image signatures; refusing is safer than promising verification'),
  kind('SideroLinkConfig', 'refuse', 'Bronze has no SideroLink tunnel'),
  kind('UserVolumeConfig', 'refuse', "Bronze's disk layout is fixed: it makes no user volumes"),
  kind('RawVolumeConfig', 'refuse', "Bronze's disk layout is fixed: it makes no raw volumes"),
  kind('ExistingVolumeConfig', 'refuse', 'Bronze mounts no volumes besides STATE and EPHEMERAL'),
  kind('ExternalVolumeConfig', 'refuse', 'Bronze mounts no volumes besides STATE and EPHEMERAL'),
  kind('SwapVolumeConfig', 'refuse', "Bronze's disk layout is fixed: it makes no swap"),
  kind('ZswapConfig', 'refuse', 'Bronze has no swap to compress'),
  kind('LVMVolumeGroupConfig', 'refuse', "Bronze's disk layout is fixed: it makes no LVM volumes"),
  kind('LVMLogicalVolumeConfig', 'refuse', "Bronze's disk layout is fixed: it makes no LVM volumes"),
  kind('RAIDArrayConfig', 'refuse', "Bronze's disk layout is fixed: it assembles no RAID arrays"),
  // Other Talos features Bronze does not have.
  ...[
    'DHCPv6Config', 'DummyLinkConfig', 'HCloudVIPConfig', 'Layer2VIPConfig', 'VLANConfig', 'BlackholeRouteConfig', 'RoutingRuleConfig',
    'TCPProbeConfig', 'HTTPProbeConfig', 'VRFConfig', 'VethConfig', 'MacVLANConfig', 'VXLANConfig', 'BGPConfig', 'BGPInstanceConfig',
    'BGPPeerConfig',
  ].map((k) => kind(k, 'refuse', 'networkd does not make this kind of link or route')),
  ...['OOMConfig', 'PCIDriverRebindConfig', 'UdevRulesConfig', 'KernelModuleConfig', 'EtcFileConfig', 'SysfsConfig', 'FilesystemScrubConfig'].map((k) =>
    kind(k, 'refuse', 'Bronze does not have this feature'),
  ),
  ...['ExtensionServiceConfig', 'VirtualMachineConfig', 'ContentLibraryConfig'].map((k) => kind(k, 'refuse', 'Bronze runs no extension services or virtual machines')),
];

export function kindRule(kindName: string): KindRule | undefined {
  return KIND_RULES.find((r) => r.kind === kindName);
}

/** The warning or error text of a rule. */
export function ruleMessage(action: PolicyAction, reason: string): string {
  switch (action) {
    case 'ignore':
      return `ignored: ${reason}`;
    case 'keep':
      return `accepted and kept for later: ${reason}`;
    case 'refuse':
      return `not implemented in Bronze: ${reason}`;
  }
}
