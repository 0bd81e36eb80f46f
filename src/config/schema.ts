// The v1alpha1 machine configuration document, Talos-compatible for the parts Bronze implements:
// zod schemas for the structure and per-field formats, and the TypeScript types inferred from them.
//
// Every object is strict (an unknown field is an error). Field formats (IP, CIDR, hostname, Go
// duration, token, base64 PEM, ...) are checked here, each with a message saying what is wrong and
// what is expected; checks that involve several fields (a controlplane needs the CA key, a route's
// gateway must be of its network's family, ...) are in validate.ts.
//
// YAML details follow Talos (go-yaml v3): `0644` and `0o644` are octal numbers (document.ts), and
// boolean fields also take `yes`/`no`/`on`/`off`. A null value in a mapping means "not set".
import { z } from '../lib/zod.ts';
import {
  bool,
  certificateAndKey,
  checked,
  dnsName,
  ETCD_RESERVED_ARGS,
  fileMode,
  goDuration,
  hostname,
  httpEndpoint,
  httpsEndpoint,
  interfaceName,
  intIn,
  ipAddress,
  ipOrCidr,
  kernelArg,
  keyedMap,
  machineFilePath,
  mtu,
  network,
  nonEmpty,
  noSpaces,
  routeAddress,
  scalarString,
  subnetMatch,
  timeServer,
  token,
  uint32,
} from './fields.ts';
import { absolutePathError, envNameError, sysctlKeyError, sysfsKeyError } from './formats.ts';
import { registrySchemas } from './kinds-registries.ts';

const q = (v: unknown) => JSON.stringify(v);

export const MACHINE_TYPES = ['controlplane', 'worker'] as const;

/** The fields of a deviceSelector (machine.network.interfaces[].deviceSelector), for messages. */
export const DEVICE_SELECTOR_FIELDS = ['busPath', 'hardwareAddr', 'permanentAddr', 'pciID', 'driver', 'physical'] as const;

/** dm-crypt's performance flags, as Talos names them (cryptsetup's --perf-*). */
export const ENCRYPTION_OPTIONS = ['no_read_workqueue', 'no_write_workqueue', 'same_cpu_crypt'] as const;

/** The encryption settings' schemas (also kinds-system.ts's VolumeConfig, machined's encryption.ts), built on first use like the rest. */
function buildEncryption() {
  /** One LUKS2 key: its slot and where the passphrase comes from (kms and tpm are refused in checks.ts). */
  const encryptionKeySchema = z.strictObject({
    slot: intIn(0, 31, 'LUKS2 key slot'),
    static: z.strictObject({ passphrase: nonEmpty('passphrase') }).optional(),
    nodeID: z.strictObject({}).optional(),
    kms: z.unknown().optional(),
    tpm: z.unknown().optional(),
  });

  /** How a system volume is encrypted (machine.systemDiskEncryption.state / .ephemeral). */
  const encryptionSchema = z.strictObject({
    provider: checked((s) => (s === '' || s === 'luks2' ? undefined : `${q(s)} is not an encryption provider Bronze has: expected luks2`)).optional(),
    keys: z.array(encryptionKeySchema),
    cipher: checked((s) =>
      s === '' || s === 'aes-xts-plain64'
        ? undefined
        : s.includes('adiantum')
          ? `${q(s)}: Bronze's kernel has no Adiantum; use aes-xts-plain64`
          : `${q(s)} is not a cipher Bronze has: expected aes-xts-plain64`,
    ).optional(),
    keySize: z
      .number()
      .superRefine((n, ctx) => void (n === 256 || n === 512 || ctx.addIssue({ code: 'custom', message: `${n} is not a key size for aes-xts-plain64: expected 512 (AES-256) or 256 (AES-128) bits` })))
      .optional(),
    blockSize: z
      .number()
      .superRefine((n, ctx) => void (n === 512 || n === 4096 || ctx.addIssue({ code: 'custom', message: `${n} is not an encryption sector size Bronze uses: expected 512 or 4096` })))
      .optional(),
    options: z.array(z.enum(ENCRYPTION_OPTIONS)).optional(),
  });
  return { encryptionKeySchema, encryptionSchema };
}

let encryption: ReturnType<typeof buildEncryption> | undefined;

export function encryptionSchemas(): ReturnType<typeof buildEncryption> {
  return (encryption ??= buildEncryption());
}

// The rest of the document's schemas are built on first use, not when the module loads: zod 4
// does a good deal of work for every schema it constructs, and a maintenance-mode boot validates
// nothing until a configuration is applied. machined's bundle loading from its code cache under
// qemu-x86_64 (TCG), median of 10 interleaved runs: 256 ms of CPU against 276 ms built eagerly.
function build() {

  const routeSchema = z.strictObject({
    network: network().optional(),
    gateway: routeAddress('gateway').optional(),
    source: routeAddress('source address').optional(),
    metric: uint32('route metric').optional(),
    mtu: mtu().optional(),
  });

  const dhcpOptionsSchema = z.strictObject({
    routeMetric: uint32('route metric').optional(),
    ipv4: bool().optional(),
    ipv6: bool().optional(),
  });

  const deviceSelectorSchema = z.strictObject({
    busPath: nonEmpty('busPath').optional(),
    hardwareAddr: nonEmpty('hardwareAddr').optional(),
    permanentAddr: nonEmpty('permanentAddr').optional(),
    pciID: nonEmpty('pciID').optional(),
    driver: nonEmpty('driver').optional(),
    physical: bool().optional(),
  });

  const vlanSchema = z.strictObject({
    vlanId: intIn(1, 4094, 'VLAN ID'),
    addresses: z.array(ipOrCidr()).optional(),
    routes: z.array(routeSchema).optional(),
    dhcp: bool().optional(),
    dhcpOptions: dhcpOptionsSchema.optional(),
    mtu: mtu().optional(),
  });

  const deviceSchema = z.strictObject({
    interface: interfaceName().optional(),
    /** One selector, or a list (a device matching any of them). */
    deviceSelector: z.union([deviceSelectorSchema, z.array(deviceSelectorSchema).min(1)]).optional(),
    addresses: z.array(ipOrCidr()).optional(),
    routes: z.array(routeSchema).optional(),
    vlans: z.array(vlanSchema).optional(),
    mtu: mtu().optional(),
    dhcp: bool().optional(),
    dhcpOptions: dhcpOptionsSchema.optional(),
    ignore: bool().optional(),
  });

  const extraHostSchema = z.strictObject({
    ip: ipAddress(),
    aliases: z.array(dnsName('host alias')).min(1),
  });

  const networkSchema = z.strictObject({
    hostname: hostname().optional(),
    interfaces: z.array(deviceSchema).optional(),
    nameservers: z.array(ipAddress()).optional(),
    searchDomains: z.array(dnsName('search domain')).optional(),
    disableSearchDomain: bool().optional(),
    extraHostEntries: z.array(extraHostSchema).optional(),
  });

  const installSchema = z.strictObject({
    disk: checked((s) => (s.startsWith('/') && !absolutePathError(s) ? undefined : `${q(s)} is not an absolute device path: expected e.g. /dev/sda or /dev/disk/by-id/...`)).optional(),
    image: noSpaces('install image').optional(),
    wipe: bool().optional(),
    extraKernelArgs: z.array(kernelArg()).optional(),
  });

  const timeSchema = z.strictObject({
    disabled: bool().optional(),
    servers: z.array(timeServer()).optional(),
    bootTimeout: goDuration().optional(),
  });

  const machineFileSchema = z.strictObject({
    content: z.string(),
    permissions: fileMode().optional(),
    path: machineFilePath(),
    op: z.enum(['create', 'append', 'overwrite']),
  });

  const featuresSchema = z.strictObject({
    rbac: bool().optional(),
    stableHostname: bool().optional(),
    apidCheckExtKeyUsage: bool().optional(),
  });

  const systemDiskEncryptionSchema = z.strictObject({
    state: encryptionSchemas().encryptionSchema.optional(),
    ephemeral: encryptionSchemas().encryptionSchema.optional(),
  });

  const machineSchema = z.strictObject({
    type: z.enum(MACHINE_TYPES),
    token: token('machine token'),
    ca: certificateAndKey(),
    certSANs: z.array(noSpaces('certificate SAN')).optional(),
    network: networkSchema.optional(),
    install: installSchema.optional(),
    systemDiskEncryption: systemDiskEncryptionSchema.optional(),
    time: timeSchema.optional(),
    sysctls: keyedMap(scalarString(), sysctlKeyError, 'sysctl key').optional(),
    sysfs: keyedMap(scalarString(), sysfsKeyError, 'sysfs key').optional(),
    files: z.array(machineFileSchema).optional(),
    env: keyedMap(scalarString(), envNameError, 'environment variable name').optional(),
    features: featuresSchema.optional(),
    registries: registrySchemas().registriesSchema.optional(),
  });

  const etcdSchema = z.strictObject({
    image: noSpaces('etcd image').optional(),
    ca: certificateAndKey().optional(),
    extraArgs: keyedMap(
      scalarString(),
      (k) => ((ETCD_RESERVED_ARGS as readonly string[]).includes(k) ? `Bronze sets --${k} itself; it cannot be overridden` : /^[a-z0-9][a-z0-9-]*$/.test(k) ? undefined : 'expected an etcd flag name without dashes, e.g. election-timeout'),
      'etcd argument',
    ).optional(),
    advertisedSubnets: z.array(subnetMatch()).optional(),
    listenSubnets: z.array(subnetMatch()).optional(),
  });

  const discoverySchema = z.strictObject({
    enabled: bool().optional(),
    registries: z
      .strictObject({
        kubernetes: z.strictObject({ disabled: bool().optional() }).optional(),
        service: z.strictObject({ disabled: bool().optional(), endpoint: httpEndpoint().optional() }).optional(),
      })
      .optional(),
  });

  const clusterSchema = z.strictObject({
    id: nonEmpty('cluster.id').optional(),
    secret: nonEmpty('cluster.secret').optional(),
    clusterName: checked((s) => (s.trim() === '' ? 'the cluster name must not be empty' : /[\s\p{Cc}]/u.test(s) ? `${q(s)} is not a valid cluster name: it must not contain white space or control characters` : undefined)).optional(),
    controlPlane: z.strictObject({ endpoint: httpsEndpoint() }).optional(),
    token: token('bootstrap token').optional(),
    ca: certificateAndKey().optional(),
    etcd: etcdSchema.optional(),
    discovery: discoverySchema.optional(),
  });

  const v1alpha1Schema = z.strictObject({
    version: z.literal('v1alpha1'),
    debug: bool().optional(),
    persist: bool().optional(),
    machine: machineSchema,
    cluster: clusterSchema,
  });
  return { routeSchema, dhcpOptionsSchema, deviceSelectorSchema, vlanSchema, deviceSchema, extraHostSchema, networkSchema, installSchema, timeSchema, machineFileSchema, featuresSchema, systemDiskEncryptionSchema, machineSchema, etcdSchema, discoverySchema, clusterSchema, v1alpha1Schema };
}

type Schemas = ReturnType<typeof build>;
let built: Schemas | undefined;

/** The v1alpha1 document's schemas (built once, on the first call). */
export function v1alpha1Schemas(): Schemas {
  return (built ??= build());
}

export type V1Alpha1Config = z.output<Schemas['v1alpha1Schema']>;
export type MachineConfig = V1Alpha1Config['machine'];
export type ClusterConfig = V1Alpha1Config['cluster'];
export type MachineType = MachineConfig['type'];
export type NetworkConfig = z.output<Schemas['networkSchema']>;
export type NetworkDevice = z.output<Schemas['deviceSchema']>;
export type DeviceSelector = z.output<Schemas['deviceSelectorSchema']>;
export type Vlan = z.output<Schemas['vlanSchema']>;
export type Route = z.output<Schemas['routeSchema']>;
export type DHCPOptions = z.output<Schemas['dhcpOptionsSchema']>;
export type ExtraHost = z.output<Schemas['extraHostSchema']>;
export type InstallConfig = z.output<Schemas['installSchema']>;
export type EncryptionConfig = z.output<ReturnType<typeof buildEncryption>['encryptionSchema']>;
export type SystemDiskEncryptionConfig = z.output<Schemas['systemDiskEncryptionSchema']>;
export type TimeConfig = z.output<Schemas['timeSchema']>;
export type MachineFile = z.output<Schemas['machineFileSchema']>;
export type FeaturesConfig = z.output<Schemas['featuresSchema']>;
export type EtcdConfig = z.output<Schemas['etcdSchema']>;
export type DiscoveryConfig = z.output<Schemas['discoverySchema']>;
