// Patches shaped like the ones Talos users apply (Talos's documentation and common cluster
// templates), written for Bronze's tests: strategic merge, RFC 6902, multi-document deletes and
// typed documents. Each says what Bronze must make of the patched configuration: valid (with the
// warnings listed, as `path: kind`), or refused at a path as invalid or unsupported.

export interface TalosPatch {
  name: string;
  /** The patch as `bronzectl mc patch -p` / `gen config --config-patch` take it. */
  patch: string;
  /** The Talos minor versions whose generated config it applies to (inclusive); default all. */
  versions?: { min?: number; max?: number };
  /** Valid, with these warnings beyond the config's own. */
  warnings?: string[];
  /** Refused: the path and the kind of the refusal. */
  refused?: { path: string; kind: 'invalid' | 'unsupported' | 'missing' };
}

export const TALOS_PATCHES: TalosPatch[] = [
  // ---- strategic merge: what Bronze implements ----
  { name: 'static hostname', patch: 'machine:\n  network:\n    hostname: cp-1', versions: { max: 11 } },
  { name: 'static hostname (HostnameConfig, v1.12+ configs)', patch: 'apiVersion: v1alpha1\nkind: HostnameConfig\nauto: off\nhostname: cp-1', versions: { min: 12 } },
  {
    name: 'static address, default route and nameservers on eth0',
    patch: 'machine:\n  network:\n    interfaces:\n      - interface: eth0\n        addresses: [192.168.122.10/24]\n        routes:\n          - network: 0.0.0.0/0\n            gateway: 192.168.122.1\n    nameservers: [1.1.1.1, 8.8.8.8]',
  },
  { name: 'DHCP on the first virtio NIC (deviceSelector)', patch: 'machine:\n  network:\n    interfaces:\n      - deviceSelector:\n          driver: virtio_net\n        dhcp: true' },
  { name: 'VLAN on eth0', patch: 'machine:\n  network:\n    interfaces:\n      - interface: eth0\n        dhcp: true\n        vlans:\n          - vlanId: 100\n            addresses: [10.100.0.2/24]' },
  { name: 'time servers', patch: 'machine:\n  time:\n    servers: [time.cloudflare.com]' },
  { name: 'etcd extra args', patch: 'cluster:\n  etcd:\n    extraArgs:\n      election-timeout: "5000"' },
  { name: 'install disk and wipe', patch: 'machine:\n  install:\n    disk: /dev/nvme0n1\n    wipe: true', versions: { max: 14 } },
  { name: 'extra kernel arguments', patch: 'machine:\n  install:\n    extraKernelArgs: [console=ttyS0, net.ifnames=0]', versions: { max: 14 } },
  { name: 'sysctls', patch: 'machine:\n  sysctls:\n    vm.max_map_count: "262144"\n    net.core.somaxconn: 65535' },
  { name: 'a file under /var', patch: 'machine:\n  files:\n    - content: |\n        hello\n      permissions: 0o644\n      path: /var/etc/motd\n      op: create' },
  { name: 'proxy environment', patch: 'machine:\n  env:\n    https_proxy: http://proxy.example:3128\n    no_proxy: localhost,10.0.0.0/8' },
  { name: 'extra certificate SANs', patch: 'machine:\n  certSANs: [cp.example.org, 192.168.122.100]' },
  { name: 'etcd advertised subnets', patch: 'cluster:\n  etcd:\n    advertisedSubnets: [192.168.122.0/24]' },
  {
    name: 'YAML merge keys in a patch (two NICs sharing settings)',
    patch: 'machine:\n  network:\n    interfaces:\n      - &nic\n        interface: eth1\n        dhcp: true\n        mtu: 1500\n      - <<: *nic\n        interface: eth2',
  },
  // ---- strategic merge: Kubernetes, ignored with a warning ----
  { name: 'allow scheduling on control planes', patch: 'cluster:\n  allowSchedulingOnControlPlanes: true', warnings: ['cluster.allowSchedulingOnControlPlanes: ignored'] },
  { name: 'no CNI (cluster.network.cni: none)', patch: 'cluster:\n  network:\n    cni:\n      name: none', warnings: ['cluster.network: ignored'] },
  { name: 'disable kube-proxy', patch: 'cluster:\n  proxy:\n    disabled: true', warnings: ['cluster.proxy: ignored'] },
  { name: 'kubelet extra args and node IP', patch: 'machine:\n  kubelet:\n    extraArgs:\n      rotate-server-certificates: true\n    nodeIP:\n      validSubnets: [192.168.122.0/24]', warnings: ['machine.kubelet: ignored'] },
  { name: 'node labels', patch: 'machine:\n  nodeLabels:\n    topology.kubernetes.io/zone: a', warnings: ['machine.nodeLabels: ignored'] },
  { name: 'containerd customisation file', patch: 'machine:\n  files:\n    - op: create\n      path: /etc/cri/conf.d/20-customization.part\n      content: |\n        [plugins."io.containerd.cri.v1.images"]\n          discard_unpacked_layers = false', warnings: ['machine.files[0].path: ignored'] },
  { name: 'registry mirror', patch: 'machine:\n  registries:\n    mirrors:\n      docker.io:\n        endpoints: [https://mirror.example]' },
  { name: 'disable KubePrism', patch: 'machine:\n  features:\n    kubePrism:\n      enabled: false' },
  { name: 'inline manifest', patch: 'cluster:\n  inlineManifests:\n    - name: ns\n      contents: |\n        apiVersion: v1\n        kind: Namespace\n        metadata:\n          name: demo', warnings: ['cluster.inlineManifests: ignored'] },
  // ---- RFC 6902 ----
  { name: 'RFC 6902: set the hostname', patch: '- op: add\n  path: /machine/network/hostname\n  value: cp-2', versions: { max: 11 } },
  { name: 'RFC 6902: replace the install disk', patch: '- op: replace\n  path: /machine/install/disk\n  value: /dev/vdb', versions: { max: 11 } },
  { name: 'RFC 6902: remove the admission control', patch: '- op: remove\n  path: /cluster/apiServer/admissionControl', versions: { max: 11 }, warnings: [] },
  // ---- multi-document deletes ----
  { name: 'delete KubeFlannelCNIConfig and set no CNI', patch: 'apiVersion: v1alpha1\nkind: KubeFlannelCNIConfig\n$patch: delete\n---\ncluster:\n  network:\n    cni:\n      name: none', warnings: ['cluster.network: ignored'] },
  { name: 'delete KubeProxyConfig', patch: 'apiVersion: v1alpha1\nkind: KubeProxyConfig\n$patch: delete', versions: { min: 14 } },
  { name: 'delete the SecurityProfileConfig', patch: 'apiVersion: v1alpha1\nkind: SecurityProfileConfig\n$patch: delete', versions: { min: 14 } },
  // ---- typed documents ----
  { name: 'ResolverConfig nameservers', patch: 'apiVersion: v1alpha1\nkind: ResolverConfig\nnameservers:\n  - address: 9.9.9.9' },
  { name: 'TimeSyncConfig servers', patch: 'apiVersion: v1alpha1\nkind: TimeSyncConfig\nntp:\n  servers: [time.cloudflare.com]' },
  { name: 'LinkConfig static address', patch: 'apiVersion: v1alpha1\nkind: LinkConfig\nname: eth1\naddresses:\n  - address: 10.10.0.5/24\nroutes:\n  - destination: 10.20.0.0/16\n    gateway: 10.10.0.1' },
  { name: 'DHCPv4Config without routes', patch: 'apiVersion: v1alpha1\nkind: DHCPv4Config\nname: eth1\nignoreRoutes: true\nrouteMetric: 2048' },
  {
    name: 'BondConfig (802.3ad over two NICs, static address)',
    patch: 'apiVersion: v1alpha1\nkind: BondConfig\nname: bond0\nlinks: [eth1, eth2]\nbondMode: 802.3ad\nmiimon: 100\nxmitHashPolicy: layer3+4\nlacpRate: fast\naddresses:\n  - address: 10.15.0.3/16\nroutes:\n  - destination: 10.0.0.0/8\n    gateway: 10.15.0.1',
  },
  { name: 'BridgeConfig with STP, and DHCP on it', patch: 'apiVersion: v1alpha1\nkind: BridgeConfig\nname: br0\nlinks: [eth3]\nstp:\n  enabled: true\n---\napiVersion: v1alpha1\nkind: DHCPv4Config\nname: br0' },
  { name: 'BondConfig with a member twice', patch: 'apiVersion: v1alpha1\nkind: BondConfig\nname: bond1\nlinks: [eth4, eth4]\nbondMode: active-backup', refused: { path: 'BondConfig(bond1).links[1]', kind: 'invalid' } },
  { name: 'SysctlConfig', patch: 'apiVersion: v1alpha1\nkind: SysctlConfig\nparams:\n  fs.inotify.max_user_watches: "12288"\n  net/ipv6/conf/eth0.100/disable_ipv6: "1"' },
  { name: 'SysctlConfig with a key outside /proc/sys', patch: 'apiVersion: v1alpha1\nkind: SysctlConfig\nparams:\n  foo.bar: "1"', refused: { path: 'SysctlConfig.params["foo.bar"]', kind: 'invalid' } },
  { name: 'EnvironmentConfig', patch: 'apiVersion: v1alpha1\nkind: EnvironmentConfig\nvariables:\n  https_proxy: http://proxy.example:3128' },
  { name: 'StaticHostConfig', patch: 'apiVersion: v1alpha1\nkind: StaticHostConfig\nname: 10.5.0.2\nhostnames: [registry.lan]' },
  { name: 'FilesystemTrimConfig daily', patch: 'apiVersion: v1alpha1\nkind: FilesystemTrimConfig\ninterval: 24h' },
  {
    name: 'system disk encryption (nodeID and static keys)',
    patch: 'machine:\n  systemDiskEncryption:\n    ephemeral:\n      provider: luks2\n      keys:\n        - nodeID: {}\n          slot: 0\n    state:\n      provider: luks2\n      options: [no_read_workqueue]\n      keys:\n        - static:\n            passphrase: change-me\n          slot: 1',
  },
  {
    name: 'EPHEMERAL and STATE encrypted (VolumeConfig, v1.10+ configs)',
    patch: 'apiVersion: v1alpha1\nkind: VolumeConfig\nname: EPHEMERAL\nencryption:\n  provider: luks2\n  keys:\n    - nodeID: {}\n      slot: 0\n---\napiVersion: v1alpha1\nkind: VolumeConfig\nname: STATE\nencryption:\n  provider: luks2\n  keys:\n    - nodeID: {}\n      slot: 0',
    versions: { min: 10 },
  },
  { name: 'EPHEMERAL without access times', patch: 'apiVersion: v1alpha1\nkind: VolumeConfig\nname: EPHEMERAL\nmount:\n  disableAccessTime: true' },
  // ---- refused: promises Bronze cannot keep ----
  { name: 'system disk encryption: KMS key', patch: 'machine:\n  systemDiskEncryption:\n    state:\n      provider: luks2\n      keys:\n        - kms:\n            endpoint: https://kms.example:4050\n          slot: 0', refused: { path: 'machine.systemDiskEncryption.state.keys[0].kms', kind: 'unsupported' } },
  { name: 'KubeSpan', patch: 'apiVersion: v1alpha1\nkind: KubeSpanConfig\nenabled: true', refused: { path: 'KubeSpanConfig', kind: 'unsupported' } },
  { name: 'firewall: ingress rule', patch: 'apiVersion: v1alpha1\nkind: NetworkRuleConfig\nname: kubelet-ingress\nportSelector:\n  ports: [10250]\n  protocol: tcp\ningress:\n  - subnet: 10.0.0.0/8', refused: { path: 'NetworkRuleConfig(kubelet-ingress)', kind: 'unsupported' } },
  { name: 'user volume', patch: 'apiVersion: v1alpha1\nkind: UserVolumeConfig\nname: data\nprovisioning:\n  diskSelector:\n    match: disk.transport == "nvme"', refused: { path: 'UserVolumeConfig(data)', kind: 'unsupported' } },
  { name: 'EPHEMERAL size', patch: 'apiVersion: v1alpha1\nkind: VolumeConfig\nname: EPHEMERAL\nprovisioning:\n  maxSize: 50GiB', refused: { path: 'VolumeConfig(EPHEMERAL).provisioning', kind: 'unsupported' } },
  { name: 'shared VIP on eth0', patch: 'machine:\n  network:\n    interfaces:\n      - interface: eth0\n        dhcp: true\n        vip:\n          ip: 192.168.122.100', refused: { path: 'machine.network.interfaces[0].vip', kind: 'unsupported' } },
];
