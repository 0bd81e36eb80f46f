// Valid machine configurations ($CRT / $KEY filled in by the test, as in invalid-cases.ts).
import { config, worker } from './invalid-cases.ts';

export interface ValidCase {
  name: string;
  yaml: string;
}

/** Every field Bronze implements, set. */
export const ALL_FIELDS = `# every field Bronze implements
version: v1alpha1
debug: false
persist: true
machine:
  type: controlplane
  token: abcdef.0123456789abcdef
  ca:
    crt: $CRT
    key: $KEY
  certSANs:
    - 10.0.0.10
    - node-1.example.org
  network:
    hostname: node-1
    interfaces:
      - interface: eth0
        addresses:
          - 192.168.1.10/24
          - fd00::10/64
          - 192.168.1.11
        routes:
          - network: 0.0.0.0/0
            gateway: 192.168.1.1
            metric: 1024
          - network: 10.0.0.0/8
            gateway: 192.168.1.254
            source: 192.168.1.10
            mtu: 1400
          - network: ::/0
            gateway: fe80::1
          - gateway: 192.168.1.1
        dhcp: true
        dhcpOptions:
          routeMetric: 1024
          ipv4: true
          ipv6: false
        mtu: 1500
        vlans:
          - vlanId: 100
            addresses: [10.100.0.2/24]
            routes:
              - network: 10.200.0.0/16
                gateway: 10.100.0.1
            dhcp: false
            mtu: 1400
          - vlanId: 200
            dhcp: true
            dhcpOptions:
              routeMetric: 2048
      - deviceSelector:
          hardwareAddr: "*:f0:ab"
          driver: virtio_net
          physical: true
        dhcp: true
      - deviceSelector:
          - busPath: "00:*"
          - pciID: "1af4:*"
            permanentAddr: "52:54:00:*"
        dhcp: true
      - interface: eth9
        ignore: true
    nameservers: [1.1.1.1, 2606:4700:4700::1111]
    searchDomains: [example.org, corp.example.org.]
    disableSearchDomain: false
    extraHostEntries:
      - ip: 192.168.1.100
        aliases: [db, db.example.org]
  install:
    disk: /dev/vda
    image: ghcr.io/bronze/installer:v0.1.0
    wipe: false
    extraKernelArgs: [console=ttyS0, panic=10]
  time:
    disabled: false
    servers: [time.cloudflare.com, 192.168.1.1, /dev/ptp0]
    bootTimeout: 2m30s
  sysctls:
    net.ipv4.ip_forward: "1"
    net/ipv6/conf/eth0.100/disable_ipv6: "1"
    kernel.domainname: bronze.example
  sysfs:
    devices.system.cpu.cpu0.cpufreq.scaling_governor: performance
  files:
    - content: |
        hello
      permissions: 0o644
      path: /var/etc/hello.txt
      op: create
    - content: more
      path: /var/etc/other.conf
      op: append
  env:
    https_proxy: http://proxy.example:3128
    NO_PROXY: localhost,10.0.0.0/8
    GRPC_GO_LOG_VERBOSITY_LEVEL: "99"
  features:
    rbac: true
    stableHostname: false
    apidCheckExtKeyUsage: true
cluster:
  id: 0kJcDQ2jVG3MWvY8OZ0lUyq0gjNx8bGNUFo9Fd1SmwI=
  secret: 6cJ7B3b4H3qcaMJw1RU1mz0Fe7JEMpYQxZ5A8Vd4pHs=
  clusterName: demo
  controlPlane:
    endpoint: https://10.0.0.1:6443
  token: wlzjyw.bei2zfylhs2by0wd
  ca:
    crt: $CRT
    key: $KEY
  etcd:
    image: gcr.io/etcd-development/etcd:v3.5.21
    ca:
      crt: $CRT
      key: $KEY
    extraArgs:
      election-timeout: "5000"
    advertisedSubnets: [10.0.0.0/8, "!10.0.0.3/32"]
    listenSubnets: [0.0.0.0/0]
  discovery:
    enabled: true
    registries:
      kubernetes:
        disabled: true
      service:
        endpoint: https://discovery.talos.dev/
`;

/** The v1alpha1 document and one of each typed document. */
export const MULTI_DOC = `${config({ machine: 'network:\n  interfaces:\n    - interface: eth1\n      dhcp: true' })}---
apiVersion: v1alpha1
kind: HostnameConfig
auto: stable
---
apiVersion: v1alpha1
kind: ResolverConfig
nameservers:
  - address: 1.1.1.1
  - address: ff08::1
searchDomains:
  domains: [example.com]
  disableDefault: true
---
apiVersion: v1alpha1
kind: TimeSyncConfig
enabled: true
bootTimeout: 30s
ntp:
  servers: [pool.ntp.org]
---
apiVersion: v1alpha1
kind: LinkConfig
name: eth0
up: true
mtu: 9000
multicast: false
addresses:
  - address: 192.168.1.100/24
    routePriority: 100
  - address: fd00::1/64
routes:
  - destination: 10.0.0.0/8
    gateway: 192.168.1.1
    metric: 10
  - gateway: fe80::1
---
apiVersion: v1alpha1
kind: LinkConfig
name: eth1
mtu: 1500
---
apiVersion: v1alpha1
kind: DHCPv4Config
name: eth1
routeMetric: 1024
ignoreHostname: true
clientIdentifier: duid
duidRaw: 00:01:00:01:23:45:67:89:ab:cd:ef:01:23:45
`;

export const VALID_CASES: ValidCase[] = [
  { name: 'minimal controlplane', yaml: config() },
  { name: 'minimal worker (empty CA key, as gen config writes it)', yaml: worker() },
  { name: 'worker without the CA key field', yaml: worker().replace("    key: ''\n", '') },
  { name: 'every Bronze field', yaml: ALL_FIELDS },
  { name: 'multi-document stream', yaml: MULTI_DOC },
  {
    name: 'Talos YAML habits: octal 0644, yes/no booleans, scalar sysctl values, empty and null values, empty documents',
    yaml: `---\n${config({
      machine: 'network:\n  hostname:\n  interfaces:\n    - interface: eth0\n      dhcp: yes\nsysctls:\n  vm.swappiness: 10\n  net.ipv4.ip_forward: true\nfiles:\n  - content: x\n    permissions: 0644\n    path: /var/x\n    op: overwrite\ninstall: {}\ntime: {}',
      top: 'debug: no',
    })}---\n# nothing\n`,
  },
  {
    name: 'HostnameConfig with a static hostname and auto: off',
    yaml: config({ after: '---\napiVersion: v1alpha1\nkind: HostnameConfig\nauto: off\nhostname: node-7.example.org' }),
  },
  {
    name: 'discovery enabled with the service registry disabled needs no cluster id',
    yaml: config({ cluster: 'discovery:\n  enabled: true\n  registries:\n    service:\n      disabled: true' }),
  },
];
